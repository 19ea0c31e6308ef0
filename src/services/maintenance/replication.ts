import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { ReplicationConfig } from '../../config.ts';
import type { Clock } from '../../clock.ts';
import type { DataPaths } from '../../data-dir.ts';
import { WalHold } from '../../db/wal-hold.ts';
import type { Lifecycle } from '../../lib/lifecycle.ts';
import { Counter, Gauge } from '../../lib/metrics.ts';
import { positionIn, readWalHeader, scanCommitted, type WalPosition } from '../../lib/sqlite-wal.ts';
import type { Logger } from '../../log.ts';
import type { MetricsService } from '../admin/metrics.ts';
import { isDiskFullError } from '../files/disk-space.ts';
import type { ReplicationStatus } from '../../contract/admin.ts';
import {
  FENCE_NAME,
  type Fence,
  generationKey,
  generationTime,
  newDescriptor,
  newGenerationId,
  objectName,
  parseObjectName,
  SealedObjectWriter,
  type SecretsDescription,
  type SnapshotDescription,
} from './replica-format.ts';
import { ReplicaOutbox } from './replica-outbox.ts';
import { openOrNull, type SegmentInput, type SegmentOutput, writeSegment } from './replica-segment.ts';
import type { SegmentReply } from './segment-worker.ts';
import { replicaStore, type ReplicaStore } from './replica-store.ts';

const DAY = 86_400_000;
/** Frames shipped from the log before the follower checkpoints it (SQLite's own default is 1000 pages). */
const CHECKPOINT_FRAMES = 1000;
const COPY_CHUNK = 1024 * 1024;
/** The longest wait between tries once the destination failed, so catching up starts soon after it is back. */
const MAX_BACKOFF_MS = 5000;
// How long a waiter that missed its commit (reached() false) waits before asking again: doubling up to the cap, so a long outage costs each deletion a few job writes, not one every 5 s.
const WAITER_RETRY_MS = 5_000;
const WAITER_RETRY_MAX_MS = 5 * 60_000;
/** Behind by more than this (or ten intervals), the admin is told. */
const BEHIND_MS = 10_000;
/** How often a stopped replication tries to begin a new generation. */
const RETRY_BROKEN_MS = 30_000;
/** A partial write at the destination older than this is a crash's leftover, not another writer's in progress. */
const INTERRUPTED_WRITE_AGE_MS = 3_600_000;
/** The segment thread's module: its own entry point in the executable (scripts/build.ts), the .ts beside this one from source. */
const SEGMENT_WORKER = import.meta.url.includes('/$bunfs/')
  ? '/$bunfs/root/src/services/maintenance/segment-worker.js'
  : new URL('./segment-worker.ts', import.meta.url).href;

interface Generation {
  id: string;
  key: Buffer;
  startedAt: number;
  /** Where the next segment starts reading the log. */
  position: WalPosition | null;
  /** Frames read from the log since the last checkpoint. */
  framesSinceCheckpoint: number;
  nextIndex: number;
  snapshotBytes: number;
  /** secrets.json as the generation shipped it: read after its snapshot, so it holds every key the snapshot names. */
  secrets: Buffer;
  /** Sealed log bytes shipped since the snapshot: a new generation starts when they pass its size. */
  walBytes: number;
}

/** What a data directory remembers of its replication (`replication/state.json`). */
export interface ReplicationState {
  /** Generations this data directory began (or followed, as a standby): the fence may name any of them. */
  generations: string[];
  /** Set by a promotion: the next generation takes the destination over whatever the fence names. */
  takeover?: boolean;
  /** The newest time put on a replica object from here (or applied here, as a standby): no later stamp goes before it. */
  stampedUpTo?: number;
  /** Set by a promotion: the replica this data directory followed as a standby, and now replicates to. */
  promotedFrom?: string;
}

/** What `coffer doctor` reports of replication (ReplicationService.inspect). */
export type ReplicationCheck = Pick<ReplicationStatus, 'destination' | 'lagSeconds' | 'backlogBytes' | 'warning'>;

/** The fence names a generation this data directory neither began nor followed, and it was not promoted: another server took over. */
function takenOver(fence: Fence, state: ReplicationState): boolean {
  return !state.generations.includes(fence.generation) && !state.takeover;
}

function replicationStateFile(root: string): string {
  return path.join(root, 'replication', 'state.json');
}

export function readReplicationState(root: string): ReplicationState {
  try {
    return JSON.parse(fs.readFileSync(replicationStateFile(root), 'utf8')) as ReplicationState;
  } catch {
    return { generations: [] };
  }
}

export function writeReplicationState(root: string, state: ReplicationState): void {
  const file = replicationStateFile(root);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(`${file}.partial`, JSON.stringify(state), { mode: 0o600 });
  fs.renameSync(`${file}.partial`, file);
}

interface Deps {
  config: ReplicationConfig;
  paths: DataPaths;
  clock: Clock;
  /** What REPLICATE_RETENTION counts from: a clock jumped forward by mistake deletes no generation before it comes back. */
  retentionClock: Pick<Clock, 'now'>;
  metrics: MetricsService;
  log: Logger;
  /** BACKUP_PASSPHRASE_FILE's passphrase. */
  passphrase: () => string | null;
  stagingDir: string;
  /** Turns the server's own automatic checkpoints on or off: off while a hold is kept, as the hold's checkpoints replace them. */
  autoCheckpoint: (on: boolean) => void;
}

/**
 * Continuous replication of the database to REPLICATE_TO: a sealed snapshot of the database file, then
 * every committed transaction's log frames as numbered sealed segments within REPLICATE_INTERVAL_MS. It
 * takes over checkpointing from the log's point of view: a WalHold keeps every frame in the log until it
 * has been read into a segment. Segments are written to an outbox on disk first, so the destination
 * being away never holds the database back; the outbox is sent in order as soon as it answers.
 */
export class ReplicationService {
  private replica: ReplicaStore | null = null;
  private readonly outbox: ReplicaOutbox;
  private hold: WalHold | null = null;
  private gen: Generation | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private problem: string | null = null;
  /** Set when shipping had to stop (a full disk, an outbox over REPLICATE_MAX_LAG_BYTES): a new generation starts once it can. */
  private broken = false;
  private uploadFailures = 0;
  private nextUploadAt = 0;
  private lastShippedAt = 0;
  /** When this server began replicating: what it committed since is behind until something is shipped. */
  private shippingSince = 0;
  private lastPruneAt = 0;
  /** While broken: when to try a new generation again. */
  private retryAt = 0;
  /** Objects written beside the outbox, waiting for settle(). */
  private unsynced: Array<{ aside: string; name: string }> = [];
  /** Set once the fence names another server's generation: this one never ships to the destination again. */
  private fenced = false;
  private readonly failures: Counter;
  /** Where each round's segment is read and sealed (shipOffThread). */
  private worker: Worker | null = null;
  /** The outbox being sent (send()), beside the rounds: a stalled destination holds no segment up. */
  private sending: Promise<boolean> | null = null;
  /** The newest time stamped on a generation or segment: see stamp(). */
  private lastStamp = 0;
  /** Reads of the log (rounds, and generations' snapshots) begun, numbered from 1; the newest whose read is in the outbox; the newest at the destination. */
  private rounds = 0;
  private readRound = 0;
  private shippedRound = 0;
  /** Counts the times reads were dropped unsent (a stop, a backlog dropped, a fence): a sending begun before must not count them as sent. */
  private drops = 0;
  /** Per waiter (reached()): the read that must be at the destination, the first begun after its first call. */
  private readonly marks = new Map<string, number>();
  /** Per waiter: how many times in a row reached() answered false (retryAfterMs doubles with it). */
  private readonly misses = new Map<string, number>();
  private readonly caughtUpListeners: Array<() => void> = [];
  private started = false;

  constructor(private readonly deps: Deps) {
    this.outbox = new ReplicaOutbox(path.join(deps.paths.root, 'replication', 'outbox'));
    const { registry } = deps.metrics;
    registry.register(
      new Gauge(
        'coffer_replication_lag_seconds',
        'Seconds since the oldest change not yet at the replica destination (0: none waiting).',
        (g) => g.set(this.lagSeconds()),
      ),
    );
    registry.register(
      new Gauge(
        'coffer_replication_last_shipped_timestamp_seconds',
        'When the last replica object reached the destination, in seconds since the Unix epoch (0: never).',
        (g) => g.set(Math.floor(this.lastShippedAt / 1000)),
      ),
    );
    registry.register(
      new Gauge('coffer_replication_backlog_bytes', 'Sealed replica bytes on disk waiting for the destination.', (g) =>
        g.set(this.outbox.bytes()),
      ),
    );
    this.failures = registry.register(
      new Counter('coffer_replication_failures_total', 'Failed attempts to ship to the replica destination since the server started.'),
    );
    this.failures.inc({}, 0);
  }

  /** Built on first use: a command beside the server never reads the bucket's secret key. */
  private get store(): ReplicaStore {
    this.replica ??= replicaStore(this.deps.config.destination!, this.deps.stagingDir);
    return this.replica;
  }

  lifecycle(): Lifecycle {
    return {
      name: 'replication',
      start: () => {
        fs.mkdirSync(this.outbox.dir, { recursive: true, mode: 0o700 });
        for (const name of fs.readdirSync(this.outbox.dir))
          if (name.startsWith('.')) fs.rmSync(path.join(this.outbox.dir, name), { force: true });
        this.outbox.load();
        if (!this.deps.passphrase()) throw new Error('BACKUP_PASSPHRASE_FILE is empty: a replica is sealed with its passphrase');
        this.shippingSince = this.deps.clock.now();
        this.started = true;
        const state = readReplicationState(this.deps.paths.root);
        this.lastStamp = Math.max(state.stampedUpTo ?? 0, ...state.generations.map(generationTime));
        // Each start begins a generation: what a process that ran meanwhile (or a crash) left in the log is in its
        // snapshot, and so is whatever is committed before it is taken, so the server need not wait for its copy.
        this.running = this.firstGeneration().finally(() => {
          this.running = null;
          this.schedule();
        });
      },
      stop: async (graceMs) => {
        this.stopped = true;
        if (this.timer) clearTimeout(this.timer);
        await this.running;
        try {
          if (!this.broken && !this.fenced && this.gen) this.shipNew();
          await this.settle();
        } catch (err) {
          this.deps.log.error('replication: the last changes could not be written to the outbox', { error: String(err) });
        }
        if (this.lastStamp)
          writeReplicationState(this.deps.paths.root, { ...readReplicationState(this.deps.paths.root), stampedUpTo: this.lastStamp });
        this.nextUploadAt = 0;
        const last = (async () => {
          await this.sending;
          await this.send();
        })();
        await Promise.race([last, Bun.sleep(Math.min(graceMs, 10_000))]);
        this.releaseHold();
        this.worker?.terminate();
        this.worker = null;
      },
    };
  }

  /** Lets the log go: SQLite checkpoints it by itself again. */
  private releaseHold(): void {
    if (!this.hold) return;
    this.hold.close();
    this.hold = null;
    this.deps.autoCheckpoint(true);
  }

  private async firstGeneration(): Promise<void> {
    try {
      if (!(await this.startGeneration())) this.broken = true;
      else this.boundBacklog();
    } catch (err) {
      this.stopShipping(err);
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => {
        this.running = null;
        this.schedule();
      });
    }, this.deps.config.intervalMs);
  }

  /** One round: read new commits into a segment, checkpoint or begin a generation when due, send the outbox. */
  private async tick(): Promise<void> {
    const { clock } = this.deps;
    if (this.fenced) return this.standDown();
    try {
      if (this.broken) {
        // Start again only once the destination answers, or the new snapshot would pile up beside the old backlog.
        if (clock.now() >= this.retryAt && (await this.send()) && (await this.reachable())) {
          this.retryAt = clock.now() + RETRY_BROKEN_MS;
          await this.startGeneration();
        }
      } else if (this.gen) {
        await this.shipOffThread();
        const g = this.gen;
        if (clock.now() - g.startedAt >= DAY || (g.walBytes > g.snapshotBytes && g.walBytes > 64 * 1024 * 1024) || this.secretsChanged(g))
          await this.startGeneration();
        else if (g.framesSinceCheckpoint >= CHECKPOINT_FRAMES) this.checkpoint();
      }
      await this.settle();
    } catch (err) {
      this.stopShipping(err);
    }
    if (this.boundBacklog()) return;
    void this.send();
  }

  /**
   * Sends the outbox, and prunes old generations when due, unless a sending is under way: the rounds go on
   * writing segments meanwhile, so a destination that stalls (a call waits out its timeout) holds none of them
   * up, nor the server's stop. Resolves to whether the outbox was empty afterwards.
   */
  private send(): Promise<boolean> {
    this.sending ??= (async () => {
      try {
        // Every read up to this one is in the outbox (none waits beside it): once the outbox is sent, it is at the destination.
        const read = this.unsynced.length === 0 ? this.readRound : 0;
        const drops = this.drops;
        const empty = await this.upload();
        if (empty && drops === this.drops) this.shippedRound = Math.max(this.shippedRound, read);
        this.callBackWaiters();
        // Fenced off, the destination is another server's: nothing there is this one's to delete.
        if (!this.fenced && this.deps.clock.now() - this.lastPruneAt > 3_600_000) await this.prune();
        return empty;
      } catch (err) {
        this.deps.log.warn('replication: pruning old generations failed', { error: String(err) });
        return false;
      } finally {
        this.sending = null;
      }
    })();
    return this.sending;
  }

  /** A failure writing locally (a full disk): the hold goes, so the database checkpoints as usual and the server keeps serving. */
  private stopShipping(err: unknown): void {
    this.problem = isDiskFullError(err)
      ? 'Replication stopped: the disk is full; it starts again with a new generation once there is space'
      : `Replication stopped: ${err instanceof Error ? err.message : String(err)}`;
    this.deps.log.error('replication stopped', { error: String(err) });
    this.failures.inc();
    this.broken = true;
    this.retryAt = this.deps.clock.now() + RETRY_BROKEN_MS;
    this.dropReads();
    for (const { aside } of this.unsynced) fs.rmSync(aside, { force: true });
    this.unsynced = [];
    this.gen = null;
    this.releaseHold();
  }

  /** Drops what waits in the outbox once it is over REPLICATE_MAX_LAG_BYTES; true when it did. */
  private boundBacklog(): boolean {
    if (this.laggingBytes() <= this.deps.config.maxLagBytes) return false;
    this.dropBacklog();
    return true;
  }

  private dropBacklog(): void {
    const { log, config } = this.deps;
    this.outbox.clear();
    this.dropReads();
    this.problem = `The replica destination ${this.store.where} has been unreachable for longer than REPLICATE_MAX_LAG_BYTES (${config.maxLagBytes} bytes) of changes; a new generation starts once it is back`;
    log.error('replication: backlog over REPLICATE_MAX_LAG_BYTES dropped', { destination: this.store.where });
    this.broken = true;
    // Tried every round: a new generation starts as soon as the destination answers.
    this.retryAt = 0;
    this.unsynced = [];
    this.gen = null;
    this.releaseHold();
  }

  /** What was read and not sent is gone: only a later read (a new generation's snapshot) can reach the destination now. */
  private dropReads(): void {
    this.readRound = this.shippedRound;
    this.drops++;
  }

  private async reachable(): Promise<boolean> {
    try {
      await this.store.list();
      return true;
    } catch {
      return false;
    }
  }

  private walFile(): string {
    return `${this.deps.paths.database}-wal`;
  }

  /** Reads what was committed since the last segment into the next one, on this thread: the caller may hold the write lock. */
  private shipNew(): void {
    const round = ++this.rounds;
    this.applySegment(writeSegment(this.segmentInput()), round);
  }

  /**
   * shipNew on the segment thread, for each round: the thread that commits and answers requests only waits
   * for the reply. The hold keeps every frame it reads in the log meanwhile, and a round runs alone.
   */
  private async shipOffThread(): Promise<void> {
    const g = this.gen!;
    const round = ++this.rounds;
    const input = this.segmentInput();
    this.worker ??= new Worker(SEGMENT_WORKER);
    const worker = this.worker;
    const reply = await new Promise<SegmentReply>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<SegmentReply>) => resolve(event.data);
      worker.onerror = (event) => {
        worker.terminate();
        if (this.worker === worker) this.worker = null;
        reject(new Error(event.message || 'the replication segment thread failed'));
      };
      worker.postMessage(input);
    });
    if (!reply.ok) throw Object.assign(new Error(reply.error), { code: reply.code });
    if (this.gen !== g) {
      if (reply.output.segment) fs.rmSync(reply.output.segment.aside, { force: true });
      return;
    }
    this.applySegment(reply.output, round);
  }

  private segmentInput(): SegmentInput {
    const g = this.gen!;
    return {
      walFile: this.walFile(),
      outbox: this.outbox.dir,
      generation: g.id,
      key: g.key,
      index: g.nextIndex,
      position: g.position,
      at: this.stamp(0),
    };
  }

  /**
   * The time for a segment (`after` 0) or a new generation (`after` 1): the wall clock, never before a stamp
   * already given here, so a clock set back (NTP, a wrong real-time clock at boot, a standby's clock behind
   * the old primary's) cannot put a generation before the one it follows, nor a segment before an earlier one.
   */
  private stamp(after: 0 | 1): number {
    this.lastStamp = Math.max(this.deps.clock.now(), this.lastStamp + after);
    return this.lastStamp;
  }

  private applySegment(out: SegmentOutput, round: number): void {
    const g = this.gen!;
    g.position = out.position;
    this.readRound = Math.max(this.readRound, round);
    if (!out.segment) return;
    g.nextIndex++;
    g.walBytes += out.segment.bytes;
    g.framesSinceCheckpoint += out.segment.read;
    this.unsynced.push({ aside: out.segment.aside, name: out.segment.name });
  }

  /**
   * secrets.json is no longer what the generation shipped (`coffer keys rotate` beside the server): a new
   * generation carries the new master key, or a restore and a promoted standby could not read the files it wraps.
   */
  private secretsChanged(g: Generation): boolean {
    try {
      return !fs.readFileSync(this.deps.paths.secrets).equals(g.secrets);
    } catch {
      return false;
    }
  }

  /** Where the log ends now (the caller holds the write lock). */
  private logEnd(): WalPosition | null {
    const fd = openOrNull(this.walFile());
    if (fd === null) return null;
    try {
      const header = readWalHeader(fd);
      if (!header) return null;
      const from = positionIn(header, null);
      const run = scanCommitted(fd, header, from);
      return run ? { salt1: header.salt1, salt2: header.salt2, nextFrame: run.lastFrame + 1, checksum: run.checksum } : from;
    } finally {
      fs.closeSync(fd);
    }
  }

  private checkpoint(): void {
    const done = this.hold!.checkpointAfter(() => this.shipNew());
    if (done !== null) this.gen!.framesSinceCheckpoint = 0;
  }

  /**
   * Writes a sealed object beside the outbox (`.name`), synchronously: it runs between commits and must not
   * wait on the disk. settle() syncs it and renames it into the outbox, off the event loop, before it is sent.
   */
  private writeOutbox(name: string, description: object, body: (w: SealedObjectWriter) => void): number {
    const aside = path.join(this.outbox.dir, `.${name}`);
    const fd = fs.openSync(aside, 'w', 0o600);
    try {
      const w = new SealedObjectWriter(this.gen!.key, name, fd, description);
      body(w);
      w.finish();
      this.unsynced.push({ aside, name });
      return w.bytes;
    } catch (err) {
      fs.rmSync(aside, { force: true });
      throw err;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Syncs what writeOutbox wrote and moves it into the outbox, in order. */
  private async settle(): Promise<void> {
    while (this.unsynced.length) {
      const { aside, name } = this.unsynced[0]!;
      const handle = await fsp.open(aside, 'r');
      let bytes: number;
      try {
        await handle.sync();
        bytes = (await handle.stat()).size;
      } finally {
        await handle.close();
      }
      await fsp.rename(aside, path.join(this.outbox.dir, name));
      this.outbox.add(name, bytes);
      this.unsynced.shift();
    }
  }

  /**
   * Ends the current generation with its last segment and begins one with a snapshot of the database file.
   * The snapshot is taken once a checkpoint has copied every frame into the file, with the hold then
   * reading the file alone, so no checkpoint can change the file while it is copied and the new
   * generation's first segment starts exactly where the file ends.
   */
  private async startGeneration(): Promise<boolean> {
    const { paths, passphrase } = this.deps;
    const startedAt = this.stamp(1);
    const round = ++this.rounds;
    const id = newGenerationId(startedAt);
    const descriptor = newDescriptor(id);
    const key = await generationKey(passphrase()!, descriptor);
    if (!this.hold) {
      this.hold = new WalHold(paths.database);
      this.deps.autoCheckpoint(false);
    }
    let start: WalPosition | null = null;
    let complete = false;
    for (let attempt = 0; attempt < 50 && !complete; attempt++) {
      const done = this.hold.checkpointAfter(() => {
        if (this.gen && !this.broken) this.shipNew();
        start = this.logEnd();
      });
      complete = done === true;
      if (!complete) await Bun.sleep(20);
    }
    if (!complete) {
      // The current generation goes on; the next round tries again.
      this.deps.log.warn('replication: the database was too busy to checkpoint for a new generation');
      return false;
    }
    const state = readReplicationState(paths.root);
    writeReplicationState(paths.root, { ...state, generations: [...state.generations.slice(-99), id] });
    const secrets = fs.readFileSync(paths.secrets);
    this.gen = { id, key, startedAt, position: start, framesSinceCheckpoint: 0, nextIndex: 1, snapshotBytes: 0, walBytes: 0, secrets };
    this.broken = false;
    // Beside the outbox first, as every object: it is being sent meanwhile, and must see no half-written file.
    const descriptorAside = path.join(this.outbox.dir, `.${objectName.descriptor(id)}`);
    fs.writeFileSync(descriptorAside, JSON.stringify(descriptor), { mode: 0o600 });
    this.unsynced.push({ aside: descriptorAside, name: objectName.descriptor(id) });
    this.writeOutbox(objectName.secrets(id), { kind: 'secrets', generation: id, bytes: secrets.length } satisfies SecretsDescription, (w) =>
      w.write(secrets),
    );
    const db = await fsp.open(paths.database, 'r');
    const aside = path.join(this.outbox.dir, `.${objectName.snapshot(id)}`);
    const out = fs.openSync(aside, 'w', 0o600);
    try {
      const size = (await db.stat()).size;
      const head = Buffer.alloc(18);
      await db.read(head, 0, 18, 0);
      const pageSize = head.readUInt16BE(16);
      const description: SnapshotDescription = {
        kind: 'snapshot',
        generation: id,
        at: startedAt,
        bytes: size,
        pageSize: pageSize === 1 ? 65536 : pageSize,
      };
      // Read a chunk at a time off the event loop: the server keeps answering while a large database is copied.
      const w = new SealedObjectWriter(key, objectName.snapshot(id), out, description);
      const chunk = Buffer.allocUnsafe(COPY_CHUNK);
      for (let offset = 0; offset < size; ) {
        const { bytesRead } = await db.read(chunk, 0, Math.min(COPY_CHUNK, size - offset), offset);
        if (bytesRead === 0) throw new Error('the database file shrank while it was copied');
        w.write(chunk.subarray(0, bytesRead));
        offset += bytesRead;
      }
      w.finish();
      this.gen.snapshotBytes = w.bytes;
      this.unsynced.push({ aside, name: objectName.snapshot(id) });
      this.readRound = Math.max(this.readRound, round);
    } catch (err) {
      fs.rmSync(aside, { force: true });
      throw err;
    } finally {
      fs.closeSync(out);
      await db.close();
    }
    await this.settle();
    this.problem = null;
    this.deps.log.info('replication: generation started', { generation: id, destination: this.store.where });
    return true;
  }

  /**
   * Whether every commit made before the first call with `key` is at the destination, waiting up to `waitMs` for it:
   * what a restore or a promoted standby would hold. True at once when this process does not ship (a command beside
   * the server), no longer may (another server took the fence over), or stopped shipping (a full disk, a dropped
   * backlog: the admin is told, and the space deletions free may be what it needs to start again).
   */
  async reached(key: string, waitMs: number): Promise<boolean> {
    if (!this.started || this.fenced || this.broken) {
      this.marks.delete(key);
      this.misses.delete(key);
      return true;
    }
    let mark = this.marks.get(key);
    if (mark === undefined) {
      mark = this.rounds + 1;
      this.marks.set(key, mark);
    }
    for (const until = performance.now() + waitMs; this.shippedRound < mark; await Bun.sleep(20)) {
      if (this.fenced || this.broken) break;
      // The destination failing: not within the wait, so the caller's slot is not held for it.
      if (this.stopped || this.uploadFailures > 0 || performance.now() >= until) return false;
    }
    this.marks.delete(key);
    this.misses.delete(key);
    return true;
  }

  /**
   * After reached(key) answered false: how long the waiter should wait before asking again, 5 s doubling with each
   * miss up to 5 minutes; onCaughtUp calls it back as soon as its commit is at the destination.
   */
  retryAfterMs(key: string): number {
    const n = (this.misses.get(key) ?? 0) + 1;
    this.misses.set(key, n);
    return Math.min(WAITER_RETRY_MAX_MS, WAITER_RETRY_MS * 2 ** (n - 1));
  }

  /** Calls `listener` when the commit a waiter that was told to wait (retryAfterMs) waits for is at the destination. */
  onCaughtUp(listener: () => void): void {
    this.caughtUpListeners.push(listener);
  }

  /** The waiters put back whose commit is now at the destination: their backoff ends, and the listeners run them now. */
  private callBackWaiters(): void {
    let due = false;
    for (const key of this.misses.keys()) {
      const mark = this.marks.get(key);
      if (mark !== undefined && mark > this.shippedRound) continue;
      this.misses.delete(key);
      due = true;
    }
    if (!due) return;
    for (const listener of this.caughtUpListeners) listener();
  }

  /** Sends the outbox in order; true when it is empty afterwards. */
  private async upload(): Promise<boolean> {
    const { clock, log } = this.deps;
    if (this.fenced || clock.now() < this.nextUploadAt) return false;
    for (const name of this.outbox.names()) {
      const file = path.join(this.outbox.dir, name);
      try {
        const object = parseObjectName(name)!;
        const begins = object.kind === 'descriptor';
        if (!(await this.checkFence(object.generation, begins))) return false;
        await this.store.putFile(name, file, { begins });
      } catch (err) {
        // Dropped meanwhile by a round (the backlog over REPLICATE_MAX_LAG_BYTES): nothing failed.
        if (!fs.existsSync(file)) return false;
        this.failures.inc();
        this.uploadFailures++;
        this.nextUploadAt = clock.now() + Math.min(MAX_BACKOFF_MS, this.deps.config.intervalMs * 2 ** this.uploadFailures);
        this.problem = `The replica destination ${this.store.where} cannot be written to: ${err instanceof Error ? err.message : String(err)}`;
        if (this.uploadFailures === 1) log.warn('replication: the destination failed; changes wait on disk', { error: String(err) });
        return false;
      }
      this.outbox.remove(name);
      this.lastShippedAt = clock.now();
      if (this.uploadFailures > 0) log.info('replication: the destination is back', { after: this.uploadFailures });
      this.uploadFailures = 0;
      if (!this.broken) this.problem = null;
    }
    return true;
  }

  /**
   * Before each object goes out: the fence must name a generation of this data directory (or none, or this
   * one taking over after a promotion), else another server was promoted and this one stops shipping for good.
   */
  private async checkFence(generation: string, begins: boolean): Promise<boolean> {
    const fence = await this.readFence();
    if (fence?.generation === generation) return true;
    const state = readReplicationState(this.deps.paths.root);
    if (fence && takenOver(fence, state)) {
      this.fence(fence);
      return false;
    }
    const next: Fence = { generation, since: new Date(this.deps.clock.now()).toISOString() };
    await this.store.putBytes(FENCE_NAME, new TextEncoder().encode(JSON.stringify(next)), { begins });
    if (state.takeover) writeReplicationState(this.deps.paths.root, { ...state, takeover: false });
    return true;
  }

  private async readFence(): Promise<Fence | null> {
    const bytes = await this.store.getBytes(FENCE_NAME);
    return bytes ? (JSON.parse(new TextDecoder().decode(bytes)) as Fence) : null;
  }

  private fencedMessage(fence: Fence): string {
    return `Another server took over the replica at ${this.store.where} (its generation ${fence.generation}, since ${fence.since}): this server no longer ships to it; point REPLICATE_TO elsewhere, or run this box as a standby`;
  }

  /** Found while sending, beside a round: the next round stands down (standDown). */
  private fence(fence: Fence): void {
    this.problem = this.fencedMessage(fence);
    this.deps.log.error('replication: refused by the fence at the destination', { destination: this.store.where, fence: fence.generation });
    this.fenced = true;
  }

  /** Fenced: nothing more is shipped, the log goes back to SQLite, and what waited in the outbox goes. */
  private standDown(): void {
    this.broken = true;
    this.dropReads();
    this.unsynced = [];
    this.gen = null;
    this.releaseHold();
    this.outbox.clear();
  }

  /**
   * Deletes generations no moment within REPLICATE_RETENTION needs: those whose successor began before it; and
   * what a write a crash cut off left at the destination (a snapshot's partial copy is as large as the database).
   */
  private async prune(): Promise<void> {
    this.lastPruneAt = this.deps.clock.now();
    const interrupted = await this.store.sweepInterrupted(this.lastPruneAt - INTERRUPTED_WRITE_AGE_MS);
    if (interrupted) this.deps.log.info('replication: removed what interrupted writes left at the destination', { count: interrupted });
    const objects = await this.store.list();
    const generations = [...new Set(objects.map((o) => parseObjectName(o.name)?.generation).filter((g): g is string => !!g))].sort();
    const complete = new Set(
      objects.filter((o) => parseObjectName(o.name)?.kind === 'snapshot').map((o) => parseObjectName(o.name)!.generation),
    );
    const cutoff = this.deps.retentionClock.now() - this.deps.config.retentionMs;
    let keepFrom = 0;
    for (let i = 0; i < generations.length; i++) {
      if (complete.has(generations[i]!) && generationTime(generations[i]!) <= cutoff) keepFrom = i;
    }
    const doomed = new Set(generations.slice(0, keepFrom));
    for (const o of objects) {
      const g = parseObjectName(o.name)?.generation;
      if (g && doomed.has(g)) await this.store.delete(o.name);
    }
  }

  /**
   * What REPLICATE_MAX_LAG_BYTES bounds: the segments, and every object of a generation before the current one
   * (each start and each day begins one, so a destination away across restarts would otherwise pile up snapshots).
   */
  private laggingBytes(): number {
    const g = this.gen;
    if (!g) return this.outbox.segmentBytes();
    const current = [objectName.descriptor(g.id), objectName.secrets(g.id), objectName.snapshot(g.id)];
    return this.outbox.bytes() - current.reduce((sum, name) => sum + this.outbox.sizeOf(name), 0);
  }

  private lagSeconds(outbox: ReplicaOutbox = this.outbox): number {
    const oldest = outbox.oldestSegmentAt();
    if (oldest !== null) return Math.max(0, (this.deps.clock.now() - oldest) / 1000);
    // Stopped or fenced before anything went out since the start: behind since then, not up to date.
    if (this.broken) return Math.max(0, (this.deps.clock.now() - (this.lastShippedAt || this.shippingSince)) / 1000);
    return 0;
  }

  status(): ReplicationStatus {
    const lagSeconds = this.lagSeconds();
    return {
      destination: this.store.where,
      generation: this.gen?.id ?? null,
      lagSeconds,
      lastShippedAt: this.lastShippedAt ? new Date(this.lastShippedAt).toISOString() : null,
      backlogBytes: this.outbox.bytes(),
      warning: this.problem ?? this.behind(lagSeconds),
    };
  }

  private behind(lagSeconds: number): string | null {
    if (lagSeconds * 1000 <= Math.max(BEHIND_MS, 10 * this.deps.config.intervalMs)) return null;
    return `The replica is ${Math.round(lagSeconds)} s behind: changes wait on this server's disk`;
  }

  /**
   * What `coffer doctor` sees of replication from beside the server, or with it stopped: what waits in the
   * outbox and since when, whether the destination answers, and whether another server took it over.
   */
  async inspect(): Promise<ReplicationCheck> {
    const outbox = new ReplicaOutbox(this.outbox.dir).load();
    const lagSeconds = this.lagSeconds(outbox);
    let problem: string | null = null;
    try {
      const fence = await this.readFence();
      if (fence && takenOver(fence, readReplicationState(this.deps.paths.root))) problem = this.fencedMessage(fence);
    } catch (err) {
      problem = `The replica destination ${this.store.where} cannot be read: ${err instanceof Error ? err.message : String(err)}`;
    }
    return { destination: this.store.where, lagSeconds, backlogBytes: outbox.bytes(), warning: problem ?? this.behind(lagSeconds) };
  }
}
