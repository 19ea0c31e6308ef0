import type { DocState, PendingFile } from '../../db/repos/content.ts';
import type { ExtractReply, ExtractRequest } from './extract-worker.ts';
import type { WriterReply, WriterRequest } from './index-writer.ts';
import { startWorker } from './workers.ts';

/** The text as the index stores it (text.ts indexedText), or why there is none. */
export type Extraction = { text: string } | { failed: string };

/**
 * Runs extraction in one worker thread, a document at a time. A document that takes longer than
 * `timeoutMs` (a PDF that loops) gets its worker terminated, which also frees whatever it allocated;
 * the next document starts a fresh one.
 */
export class Extractor {
  private worker: Worker | null = null;
  private nextId = 1;

  constructor(private readonly opts: { timeoutMs: number; maxTextBytes: number }) {}

  private spawn(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker('extract-worker');
    // A worker that died between documents is replaced for the next one rather than waited on.
    worker.addEventListener('close', () => {
      if (this.worker === worker) this.worker = null;
    });
    this.worker = worker;
    return worker;
  }

  extract(name: string, bytes: Uint8Array): Promise<Extraction> {
    const worker = this.spawn();
    const id = this.nextId++;
    return new Promise((resolve) => {
      const done = (result: Extraction, kill: boolean) => {
        clearTimeout(timer);
        worker.removeEventListener('message', onMessage);
        worker.removeEventListener('error', onError);
        if (kill) this.kill();
        resolve(result);
      };
      const onMessage = (event: MessageEvent<ExtractReply>) => {
        if (event.data.id !== id) return;
        done('text' in event.data ? { text: event.data.text } : { failed: event.data.error }, false);
      };
      const onError = (event: ErrorEvent) => done({ failed: `extraction worker failed: ${event.message}` }, true);
      const timer = setTimeout(() => done({ failed: `extraction took longer than ${this.opts.timeoutMs} ms` }, true), this.opts.timeoutMs);
      worker.addEventListener('message', onMessage);
      worker.addEventListener('error', onError);
      worker.postMessage({ id, name, bytes, maxTextBytes: this.opts.maxTextBytes } satisfies ExtractRequest, {
        transfer: [bytes.buffer as ArrayBuffer],
      });
    });
  }

  kill(): void {
    this.worker?.terminate();
    this.worker = null;
  }
}

/** The index writer thread (index-writer.ts): one request at a time, in order. */
export class IndexWriter {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: WriterReply) => void>();

  constructor(private readonly database: string) {}

  private call(request: WriterRequest): Promise<WriterReply> {
    if (!this.worker) {
      const worker = startWorker('index-writer');
      worker.onmessage = (event: MessageEvent<WriterReply>) => {
        this.waiting.get(event.data.id)?.(event.data);
        this.waiting.delete(event.data.id);
      };
      this.worker = worker;
      worker.postMessage({ kind: 'open', id: this.nextId++, database: this.database } satisfies WriterRequest);
    }
    const worker = this.worker;
    return new Promise((resolve) => {
      this.waiting.set(request.id, resolve);
      worker.postMessage(request);
    });
  }

  /** ContentRepo.record on the writer's connection: true when the text was stored. */
  async record(file: PendingFile, state: DocState, text: string, at: number): Promise<boolean> {
    const reply = await this.call({ kind: 'record', id: this.nextId++, file, state, text, at });
    if ('error' in reply) throw new Error(reply.error);
    return reply.recorded;
  }

  async close(): Promise<void> {
    if (!this.worker) return;
    await this.call({ kind: 'close', id: this.nextId++ });
    this.worker.terminate();
    this.worker = null;
  }
}
