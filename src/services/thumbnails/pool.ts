import type { Logger } from '../../log.ts';
import type { MakeRequest, MakeResult, MakeSource, SourceKind, WorkerSetup } from './formats.ts';

interface Task {
  kind: SourceKind;
  source: MakeSource;
  resolve: (outcome: MakeResult) => void;
  reject: (err: unknown) => void;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  tasks: number;
  idleTimer?: ReturnType<typeof setTimeout>;
}

// The worker's module: beside this one from source; inside the executable, where the build put that entry point.
const WORKER_MODULE = import.meta.url.includes('/$bunfs/')
  ? '/$bunfs/root/src/services/thumbnails/worker.js'
  : new URL('./worker.ts', import.meta.url).href;
// A decode that takes longer is stuck: its worker is ended and the file gets no thumbnail.
export const TASK_TIMEOUT_MS = 120_000;
// Wasm memory (libheif, pdfium) never shrinks, and libvips keeps some: a worker is replaced after this many.
const TASKS_PER_WORKER = 200;
// A worker left idle this long is ended: libvips, libheif and pdfium leave the process's memory until the next thumbnail.
const IDLE_MS = 60_000;

/**
 * At most `size` thumbnails made at once, each in a worker thread; requests someone waits for go ahead
 * of background work. A worker that decoded a HEIC (hundreds of MiB of wasm memory) is replaced.
 */
export class ThumbnailPool {
  private readonly urgent: Task[] = [];
  private readonly background: Task[] = [];
  private readonly idle: Slot[] = [];
  private running = 0;
  private stopped = false;

  constructor(
    private readonly setup: WorkerSetup,
    readonly size: number,
    private readonly log: Logger,
    private readonly idleMs = IDLE_MS,
  ) {}

  /** Tasks waiting for a worker. */
  get waiting(): number {
    return this.urgent.length + this.background.length;
  }

  /** Rejects when `source` throws (the file could not be read): that is no answer about its thumbnail. */
  make(kind: SourceKind, source: MakeSource, urgent: boolean): Promise<MakeResult> {
    if (this.stopped) return Promise.resolve({ ok: false, reason: 'the server is stopping' });
    return new Promise((resolve, reject) => {
      (urgent ? this.urgent : this.background).push({ kind, source, resolve, reject });
      this.next();
    });
  }

  stop(): void {
    this.stopped = true;
    for (const task of [...this.urgent.splice(0), ...this.background.splice(0)])
      task.resolve({ ok: false, reason: 'the server is stopping' });
    for (const slot of this.idle.splice(0)) {
      clearTimeout(slot.idleTimer);
      slot.worker.terminate();
    }
  }

  private next(): void {
    while (this.running < this.size && !this.stopped) {
      const task = this.urgent.shift() ?? this.background.shift();
      if (!task) return;
      this.running++;
      void this.run(task).finally(() => {
        this.running--;
        this.next();
      });
    }
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_MODULE);
    const ready = new Promise<void>((resolve, reject) => {
      worker.onmessage = () => resolve();
      worker.onerror = (event) => reject(new Error(event.message || 'the thumbnail worker failed to start'));
    });
    worker.postMessage(this.setup);
    return { worker, ready, tasks: 0 };
  }

  private async run(task: Task): Promise<void> {
    // Read within the slot (a file's bytes, a video's frame by ffmpeg): only `size` sources are in memory at once.
    let bytes: Awaited<ReturnType<MakeSource>>;
    try {
      bytes = await task.source();
    } catch (err) {
      return task.reject(err);
    }
    if (!(bytes instanceof Uint8Array)) return task.resolve(bytes);
    if (this.stopped) return task.resolve({ ok: false, reason: 'the server is stopping' });
    const slot = this.idle.pop() ?? this.spawn();
    clearTimeout(slot.idleTimer);
    let keep = false;
    try {
      await slot.ready;
      const outcome = await this.ask(slot, task.kind, bytes);
      slot.tasks++;
      // pdfium is unusable after an abort (past its heap limit, see loadPdfium): a PDF that failed leaves a fresh worker.
      const spent = task.kind === 'heic' || (task.kind === 'pdf' && !outcome.result.ok);
      keep = outcome.kept && !spent && slot.tasks < TASKS_PER_WORKER;
      task.resolve(outcome.result);
    } catch (err) {
      this.log.warn('thumbnail worker failed', { err: err instanceof Error ? err.message : String(err) });
      task.resolve({ ok: false, reason: 'the thumbnail worker failed' });
    } finally {
      if (keep && !this.stopped) this.rest(slot);
      else slot.worker.terminate();
    }
  }

  private rest(slot: Slot): void {
    this.idle.push(slot);
    slot.idleTimer = setTimeout(() => {
      const at = this.idle.indexOf(slot);
      if (at < 0) return;
      this.idle.splice(at, 1);
      slot.worker.terminate();
    }, this.idleMs);
    slot.idleTimer.unref();
  }

  private ask(slot: Slot, kind: SourceKind, source: Uint8Array): Promise<{ result: MakeResult; kept: boolean }> {
    // The worker gets the bytes, not a copy: they must be the whole of their buffer to be transferred.
    const bytes = source.byteOffset === 0 && source.byteLength === source.buffer.byteLength ? source : source.slice();
    const request: MakeRequest = { kind, bytes };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => resolve({ result: { ok: false, reason: 'making the thumbnail took too long' }, kept: false }),
        TASK_TIMEOUT_MS,
      );
      slot.worker.onmessage = (event: MessageEvent<MakeResult>) => {
        clearTimeout(timer);
        resolve({ result: event.data, kept: true });
      };
      slot.worker.onerror = (event) => {
        clearTimeout(timer);
        reject(new Error(event.message || 'the thumbnail worker stopped'));
      };
      slot.worker.postMessage(request, [bytes.buffer as ArrayBuffer]);
    });
  }
}
