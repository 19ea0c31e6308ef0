import type { ExtractReply, ExtractRequest } from './extract-worker.ts';

export type Extraction = { text: string } | { failed: string };

// In the executable the worker is its own entry point (scripts/build.ts), stored under its source path as .js.
const WORKER_URL = import.meta.url.includes('/$bunfs/')
  ? '/$bunfs/root/src/services/search/extract-worker.js'
  : new URL('./extract-worker.ts', import.meta.url).href;

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
    // `smol` keeps the worker's heap small; its caps on inputs bound what it holds.
    this.worker ??= new Worker(WORKER_URL, { smol: true });
    return this.worker;
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
