import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { type Config, type ReplicaDestination, secretText } from '../../config.ts';
import { type Clock, systemClock } from '../../clock.ts';
import { type DataPaths, dataPaths } from '../../data-dir.ts';
import { StartupError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { applySegments, build, checkDatabase, type GenerationObjects, inventory, isComplete, keyOf } from './replica-restore.ts';
import { replicaStore, type ReplicaStore } from './replica-store.ts';
import { numberChangesAfresh } from './restore.ts';
import { objectName } from './replica-format.ts';
import { readReplicationState, writeReplicationState } from './replication.ts';

/** The latest time a segment's name can hold: every name of a later segment sorts after it. */
const LAST_AT = 9_999_999_999_999;

interface Following {
  generation: string;
  key: Buffer;
  pageSize: number;
  /** The last segment applied (0: the snapshot alone). */
  applied: number;
  /** When the last applied change was shipped. */
  appliedAt: number;
}

export interface StandbyStatus {
  destination: string;
  generation: string | null;
  appliedSegments: number;
  /** When the newest change applied here was shipped. */
  appliedAt: string | null;
  /** Seconds between the newest change at the destination and the newest applied here (0: caught up). */
  lagSeconds: number;
  lastCheckAt: string | null;
  problem: string | null;
}

/**
 * `coffer serve --standby DEST`: keeps a data directory's database a copy of the replica's newest state,
 * applying each shipped segment to the database file as a checkpoint would (nothing opens it meanwhile),
 * and starting over from a new generation's snapshot when the primary begins one. `promote` applies what
 * is left and marks the data directory to take the destination over.
 */
export class StandbyFollower {
  private following: Following | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private newestAt = 0;
  private lastCheckAt = 0;
  private problem: string | null = null;

  constructor(
    private readonly deps: {
      store: ReplicaStore;
      paths: DataPaths;
      passphrase: string;
      clock: Clock;
      log: Logger;
      intervalMs: number;
    },
  ) {}

  /** The first sync (the whole database when this directory holds none yet), then one every interval. */
  async start(): Promise<void> {
    fs.mkdirSync(this.deps.paths.root, { recursive: true, mode: 0o700 });
    fs.mkdirSync(this.deps.paths.blobs, { recursive: true, mode: 0o700 });
    // What a standby killed while it built a generation left: as large as the database, and never to be finished.
    for (const name of fs.readdirSync(this.deps.paths.root)) {
      if (name.startsWith('.standby-')) fs.rmSync(path.join(this.deps.paths.root, name), { force: true });
    }
    await this.sync();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sync()
        .catch((err) => {
          this.problem = err instanceof Error ? err.message : String(err);
          this.deps.log.warn('standby: following the replica failed; trying again', { error: this.problem });
        })
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, this.deps.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /**
   * Applies what the destination holds beyond what is applied here. While a generation is followed, only the
   * names after its last applied segment are listed (its next segments, and any later generation): a replica
   * keeps REPLICATE_RETENTION of segments, up to a day's 86,400 per generation, and listing them all every
   * interval took two thirds of a core per day of them.
   */
  private async sync(): Promise<void> {
    const { store, clock } = this.deps;
    const f = this.following;
    const listed = await inventory(store, f ? objectName.wal(f.generation, f.applied, LAST_AT) : undefined);
    this.lastCheckAt = clock.now();
    const newest = listed.filter(isComplete).at(-1);
    if (newest && newest.generation !== f?.generation) {
      this.newestAt = newest.segments.at(-1)?.at ?? newest.startedAt;
      await this.rebuild(newest);
    } else if (f) {
      const next = listed.find((g) => g.generation === f.generation);
      this.newestAt = next?.segments.at(-1)?.at ?? f.appliedAt;
      if (next) await this.apply(next);
    } else {
      this.problem = `there is no complete replica generation at ${store.where} yet`;
      return;
    }
    this.problem = null;
  }

  private async rebuild(g: GenerationObjects): Promise<void> {
    const { store, paths, passphrase, log } = this.deps;
    const building = path.join(paths.root, `.standby-${process.pid}.db`);
    fs.rmSync(building, { force: true });
    try {
      const { secrets, applied, stateAt } = await build(store, g, passphrase, building, Number.POSITIVE_INFINITY);
      checkDatabase(building, g.generation);
      // Beside the database being built, under a name a start removes: a kill before the rename leaves nothing that stops the next start.
      const secretsAside = `${building}.secrets`;
      fs.writeFileSync(secretsAside, secrets, { mode: 0o600 });
      fs.renameSync(secretsAside, paths.secrets);
      for (const suffix of ['-wal', '-shm']) fs.rmSync(`${paths.database}${suffix}`, { force: true });
      fs.renameSync(building, paths.database);
      const head = Buffer.alloc(18);
      const fd = fs.openSync(paths.database, 'r');
      fs.readSync(fd, head, 0, 18, 0);
      fs.closeSync(fd);
      const raw = head.readUInt16BE(16);
      const key = await keyOf(store, g.generation, passphrase);
      this.following = { generation: g.generation, key, pageSize: raw === 1 ? 65536 : raw, applied: applied, appliedAt: stateAt };
      log.info('standby: following a generation', { generation: g.generation, segments: applied });
    } finally {
      fs.rmSync(building, { force: true });
      fs.rmSync(`${building}.secrets`, { force: true });
    }
  }

  private async apply(g: GenerationObjects): Promise<void> {
    const f = this.following!;
    const next = g.segments.filter((s) => s.index > f.applied);
    if (next.length === 0) return;
    if (next[0]!.index !== f.applied + 1) {
      // A gap: a segment is missing, so this generation cannot be followed further; its snapshot is read again.
      this.following = null;
      throw new Error(`segment ${f.applied + 1} of generation ${g.generation} is missing at ${this.deps.store.where}`);
    }
    const fd = fs.openSync(this.deps.paths.database, 'r+');
    try {
      const contiguous = next.filter((s, i) => s.index === f.applied + 1 + i);
      await applySegments(this.deps.store, f.key, g.generation, contiguous, fd, f.pageSize, (s) => {
        f.applied = s.index;
        f.appliedAt = s.at;
      });
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  status(): StandbyStatus {
    const f = this.following;
    return {
      destination: this.deps.store.where,
      generation: f?.generation ?? null,
      appliedSegments: f?.applied ?? 0,
      appliedAt: f ? new Date(f.appliedAt).toISOString() : null,
      lagSeconds: f ? Math.max(0, (this.newestAt - f.appliedAt) / 1000) : 0,
      lastCheckAt: this.lastCheckAt ? new Date(this.lastCheckAt).toISOString() : null,
      problem: this.problem,
    };
  }

  /**
   * Stops following, applies the last segments, and marks the directory to take the destination over: the
   * server started on it next replicates there under a new generation and moves the fence. The database was
   * checked when the generation was first built; each segment since is authenticated, so promotion does
   * not read the whole database again.
   */
  async promote(): Promise<StandbyStatus> {
    await this.stop();
    let f: Following | null;
    try {
      await this.sync();
      f = this.following;
      if (!f) throw new Error(`nothing to promote: there is no complete replica generation at ${this.deps.store.where}`);
    } catch (err) {
      // Not promoted: the standby goes on following, as it did before it was asked.
      this.problem = err instanceof Error ? err.message : String(err);
      this.stopped = false;
      this.schedule();
      throw err;
    }
    // The dead primary may have handed out seqs in its last interval that never shipped.
    numberChangesAfresh(this.deps.paths.database);
    const state = readReplicationState(this.deps.paths.root);
    writeReplicationState(this.deps.paths.root, {
      generations: [...state.generations, f.generation],
      takeover: true,
      stampedUpTo: Math.max(state.stampedUpTo ?? 0, f.appliedAt),
      promotedFrom: this.deps.store.where,
    });
    fs.rmSync(path.join(this.deps.paths.root, 'replication', 'standby'), { recursive: true, force: true });
    return this.status();
  }
}

/** A data directory a standby may follow into: empty, new, or one a standby wrote (a database and no server lock). */
function checkStandbyDir(paths: DataPaths): void {
  if (!fs.existsSync(paths.root)) return;
  if (!fs.statSync(paths.root).isDirectory())
    throw new StartupError(`${paths.root} is not a directory: a standby follows into an empty data directory`);
  const names = fs.readdirSync(paths.root).filter((n) => !n.startsWith('.'));
  const standbyOwn = new Set(['coffer.db', 'secrets.json', 'blobs', 'replication', 'coffer.lock']);
  const foreign = names.filter((n) => !standbyOwn.has(n));
  if (foreign.length) {
    throw new StartupError(`${paths.root} holds ${foreign[0]}: a standby follows into an empty data directory, or one it wrote`);
  }
  if (names.includes('coffer.db') && !fs.existsSync(path.join(paths.root, 'replication', 'standby'))) {
    throw new StartupError(`${paths.root} holds a database that is not a standby's: start the standby on an empty data directory`);
  }
}

/**
 * The data directory is a standby of `dest` that was promoted: `coffer serve --standby DEST` (the unit that ran
 * the standby, after a reboot) then starts it as the primary it became, replicating to DEST.
 */
export function promotedFrom(config: Config, dest: ReplicaDestination): boolean {
  return readReplicationState(dataPaths(config.dataDir).root).promotedFrom === replicaStore(dest, os.tmpdir()).where;
}

/** The follower a `coffer serve --standby DEST` runs, on the configured data directory. */
export function createStandby(config: Config, dest: ReplicaDestination, log: Logger): StandbyFollower {
  const paths = dataPaths(config.dataDir);
  checkStandbyDir(paths);
  const file = config.backup.passphraseFile;
  if (!file) throw new StartupError('BACKUP_PASSPHRASE_FILE is required for a standby: the replica is sealed with its passphrase');
  fs.mkdirSync(path.join(paths.root, 'replication', 'standby'), { recursive: true, mode: 0o700 });
  return new StandbyFollower({
    store: replicaStore(dest, os.tmpdir()),
    paths,
    passphrase: secretText({ source: 'file', path: file }, 'BACKUP_PASSPHRASE_FILE'),
    clock: systemClock,
    log,
    intervalMs: config.replication.intervalMs,
  });
}
