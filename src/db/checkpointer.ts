import fs from 'node:fs';
import os from 'node:os';
import type { CheckpointReply, CheckpointRequest } from './checkpoint-worker.ts';

// The worker's module: beside this one from source; inside the executable, where the build put that entry point.
const WORKER_MODULE = import.meta.url.includes('/$bunfs/')
  ? '/$bunfs/root/src/db/checkpoint-worker.js'
  : new URL('./checkpoint-worker.ts', import.meta.url).href;
/**
 * Frames not yet in the database file at which the worker checkpoints: well before the request connection's
 * own automatic checkpoint (1,000 frames in the log), which stays on as the fallback and the bound.
 */
const TRIGGER_FRAMES = 200;
/** A worker with nothing to do this long is let go (a thread's heap counts in idle memory). */
const IDLE_MS = 10_000;
/** Writes outside a grouped transaction (single statements, job and audit batches) are noticed this often. */
const POLL_MS = 250;
// The WAL index (-shm) begins with its header twice (48 bytes each; mxFrame at 16), then nBackfill at 96.
const HEADER_BYTES = 48;
const MX_FRAME = 16;
const N_BACKFILL = 96;

interface Options {
  triggerFrames?: number;
  idleMs?: number;
  pollMs?: number;
}

/**
 * Keeps SQLite's checkpoints off the thread that answers requests: when the log holds TRIGGER_FRAMES frames
 * not yet copied into the database file, a worker thread with its own connection checkpoints them (PASSIVE:
 * it never blocks a writer). The request connection's automatic checkpoint stays at SQLite's 1,000 frames,
 * so when the worker falls behind the log is checkpointed as before and stays bounded as before. Off while
 * replication holds the log (setEnabled), whose own checkpoints then run as they did.
 */
export class Checkpointer {
  private readonly shm: number;
  private readonly header = Buffer.alloc(N_BACKFILL + 4);
  private readonly littleEndian = os.endianness() === 'LE';
  private readonly triggerFrames: number;
  private readonly idleMs: number;
  private readonly pollMs: number;
  private worker: Worker | null = null;
  private reply: ((data: unknown) => void) | null = null;
  private running: Promise<void> | null = null;
  private enabled = true;
  private stopped = false;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  /** Checkpoints the worker has run. */
  checkpoints = 0;

  constructor(
    private readonly file: string,
    opts: Options = {},
  ) {
    this.triggerFrames = opts.triggerFrames ?? TRIGGER_FRAMES;
    this.idleMs = opts.idleMs ?? IDLE_MS;
    this.pollMs = opts.pollMs ?? POLL_MS;
    // Held open until the database is closed: closing any descriptor of the file drops SQLite's locks on it (POSIX).
    this.shm = fs.openSync(`${file}-shm`, 'r');
  }

  /** Whether the worker thread is there (started at the first checkpoint, let go when idle). */
  get threadRunning(): boolean {
    return this.worker !== null;
  }

  start(): void {
    this.pollTimer = setInterval(() => this.poke(), this.pollMs);
    this.pollTimer.unref();
  }

  /** Frames in the log not yet in the database file, read from the WAL index without a lock: a hint. */
  pendingFrames(): number {
    if (fs.readSync(this.shm, this.header, 0, this.header.length, 0) < this.header.length) return 0;
    // A header being rewritten by a commit reads as two different copies: skipped, the next look sees it.
    if (this.header.compare(this.header, HEADER_BYTES, 2 * HEADER_BYTES, 0, HEADER_BYTES) !== 0) return 0;
    const view = new DataView(this.header.buffer, this.header.byteOffset, this.header.length);
    return view.getUint32(MX_FRAME, this.littleEndian) - view.getUint32(N_BACKFILL, this.littleEndian);
  }

  /** After a commit: hands the log to the worker once it holds enough frames. Cheap: one read of the header. */
  poke(): void {
    if (!this.enabled || this.stopped || this.running) return;
    if (this.pendingFrames() < this.triggerFrames) return;
    this.running = this.checkpoint().finally(() => {
      this.running = null;
    });
  }

  /** Off while replication keeps its hold on the log: its own checkpoints replace these. */
  setEnabled(on: boolean): void {
    this.enabled = on;
  }

  private async checkpoint(): Promise<void> {
    clearTimeout(this.idleTimer);
    try {
      if (!this.worker) {
        this.worker = new Worker(WORKER_MODULE, { smol: true });
        this.worker.onmessage = (event) => this.reply?.(event.data);
        await this.ask({ file: this.file });
      }
      const r = (await this.ask('checkpoint')) as CheckpointReply;
      this.checkpoints += r.runs;
    } catch {
      // A worker that failed is replaced at the next checkpoint; meanwhile SQLite's own checkpoint bounds the log.
      this.worker?.terminate();
      this.worker = null;
      return;
    }
    if (this.stopped) return;
    this.idleTimer = setTimeout(() => void this.letGo(), this.idleMs);
    this.idleTimer.unref();
  }

  private ask(request: CheckpointRequest): Promise<unknown> {
    const worker = this.worker!;
    return new Promise((resolve, reject) => {
      this.reply = resolve;
      worker.onerror = (event) => reject(new Error(event.message || 'the checkpoint worker stopped'));
      worker.postMessage(request);
    });
  }

  private async letGo(): Promise<void> {
    if (this.running || !this.worker) return;
    const done = this.ask('close');
    this.running = done.then(() => {});
    await done.catch(() => {});
    this.worker?.terminate();
    this.worker = null;
    this.running = null;
  }

  /** Lets the worker finish its checkpoint and close its connection: before the database closes. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearTimeout(this.idleTimer);
    await this.running?.catch(() => {});
    this.running = null;
    await this.letGo();
  }

  /** After the database is closed. */
  close(): void {
    fs.closeSync(this.shm);
  }
}
