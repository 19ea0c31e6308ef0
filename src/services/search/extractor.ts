import type { BatchTry } from '../../db/repos/attempts.ts';
import type { ExtractReply, ExtractRequest, TextsPort } from './extract-worker.ts';
import type { QueuedDoc, WriterReply, WriterRequest } from './index-writer.ts';
import type { ReaderReply, ReaderRequest } from './snippet-reader.ts';
import type { TextRef, TextSink } from './text-channels.ts';
import { startWorker } from './workers.ts';

/** Where the text as the index stores it (text.ts indexedText, UTF-8) went, or why there is none. */
export type Extraction = { text: TextRef } | { failed: string; overLimit?: true };

// A worker whose heap is larger than this after a document is ended rather than kept idle holding it.
const KEEP_HEAP_BYTES = 64 * 1024 ** 2;
const MEMORY_CHECK_MS = 50;
// A worker with no document for this long is ended: its libraries (pdf.js, fflate) leave the process's memory.
const IDLE_MS = 60_000;

/**
 * Runs extraction in one worker thread, a document at a time. A document that takes longer than
 * `timeoutMs` (a PDF that loops), or while which the process grows by more than `maxMemoryBytes`, gets
 * its worker terminated, which also frees whatever it allocated; so does a document after which the
 * worker's heap stays large. The next document starts a fresh one. Each worker sends its texts to `texts` (the index
 * writer) through a channel of its own, in the order of its documents; only their sizes come back here.
 */
export class Extractor {
  private worker: Worker | null = null;
  /** The current worker's channel to the texts' sink, and its newest document whose text was sent there. */
  private channel = 0;
  private lastText = 0;
  private nextId = 1;
  private running = 0;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly opts: { timeoutMs: number; maxTextBytes: number; maxMemoryBytes: number; idleMs?: number },
    private readonly texts: TextSink,
  ) {}

  private spawn(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker('extract-worker');
    const { port1, port2 } = new MessageChannel();
    this.channel = this.texts.attach(port2);
    this.lastText = 0;
    worker.postMessage({ port: port1 } satisfies TextsPort, { transfer: [port1] });
    // A worker that died between documents is replaced for the next one rather than waited on.
    worker.addEventListener('close', () => {
      if (this.worker === worker) this.letGo();
    });
    this.worker = worker;
    return worker;
  }

  /** Forgets the worker; its channel is closed once the texts sent through it that were answered for are taken. */
  private letGo(): void {
    this.worker = null;
    this.texts.detach(this.channel, this.lastText);
  }

  extract(name: string, bytes: Uint8Array): Promise<Extraction> {
    clearTimeout(this.idleTimer);
    const worker = this.spawn();
    const id = this.nextId++;
    this.running++;
    // Bun's workers take no heap limit (resourceLimits), so the process's growth meanwhile is the measure.
    const baseline = process.memoryUsage.rss();
    return new Promise((resolve) => {
      const done = (result: Extraction, kill: boolean) => {
        clearTimeout(timer);
        clearInterval(watch);
        worker.removeEventListener('message', onMessage);
        worker.removeEventListener('error', onError);
        if (kill) this.kill();
        if (--this.running === 0 && this.worker) {
          this.idleTimer = setTimeout(() => this.kill(), this.opts.idleMs ?? IDLE_MS);
          this.idleTimer.unref();
        }
        resolve(result);
      };
      const onMessage = (event: MessageEvent<ExtractReply>) => {
        const reply = event.data;
        if (reply.id !== id) return;
        if ('textBytes' in reply && reply.textBytes > 0) this.lastText = id;
        const text = { channel: this.channel, job: id, bytes: 'textBytes' in reply ? reply.textBytes : 0 };
        done('textBytes' in reply ? { text } : { failed: reply.error }, reply.heapBytes > KEEP_HEAP_BYTES);
      };
      const onError = (event: ErrorEvent) => done({ failed: `extraction worker failed: ${event.message}` }, true);
      const timer = setTimeout(
        () => done({ failed: `extraction took longer than ${this.opts.timeoutMs} ms`, overLimit: true }, true),
        this.opts.timeoutMs,
      );
      const watch = setInterval(() => {
        if (process.memoryUsage.rss() - baseline > this.opts.maxMemoryBytes) {
          done(
            { failed: `extraction needed more than ${Math.round(this.opts.maxMemoryBytes / 1024 ** 2)} MiB of memory`, overLimit: true },
            true,
          );
        }
      }, MEMORY_CHECK_MS);
      worker.addEventListener('message', onMessage);
      worker.addEventListener('error', onError);
      worker.postMessage({ id, name, bytes, maxTextBytes: this.opts.maxTextBytes } satisfies ExtractRequest, {
        transfer: [bytes.buffer as ArrayBuffer],
      });
    });
  }

  /** Documents handed to this worker and not yet answered. */
  get busy(): number {
    return this.running;
  }

  kill(): void {
    clearTimeout(this.idleTimer);
    const worker = this.worker;
    if (!worker) return;
    this.letGo();
    worker.terminate();
  }
}

/** `size` extraction workers (SEARCH_WORKERS), each with its own caps: a document goes to the least busy. */
type ExtractorLike = Pick<Extractor, 'extract' | 'busy' | 'kill'>;

/**
 * Extractors side by side, a document to the idlest. The memory and time limits measure the whole process, which
 * documents extracted at once share: one that met a limit while another ran beside it is extracted again alone
 * (the others finished first, new ones held back), so a large document cannot fail its neighbour for good.
 */
export class ExtractorPool {
  private readonly extractors: ExtractorLike[];
  private readonly running = new Set<{ shared: boolean }>();
  private readonly drained: Array<() => void> = [];
  private alone: Promise<unknown> | null = null;

  constructor(
    readonly size: number,
    opts: ConstructorParameters<typeof Extractor>[0],
    texts: TextSink,
    make: () => ExtractorLike = () => new Extractor(opts, texts),
  ) {
    this.extractors = Array.from({ length: size }, make);
  }

  /** `again` reads the document's bytes once more (they are handed to the worker), for a retry alone. */
  async extract(name: string, bytes: Uint8Array, again?: () => Promise<Uint8Array>): Promise<Extraction> {
    await this.afterRetries();
    const first = await this.run(name, bytes);
    if (!again || !first.shared || !('failed' in first.result) || !first.result.overLimit) return first.result;
    await this.afterRetries();
    const retry = (async () => {
      while (this.running.size > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
      return (await this.run(name, await again())).result;
    })();
    this.alone = retry;
    try {
      return await retry;
    } finally {
      if (this.alone === retry) this.alone = null;
    }
  }

  private async afterRetries(): Promise<void> {
    while (this.alone) await this.alone.catch(() => undefined);
  }

  private async run(name: string, bytes: Uint8Array): Promise<{ result: Extraction; shared: boolean }> {
    const call = { shared: this.running.size > 0 };
    for (const other of this.running) other.shared = true;
    this.running.add(call);
    try {
      const idlest = this.extractors.reduce((best, e) => (e.busy < best.busy ? e : best));
      return { result: await idlest.extract(name, bytes), shared: call.shared };
    } finally {
      this.running.delete(call);
      if (this.running.size === 0) for (const resolve of this.drained.splice(0)) resolve();
    }
  }

  kill(): void {
    for (const extractor of this.extractors) extractor.kill();
  }
}

type WorkerName = Parameters<typeof startWorker>[0];

/** A thread of content search with its own connection to the database: one request at a time, in order. */
class DatabaseThread<Request extends { id: number }, Reply extends { id: number }> {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: Reply) => void>();

  constructor(
    private readonly name: WorkerName,
    private readonly database: string,
  ) {}

  protected call(
    request: (id: number) => Request | { kind: 'close'; id: number },
    transfer: Array<ArrayBuffer | MessagePort> = [],
  ): Promise<Reply> {
    if (!this.worker) {
      const worker = startWorker(this.name);
      worker.onmessage = (event: MessageEvent<Reply>) => {
        this.waiting.get(event.data.id)?.(event.data);
        this.waiting.delete(event.data.id);
      };
      this.worker = worker;
      worker.postMessage({ kind: 'open', id: this.nextId++, database: this.database });
    }
    const worker = this.worker;
    const message = request(this.nextId++);
    return new Promise((resolve) => {
      this.waiting.set(message.id, resolve);
      worker.postMessage(message, { transfer });
    });
  }

  async close(): Promise<void> {
    if (!this.worker) return;
    await this.call((id) => ({ kind: 'close', id }));
    this.worker.terminate();
    this.worker = null;
  }
}

/** The index writer thread (index-writer.ts), and the sink of the extraction workers' texts. */
export class IndexWriter extends DatabaseThread<WriterRequest, WriterReply> implements TextSink {
  private nextChannel = 1;

  constructor(database: string) {
    super('index-writer', database);
  }

  /**
   * ContentRepo.recordMany on the writer's connection, each text taken from the channel it came through, and the tries of
   * `finished` forgotten in the same transaction: how many were stored.
   */
  async record(docs: QueuedDoc[], finished: string[], at: number): Promise<number> {
    const reply = await this.call((id) => ({ kind: 'record', id, docs, finished, at }));
    if ('error' in reply) throw Object.assign(new Error(reply.error), { code: reply.code });
    return reply.recorded;
  }

  /** Counts a try at each of `subjects` on the writer's connection (AttemptsRepo.beginBatch, or begin() `alone`), forgetting `finished`'s. */
  async begin(subjects: string[], alone: boolean, finished: string[], at: number): Promise<BatchTry[]> {
    const reply = await this.call((id) => ({ kind: 'begin', id, subjects, alone, finished, at }));
    if ('error' in reply) throw Object.assign(new Error(reply.error), { code: reply.code });
    return reply.tries ?? [];
  }

  attach(port: MessagePort): number {
    const channel = this.nextChannel++;
    void this.call((id) => ({ kind: 'attach', id, channel, port }), [port]);
    return channel;
  }

  detach(channel: number, lastJob: number): void {
    void this.call((id) => ({ kind: 'detach', id, channel, lastJob }));
  }

  /** Texts waiting in the writer and channels open there, once what was sent before is done (tests: nothing left behind). */
  async held(): Promise<{ texts: number; channels: number }> {
    const reply = await this.call((id) => ({ kind: 'held', id }));
    if ('error' in reply) throw new Error(reply.error);
    return { texts: reply.texts ?? 0, channels: reply.channels ?? 0 };
  }
}

/** The snippet reader thread (snippet-reader.ts). */
export class SnippetReader extends DatabaseThread<ReaderRequest, ReaderReply> {
  constructor(database: string) {
    super('snippet-reader', database);
  }

  /** ContentRepo.snippets on the reader's connection. */
  async snippets(accountIds: string[], match: string, seqs: number[], tokens: number): Promise<Map<number, string>> {
    const reply = await this.call((id) => ({ kind: 'snippets', id, accountIds, match, seqs, tokens }));
    if ('error' in reply) throw new Error(reply.error);
    return new Map(reply.snippets);
  }
}
