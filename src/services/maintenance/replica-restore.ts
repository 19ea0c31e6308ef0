import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataPaths } from '../../data-dir.ts';
import { knownMigration } from '../../db/migrations.ts';
import { DatabaseRepo } from '../../db/repos/database.ts';
import { type AppError, badRequest } from '../../errors.ts';
import { formatSize } from '../../contract/size.ts';
import { isDiskFullError } from '../files/disk-space.ts';
import { isAlive } from '../../lib/pid.ts';
import {
  FENCE_NAME,
  type Fence,
  type GenerationDescriptor,
  generationKey,
  generationTime,
  objectName,
  openObject,
  parseObjectName,
  ReplicaDamagedError,
  type SecretsDescription,
  type SegmentDescription,
  type SnapshotDescription,
} from './replica-format.ts';
import type { ReplicaStore } from './replica-store.ts';
import { writeReplicationState } from './replication.ts';
import { emptyAgain, giveToOwnerOf, isEmptyDir, numberChangesAfresh, type PassphraseSource } from './restore.ts';

export interface Segment {
  name: string;
  index: number;
  at: number;
}

export interface GenerationObjects {
  generation: string;
  startedAt: number;
  descriptor: boolean;
  snapshot: boolean;
  secrets: boolean;
  /** In index order. */
  segments: Segment[];
  bytes: number;
}

interface ReplicaGenerationView {
  generation: string;
  startedAt: string;
  /** Its descriptor, snapshot and secrets are all there: it can be restored from. */
  complete: boolean;
  segments: number;
  /** When its last segment was shipped (its start when it has none). */
  lastAt: string;
  bytes: number;
}

export interface ReplicaListing {
  destination: string;
  generations: ReplicaGenerationView[];
  /** The moments a restore can reach, from the oldest complete generation's start to the last shipment. */
  restorable: { from: string; to: string } | null;
}

/** The generations at a destination; with `startAfter`, only the objects whose names sort after it. */
export async function inventory(store: ReplicaStore, startAfter?: string): Promise<GenerationObjects[]> {
  let objects: Array<{ name: string; size: number }>;
  try {
    objects = await store.list(startAfter);
  } catch (err) {
    throw badRequest(`the replica at ${store.where} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  const byGeneration = new Map<string, GenerationObjects>();
  for (const { name, size } of objects) {
    const o = parseObjectName(name);
    if (!o) continue;
    let g = byGeneration.get(o.generation);
    if (!g) {
      g = {
        generation: o.generation,
        startedAt: generationTime(o.generation),
        descriptor: false,
        snapshot: false,
        secrets: false,
        segments: [],
        bytes: 0,
      };
      byGeneration.set(o.generation, g);
    }
    g.bytes += size;
    if (o.kind === 'wal') g.segments.push({ name, index: o.index, at: o.at });
    else g[o.kind] = true;
  }
  const generations = [...byGeneration.values()].sort((a, b) => (a.generation < b.generation ? -1 : 1));
  for (const g of generations) g.segments.sort((a, b) => a.index - b.index);
  return generations;
}

export const isComplete = (g: GenerationObjects) => g.descriptor && g.snapshot && g.secrets;
const lastAt = (g: GenerationObjects) => g.segments.at(-1)?.at ?? g.startedAt;

/** `coffer replica list`: the generations at a destination and the range of moments a restore can reach. */
export async function listReplica(store: ReplicaStore): Promise<ReplicaListing> {
  const generations = await inventory(store);
  const complete = generations.filter(isComplete);
  return {
    destination: store.where,
    generations: generations.map((g) => ({
      generation: g.generation,
      startedAt: new Date(g.startedAt).toISOString(),
      complete: isComplete(g),
      segments: g.segments.length,
      lastAt: new Date(lastAt(g)).toISOString(),
      bytes: g.bytes,
    })),
    restorable: complete.length
      ? { from: new Date(complete[0]!.startedAt).toISOString(), to: new Date(Math.max(...complete.map(lastAt))).toISOString() }
      : null,
  };
}

/** Segments must run 1, 2, 3…: a gap is a removed segment, named so the operator can look for it. */
function checkSequence(g: GenerationObjects): void {
  g.segments.forEach((s, i) => {
    if (s.index !== i + 1) {
      throw new ReplicaDamagedError(
        objectName.wal(g.generation, i + 1, 0).replace(/_\d{13}$/, ''),
        `is missing: segment ${i + 1} of generation ${g.generation} is gone (the next one there is ${s.index})`,
      );
    }
  });
}

async function read(store: ReplicaStore, name: string): Promise<AsyncIterable<Uint8Array>> {
  const body = await store.get(name);
  if (!body) throw new ReplicaDamagedError(name, 'is missing');
  return body;
}

export async function keyOf(store: ReplicaStore, generation: string, passphrase: string): Promise<Buffer> {
  const name = objectName.descriptor(generation);
  const bytes = await store.getBytes(name);
  if (!bytes) throw new ReplicaDamagedError(name, 'is missing');
  let descriptor: GenerationDescriptor;
  try {
    descriptor = JSON.parse(new TextDecoder().decode(bytes)) as GenerationDescriptor;
  } catch {
    throw new ReplicaDamagedError(name, 'is not JSON');
  }
  if (descriptor.generation !== generation) throw new ReplicaDamagedError(name, 'describes another generation');
  return generationKey(passphrase, descriptor);
}

/** Writes a generation's snapshot to `file`; returns its page size. */
async function writeSnapshot(store: ReplicaStore, key: Buffer, generation: string, file: string): Promise<number> {
  const name = objectName.snapshot(generation);
  const { description, reader } = await openObject<SnapshotDescription>(key, name, await read(store, name));
  if (description.kind !== 'snapshot' || description.generation !== generation)
    throw new ReplicaDamagedError(name, 'describes another object');
  const free = freeBytes(path.dirname(file));
  if (free < description.bytes) throw tooSmall(path.dirname(file), free, description.bytes);
  const fd = fs.openSync(file, 'wx', 0o600);
  let bytes = 0;
  try {
    for await (const chunk of reader.rest()) {
      bytes += chunk.length;
      fs.writeSync(fd, chunk);
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (bytes !== description.bytes) throw new ReplicaDamagedError(name, `holds ${bytes} bytes, not the ${description.bytes} it describes`);
  return description.pageSize;
}

async function readSecrets(store: ReplicaStore, key: Buffer, generation: string): Promise<Buffer> {
  const name = objectName.secrets(generation);
  const { description, reader } = await openObject<SecretsDescription>(key, name, await read(store, name));
  const parts: Buffer[] = [];
  for await (const chunk of reader.rest()) parts.push(chunk);
  const secrets = Buffer.concat(parts);
  if (description.kind !== 'secrets' || description.generation !== generation || secrets.length !== description.bytes) {
    throw new ReplicaDamagedError(name, 'does not match its description');
  }
  return secrets;
}

function freeBytes(dir: string): number {
  const { bavail, bsize } = fs.statfsSync(dir);
  return bavail * bsize;
}

/** The disk a replica's database is built on cannot hold it: said so, with the sizes, rather than as ENOSPC. */
function tooSmall(dir: string, free: number, needed: number): AppError {
  return badRequest(
    `${dir} had ${formatSize(free)} free, and the replica's database needs more than ${formatSize(needed)} there: free some space, or restore onto a larger disk`,
  );
}

/** Segments fetched at once while earlier ones are applied: a bucket's latency, not its bandwidth, bounds a day of small segments. */
const PREFETCH = 16;

/**
 * Applies segments, in order, to the database file as a checkpoint would (each page written where it
 * belongs, then the file cut to the database's size); `applied` is told of each one done.
 */
export async function applySegments(
  store: ReplicaStore,
  key: Buffer,
  generation: string,
  segments: Segment[],
  fd: number,
  pageSize: number,
  applied: (s: Segment) => void,
): Promise<void> {
  const fetches: Array<Promise<Uint8Array | null>> = [];
  const fetch = (i: number) => {
    if (i < segments.length) fetches[i] = store.getBytes(segments[i]!.name);
  };
  for (let i = 0; i < PREFETCH; i++) fetch(i);
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const bytes = await fetches[i]!;
    delete fetches[i];
    fetch(i + PREFETCH);
    if (!bytes) throw new ReplicaDamagedError(segment.name, 'is missing');
    const { description: d, reader } = await openObject<SegmentDescription>(key, segment.name, [bytes]);
    if (d.kind !== 'wal' || d.generation !== generation || d.index !== segment.index || d.at !== segment.at || d.pageSize !== pageSize) {
      throw new ReplicaDamagedError(segment.name, 'does not match its name or its generation');
    }
    for (let f = 0; f < d.frames; f++) {
      const frame = await reader.read(4 + pageSize);
      if (!frame) throw new ReplicaDamagedError(segment.name, 'was cut short');
      const pgno = frame.readUInt32BE(0);
      if (pgno < 1) throw new ReplicaDamagedError(segment.name, 'names page 0');
      fs.writeSync(fd, frame, 4, pageSize, (pgno - 1) * pageSize);
    }
    if ((await reader.read(1)) !== null) throw new ReplicaDamagedError(segment.name, 'holds more than it describes');
    fs.ftruncateSync(fd, d.dbPages * pageSize);
    applied(segment);
  }
}

/** Builds a generation's database at `file` through its segments shipped by `until`; returns the last one applied. */
export async function build(
  store: ReplicaStore,
  g: GenerationObjects,
  passphrase: string,
  file: string,
  until: number,
): Promise<{ secrets: Buffer; applied: number; stateAt: number; seconds: { snapshot: number; segments: number } }> {
  checkSequence(g);
  const started = performance.now();
  const key = await keyOf(store, g.generation, passphrase);
  const secrets = await readSecrets(store, key, g.generation);
  let applied = 0;
  let stateAt = g.startedAt;
  let snapshotDone = started;
  const free = freeBytes(path.dirname(file));
  try {
    const pageSize = await writeSnapshot(store, key, g.generation, file);
    snapshotDone = performance.now();
    const fd = fs.openSync(file, 'r+');
    try {
      // A prefix: segments apply only in order, even where a clock set back stamped a later one earlier.
      const end = g.segments.findIndex((s) => s.at > until);
      const due = end === -1 ? g.segments : g.segments.slice(0, end);
      await applySegments(store, key, g.generation, due, fd, pageSize, (s) => {
        applied++;
        stateAt = s.at;
      });
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if (isDiskFullError(err)) throw tooSmall(path.dirname(file), free, fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0);
    throw err;
  }
  const seconds = { snapshot: (snapshotDone - started) / 1000, segments: (performance.now() - snapshotDone) / 1000 };
  return { secrets, applied, stateAt, seconds };
}

/** The database a replica built passes its integrity check and has a schema this Coffer knows. */
export function checkDatabase(file: string, generation: string): string {
  const { integrity, facts } = DatabaseRepo.inspectSnapshot(file);
  // Opened read-only, a database in WAL mode leaves its (empty) log and index beside it under its building name.
  for (const suffix of ['-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
  if (!facts)
    throw new ReplicaDamagedError(
      objectName.snapshot(generation),
      `the database built from it fails its integrity check: ${integrity.join('; ')}`,
    );
  if (!knownMigration(facts.schema)) {
    throw badRequest(`the replica's database has schema ${facts.schema}, newer than this Coffer knows: use that version or later`);
  }
  return facts.schema;
}

export interface ReplicaRestoreResult {
  dataDir: string;
  generation: string;
  /** When the last change in the restored state was shipped. */
  stateAt: string;
  segments: number;
  schema: string;
  /** Where the time went: the snapshot (with the key), the segments, the integrity check. */
  seconds: { snapshot: number; segments: number; check: number };
}

function sameMoment(at: number | undefined): number {
  return at === undefined ? Number.POSITIVE_INFINITY : at;
}

/**
 * What a restore cut off part-way (Ctrl-C, kill -9) left: the hidden database it was building, as large as the
 * replica's, whose process is gone. `ls` does not show it, so the directory looked empty and was refused as not.
 */
function removeInterruptedRestores(root: string): void {
  for (const name of fs.readdirSync(root)) {
    const pid = /^\.replica-restore-(\d+)\.db(?:-wal|-shm|-journal)?$/.exec(name)?.[1];
    if (pid && !isAlive(Number(pid))) fs.rmSync(path.join(root, name), { force: true });
  }
}

/**
 * `coffer restore --from-replica`: the newest state, or the state as shipped by `at`, into an empty or new
 * data directory (database and secrets.json). The database is built and checked (integrity, schema)
 * before it is moved into place; on any failure the directory is left as it was found.
 */
export async function restoreFromReplica(
  store: ReplicaStore,
  dataDir: string,
  opts: { at?: number; passphrase: PassphraseSource },
): Promise<ReplicaRestoreResult> {
  const root = path.resolve(dataDir);
  const existed = fs.existsSync(root);
  if (existed && !fs.statSync(root).isDirectory()) throw badRequest(`${root} is not a directory`);
  if (existed) removeInterruptedRestores(root);
  if (existed && !isEmptyDir(root)) {
    throw badRequest(`${root} is not empty: restore only into an empty or new directory (move the old data directory aside first)`);
  }
  const until = sameMoment(opts.at);
  const complete = (await inventory(store)).filter(isComplete);
  if (complete.length === 0) throw badRequest(`there is no complete replica generation at ${store.where}`);
  const g = complete.filter((c) => c.startedAt <= until).at(-1);
  if (!g) throw badRequest(`the replica reaches back only to ${new Date(complete[0]!.startedAt).toISOString()}`);
  const passphrase = await opts.passphrase();
  const paths = dataPaths(root);
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  const building = path.join(root, `.replica-restore-${process.pid}.db`);
  try {
    const { secrets, applied, stateAt, seconds } = await build(store, g, passphrase, building, until);
    numberChangesAfresh(building);
    const checking = performance.now();
    const schema = checkDatabase(building, g.generation);
    const check = (performance.now() - checking) / 1000;
    fs.mkdirSync(paths.blobs, { mode: 0o700 });
    fs.writeFileSync(paths.secrets, secrets, { mode: 0o600, flag: 'wx' });
    fs.renameSync(building, paths.database);
    // Started with REPLICATE_TO on the same replica, it takes the fence over from the server it was restored from.
    const fence = await fenceAt(store);
    writeReplicationState(root, {
      generations: [...new Set([g.generation, ...(fence ? [fence.generation] : [])])],
      stampedUpTo: Math.max(stateAt, ...complete.map((c) => c.segments.at(-1)?.at ?? c.startedAt)),
    });
    giveToOwnerOf(root);
    return {
      dataDir: root,
      generation: g.generation,
      stateAt: new Date(stateAt).toISOString(),
      segments: applied,
      schema,
      seconds: { ...seconds, check },
    };
  } catch (err) {
    if (existed) emptyAgain(root);
    else fs.rmSync(root, { recursive: true, force: true });
    throw withEarlierMoment(err, g);
  }
}

/** A damaged segment: the message also names the moment before it, which a restore `--at` still reaches. */
function withEarlierMoment(err: unknown, g: GenerationObjects): unknown {
  if (!(err instanceof ReplicaDamagedError)) return err;
  const damaged = parseObjectName(err.object);
  if (damaged?.kind !== 'wal') return err;
  // --at counts to the end of the second it names: the second before the damaged segment's.
  const before = Math.floor(damaged.at / 1000) * 1000 - 1000;
  // That second reaches the generation when it ends at or after its start (which may fall within it).
  if (before + 999 < g.startedAt) return err;
  const at = new Date(before).toISOString().replace('.000Z', 'Z');
  return new ReplicaDamagedError(err.object, `${err.reason}; the state before it is restorable with --at ${at}`);
}

async function fenceAt(store: ReplicaStore): Promise<Fence | null> {
  const bytes = await store.getBytes(FENCE_NAME);
  try {
    return bytes ? (JSON.parse(new TextDecoder().decode(bytes)) as Fence) : null;
  } catch {
    return null;
  }
}

export interface ReplicaVerifyResult extends ReplicaListing {
  /** Generations read through and checked; segments authenticated and applied. */
  checked: { generations: number; segments: number };
}

/**
 * `coffer replica verify`: every complete generation is rebuilt in a temporary directory, every object
 * authenticated, the segments checked for gaps, and each built database integrity-checked.
 */
export async function verifyReplica(
  store: ReplicaStore,
  opts: { passphrase: PassphraseSource; tempDir?: string },
): Promise<ReplicaVerifyResult> {
  const listing = await listReplica(store);
  const complete = (await inventory(store)).filter(isComplete);
  if (complete.length === 0) throw badRequest(`there is no complete replica generation at ${store.where}`);
  const passphrase = await opts.passphrase();
  const scratch = fs.mkdtempSync(path.join(opts.tempDir ?? os.tmpdir(), 'coffer-replica-verify-'));
  let segments = 0;
  try {
    for (const g of complete) {
      const file = path.join(scratch, `${g.generation}.db`);
      segments += (await build(store, g, passphrase, file, Number.POSITIVE_INFINITY)).applied;
      checkDatabase(file, g.generation);
      fs.rmSync(file, { force: true });
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return { ...listing, checked: { generations: complete.length, segments } };
}
