import fs from 'node:fs';
import type { Database } from 'bun:sqlite';
import type { CheckpointReply, CheckpointRequest } from './checkpoint-worker.ts';

// The worker's module: beside this one from source; inside the executable, where the build put that entry point.
const WORKER_MODULE = import.meta.url.includes('/$bunfs/')
  ? '/$bunfs/root/src/db/checkpoint-worker.js'
  : new URL('./checkpoint-worker.ts', import.meta.url).href;
/** Frames not yet checkpointed at which the worker checkpoints them: short of FALLBACK_FRAMES, so it has time to. */
const TRIGGER_FRAMES = 800;
/**
 * Frames committed since the last checkpoint began (it syncs the log first) at which the request thread
 * checkpoints itself, once the worker's checkpoint in flight is done: SQLite's own automatic checkpoint's
 * 1,000, so a power cut takes back no more than before.
 */
const FALLBACK_FRAMES = 1000;
/**
 * The log's length at which the request thread checkpoints its last frames itself: the log starts over only
 * after a checkpoint that left nothing behind, which the worker rarely manages while commits go on.
 */
const LOG_LIMIT_FRAMES = 8000;
/** A worker with nothing to do this long is let go (a thread's heap counts in idle memory). */
const IDLE_MS = 10_000;
/** Writes outside a grouped transaction (single statements, job and audit batches) are noticed this often. */
const POLL_MS = 250;
/** How long the request thread waits for the worker's checkpoint before its own (a stuck disk). */
const WAIT_FOR_WORKER_MS = 10_000;
// The log's header, then each frame: a 24-byte header and a page.
const WAL_HEADER = 32;
const FRAME_HEADER = 24;

interface Options {
  triggerFrames?: number;
  idleMs?: number;
  pollMs?: number;
}

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * Keeps SQLite's checkpoints off the thread that answers requests: the request connection's automatic
 * checkpoint is off, and when the log holds TRIGGER_FRAMES frames not yet copied into the database file, a
 * worker thread with its own connection checkpoints them (PASSIVE: it never blocks a writer). When
 * FALLBACK_FRAMES have been committed since the last checkpoint began, or the log passes LOG_LIMIT_FRAMES, the
 * request thread checkpoints as SQLite did, so what a power cut can take back stays bounded as before. Off while replication holds the log (setEnabled), whose own
 * checkpoints then run as they did. The log's length is read from its file: the request connection cuts the
 * file to what it holds when the log starts over (journal_size_limit = 0). Neither the database nor its -shm
 * file is opened here: closing a descriptor of either drops every POSIX lock the process holds on it.
 */
export class Checkpointer {
  private readonly wal: string;
  private readonly pageSize: number;
  private readonly header = Buffer.alloc(WAL_HEADER);
  private fd: number | null = null;
  /** The log the baseline counts in (salt-1 of its header). */
  private salt = -1;
  /** Frames of that log known to be in the database file (or to be no news): what the file's size is measured from. */
  private baseline = 0;
  /** Frames of that log when the last checkpoint began, which syncs the log: those after it are not yet on disk. */
  private syncedTo = 0;
  /** 1 while the worker checkpoints: the request thread's fallback waits on it. */
  private readonly working = new Int32Array(new SharedArrayBuffer(4));
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
  /** Checkpoints the request thread has run (the worker behind, or the log long). */
  fallbacks = 0;

  constructor(
    private readonly sqlite: Database,
    private readonly file: string,
    opts: Options = {},
  ) {
    this.wal = `${file}-wal`;
    this.pageSize = sqlite.query<{ page_size: number }, []>('PRAGMA page_size').get()!.page_size;
    this.triggerFrames = opts.triggerFrames ?? TRIGGER_FRAMES;
    this.idleMs = opts.idleMs ?? IDLE_MS;
    this.pollMs = opts.pollMs ?? POLL_MS;
  }

  /** Whether the worker thread is there (started at the first checkpoint, let go when idle). */
  get threadRunning(): boolean {
    return this.worker !== null;
  }

  /** Checkpoints what start-up left in the log (the migrations' pages) here, before requests, so no worker starts for it. */
  start(): void {
    const { frames, pending } = this.look();
    if (pending > 0) this.checkpointHere(frames);
    this.pollTimer = setInterval(() => this.poke(), this.pollMs);
    this.pollTimer.unref();
  }

  /** Frames the log's file holds (its size) and which log it is (salt-1 of its header, new each time it starts over). */
  private readLog(): { frames: number; salt: number } {
    try {
      // The log's file is never locked by SQLite: holding and closing a descriptor of it is safe.
      this.fd ??= fs.openSync(this.wal, 'r');
      const size = fs.fstatSync(this.fd).size;
      if (fs.readSync(this.fd, this.header, 0, WAL_HEADER, 0) < WAL_HEADER) return { frames: 0, salt: -1 };
      return { frames: Math.max(0, Math.floor((size - WAL_HEADER) / (FRAME_HEADER + this.pageSize))), salt: this.header.readUInt32BE(16) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return { frames: 0, salt: -1 };
    }
  }

  /** Frames in the log not yet checkpointed, as far as the log's file tells. */
  pendingFrames(): number {
    return this.look().pending;
  }

  private look(): { frames: number; pending: number; unsynced: number } {
    const { frames, salt } = this.readLog();
    if (salt !== this.salt) {
      // The log started over (and its file was cut to what it holds): none of it is checkpointed.
      this.salt = salt;
      this.baseline = 0;
      this.syncedTo = 0;
    }
    return { frames, pending: Math.max(0, frames - this.baseline), unsynced: Math.max(0, frames - this.syncedTo) };
  }

  /** Moves the baseline after a checkpoint: to what it copied, or past a file longer than the log. */
  private checkpointed(r: CheckpointResult, syncedBefore: number): void {
    const { frames, salt } = this.readLog();
    if (salt !== this.salt) {
      this.salt = salt;
      this.baseline = 0;
      this.syncedTo = 0;
    } else {
      // A checkpoint that could not run synced nothing.
      if (r.busy !== 0) this.syncedTo = syncedBefore;
      // A file longer than the log (left so by another process, or a busy try) counts from its end, not again and again.
      this.baseline = r.busy === 0 && r.log >= frames ? r.checkpointed : frames;
    }
  }

  /** After a commit: hands the log to the worker once it holds enough frames. Cheap: an fstat and a read of 32 bytes. */
  poke(): void {
    if (!this.enabled || this.stopped) return;
    const { frames, pending, unsynced } = this.look();
    if (unsynced >= FALLBACK_FRAMES || frames >= LOG_LIMIT_FRAMES) {
      this.fallbacks++;
      this.checkpointHere(frames);
    } else if (pending >= this.triggerFrames && !this.running) {
      this.running = this.checkpoint(frames).finally(() => {
        this.running = null;
      });
    }
  }

  /** Off while replication keeps its hold on the log: its own checkpoints replace these. */
  setEnabled(on: boolean): void {
    this.enabled = on;
  }

  /** As SQLite's automatic checkpoint would, on this thread, once the worker's checkpoint in flight is done. */
  private checkpointHere(frames: number): void {
    Atomics.wait(this.working, 0, 1, WAIT_FOR_WORKER_MS);
    const syncedBefore = this.syncedTo;
    this.syncedTo = frames;
    const r = this.sqlite.query<CheckpointResult, []>('PRAGMA wal_checkpoint(PASSIVE)').get()!;
    this.checkpointed(r, syncedBefore);
  }

  private async checkpoint(frames: number): Promise<void> {
    clearTimeout(this.idleTimer);
    const syncedBefore = this.syncedTo;
    try {
      if (!this.worker) {
        this.worker = new Worker(WORKER_MODULE, { smol: true });
        this.worker.onmessage = (event) => this.reply?.(event.data);
        await this.ask({ file: this.file, working: this.working });
      }
      this.syncedTo = frames;
      const r = (await this.ask('checkpoint')) as CheckpointReply;
      this.checkpoints++;
      this.checkpointed(r, syncedBefore);
    } catch {
      // A worker that failed is replaced at the next checkpoint; meanwhile the request thread's fallback bounds the log.
      this.syncedTo = syncedBefore;
      Atomics.store(this.working, 0, 0);
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
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
