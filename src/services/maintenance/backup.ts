import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../clock.ts';
import { type DataPaths, isDataDirOwnFile } from '../../data-dir.ts';
import { holdObjectDeletions, objectDeletionsHeld } from '../../storage/deletion-holds.ts';
import { masterKeyIdsIn } from '../../storage/secrets-file.ts';
import { DatabaseRepo } from '../../db/repos/database.ts';
import { AppError, badRequest } from '../../errors.ts';
import { formatSize } from '../../contract/size.ts';
import { embeddedMigrations } from '../../db/migrations.ts';
import type { StorageDriver, StorageLocation } from '../../storage/driver.ts';
import { writeFully } from '../../lib/file-writes.ts';
import { sealWithPassphrase } from '../../lib/passphrase-seal.ts';
import { isAlive } from '../../lib/pid.ts';
import { TAR_END, tarHeader, tarPadding } from '../../lib/tar.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';
import { BACKEND_VERSION } from '../admin/version.ts';

export interface BackupManifest {
  format: 'coffer-backup';
  formatVersion: 1;
  createdAt: string;
  cofferVersion: string;
  /** The schema the snapshot carries (its last migration). */
  schema: string;
  database: { file: string; bytes: number; sha256: string; integrity: 'ok' };
  counts: { users: number; files: number; folders: number; storedBytes: number; auditEvents: number };
  /** Master key ids the snapshot's wrapped data keys need; secrets.json must hold each of them. */
  masterKeyIds: string[];
  /** What this snapshot does not contain and must be copied alongside it: the blobs directory, or the bucket (`s3://bucket/prefix`), and secrets.json. */
  alongside: { blobs: string; secrets: string };
  /** Where the objects are: a bucket's objects are never copied by `coffer backup`. */
  storage: StorageLocation;
  /** The file is sealed under BACKUP_PASSPHRASE_FILE's passphrase; `database` describes what `coffer backup decrypt` gives back. */
  encrypted?: true;
}

/** What a full backup archive says about itself: its first entry, and (with checksums) its last. */
export interface FullBackupHeader {
  format: 'coffer-full-backup';
  formatVersion: 1;
  createdAt: string;
  cofferVersion: string;
  schema: string;
  counts: BackupManifest['counts'];
  masterKeyIds: string[];
  /** Objects (encrypted file contents) the archive carries. */
  objects: number;
  /** Where the objects were read from (a bucket's are in the archive too). */
  storage: StorageLocation;
}

export interface ArchivedFile {
  bytes: number;
  sha256: string;
}

export interface FullBackupManifest extends FullBackupHeader {
  database: ArchivedFile;
  secrets: ArchivedFile;
  /** Every object, by storage key, in archive order. */
  objectSums: Array<ArchivedFile & { key: string }>;
  /** Objects the database names that were already missing from storage (`coffer doctor` lists them too). */
  missingObjects: string[];
  /** Master keys the data keys need that secrets.json does not hold (given by COFFER_MASTER_KEY instead). */
  masterKeysNotInSecrets: string[];
}

/** Entry names inside a full backup archive, in order. */
export const FullBackupEntries = {
  header: 'coffer-backup.json',
  database: 'coffer.db',
  secrets: 'secrets.json',
  objectPrefix: 'objects/',
  manifest: 'manifest.json',
} as const;

export interface BackupProgress {
  /** Bytes written to the archive so far. */
  done: number;
  /** The archive's expected size (from the snapshot's totals). */
  total: number;
}

async function sha256Of(file: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256');
  for await (const chunk of Bun.file(file).stream()) hasher.update(chunk);
  return hasher.digest('hex');
}

/** Throws the abort reason; a signal that came during a synchronous step (the database's snapshot) is handled on the next turn of the event loop. */
async function stopIfAborted(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return;
  await new Promise((resolve) => setImmediate(resolve));
  signal.throwIfAborted();
}

const SINK_BUFFER = 4 * 1024 * 1024;
// How often (in bytes) a full backup looks at its disk's free space again.
const ROOM_CHECK_BYTES = 1024 * 1024;
/** A full backup's database snapshot in the data directory, named with the pid of the process writing it. */
const SNAPSHOT_PREFIX = '.backup-snapshot-';

/** Snapshots left by backups whose process died (a crash, kill -9): removed at server start. */
export function removeStaleBackupSnapshots(paths: DataPaths): void {
  for (const name of fs.readdirSync(paths.root)) {
    if (!name.startsWith(SNAPSHOT_PREFIX)) continue;
    const pid = Number.parseInt(name.slice(SNAPSHOT_PREFIX.length), 10);
    if (!isAlive(pid)) fs.rmSync(path.join(paths.root, name), { force: true });
  }
}

/** Appends to a file in few large writes; counts what it wrote. */
class ArchiveSink {
  private readonly buffer = new Uint8Array(SINK_BUFFER);
  private used = 0;

  constructor(private readonly handle: fsp.FileHandle) {}

  async write(data: Uint8Array): Promise<void> {
    if (this.used + data.length > this.buffer.length) await this.flush();
    if (data.length >= this.buffer.length) {
      await writeFully(this.handle, data);
      return;
    }
    this.buffer.set(data, this.used);
    this.used += data.length;
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    await writeFully(this.handle, this.buffer.subarray(0, this.used));
    this.used = 0;
  }
}

/** Writes a stream to a new file (0600) in few large writes, then syncs it. */
async function writeAll(file: string, body: AsyncIterable<Uint8Array>, signal?: AbortSignal, room?: () => void): Promise<void> {
  const handle = await fsp.open(file, 'wx', 0o600);
  try {
    const sink = new ArchiveSink(handle);
    let written = 0;
    let checked = 0;
    for await (const chunk of body) {
      signal?.throwIfAborted();
      await sink.write(chunk);
      written += chunk.length;
      if (room && written - checked >= ROOM_CHECK_BYTES) {
        checked = written;
        room();
      }
    }
    await sink.flush();
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A full backup that did not fit on the disk of `dir`, or would have taken the database's reserve (`keep`) there. */
export function archiveDiskFull(dir: string, keep: number): AppError {
  const kept = keep ? ` while keeping the ${formatSize(keep)} the database needs on it (COFFER_MIN_FREE_BYTES)` : '';
  return new AppError(
    507,
    `The backup does not fit on the disk of ${dir}${kept}. Free some space there (BACKUP_KEEP keeps fewer scheduled backups) or write backups to another disk (BACKUP_DIR).`,
  );
}

/**
 * `coffer backup`: an online, consistent snapshot of the database (SQLite copies one
 * transaction's view while the server keeps writing), checked, hashed and described by a manifest.
 * Blobs and secrets.json are not in it: docs/backup.md explains how to copy them alongside.
 */
export class BackupService {
  constructor(
    private readonly database: DatabaseRepo,
    private readonly paths: DataPaths,
    private readonly driver: StorageDriver,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly minFreeBytes: number,
  ) {}

  /** Whether a full backup is reading objects now: deleting any must wait. */
  objectDeletionsHeld(): boolean {
    return objectDeletionsHeld(this.paths.holds);
  }

  private checkTarget(target: string, force: boolean | undefined): string {
    const file = path.resolve(target);
    if (file === path.resolve(this.paths.database)) throw badRequest('The backup file cannot be the live database');
    if (isDataDirOwnFile(this.paths, file)) {
      throw badRequest(`${file} is one of the data directory's own files: write the backup outside ${this.paths.root}`);
    }
    // --force replaces a file, never a directory: say so before the archive is written, not at its rename.
    if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
      throw badRequest(`${file} is a directory: name the backup file inside it, e.g. ${path.join(file, 'coffer-backup.tar')}`);
    }
    if (fs.existsSync(file) && !force) throw badRequest(`${file} already exists; choose another name or pass --force to replace it`);
    const dir = path.dirname(file);
    if (!fs.existsSync(dir)) throw badRequest(`directory ${dir} does not exist`);
    return file;
  }

  /**
   * With a passphrase the snapshot is sealed as a full backup is: it holds emails, file names and content-search text.
   * `signal` (Ctrl-C or SIGTERM) stops it between steps, and the unfinished files are removed as a full backup's are.
   */
  async create(
    target: string,
    opts: { force?: boolean; passphrase?: string | null; signal?: AbortSignal } = {},
  ): Promise<{ file: string; manifestFile: string; manifest: BackupManifest }> {
    const file = this.checkTarget(target, opts.force);
    const manifestFile = `${file}.manifest.json`;

    const partial = `${file}.partial-${process.pid}`;
    const sealed = `${file}.sealed-${process.pid}`;
    fs.rmSync(partial, { force: true });
    fs.rmSync(sealed, { force: true });
    try {
      this.database.snapshotTo(partial);
      await stopIfAborted(opts.signal);
      const manifest = await this.describe(partial, path.basename(file));
      await stopIfAborted(opts.signal);
      if (opts.passphrase) {
        await writeAll(sealed, sealWithPassphrase(Bun.file(partial).stream(), opts.passphrase), opts.signal);
        fs.renameSync(sealed, file);
        manifest.encrypted = true;
      } else fs.renameSync(partial, file);
      // Created anew, so --force over an older, wider manifest leaves it 0600 too.
      fs.rmSync(manifestFile, { force: true });
      fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
      this.audit.record({
        action: AuditActions.backupCreate,
        actor: 'cli',
        targetType: 'backup',
        targetId: file,
        details: { bytes: manifest.database.bytes, sha256: manifest.database.sha256, encrypted: Boolean(opts.passphrase) },
      });
      return { file, manifestFile, manifest };
    } finally {
      fs.rmSync(partial, { force: true });
      fs.rmSync(sealed, { force: true });
    }
  }

  /**
   * `coffer backup --full`: one tar archive holding a consistent database snapshot, secrets.json and every
   * object the snapshot names, then a manifest with each part's sha256. Object deletions are held back
   * from before the snapshot until the last object is read, so every object the snapshot names is there.
   * With a passphrase the whole archive is sealed (src/lib/passphrase-seal.ts): nothing in it is readable without it.
   */
  async createFull(
    target: string,
    opts: {
      force?: boolean;
      passphrase?: string | null;
      actor?: 'cli' | 'system';
      signal?: AbortSignal;
      onProgress?: (p: BackupProgress) => void;
    } = {},
  ): Promise<{ file: string; manifest: FullBackupManifest; bytes: number }> {
    const file = this.checkTarget(target, opts.force);
    const partial = `${file}.partial-${process.pid}`;
    fs.rmSync(partial, { force: true });
    const dir = path.dirname(file);
    // On the data directory's disk the archive leaves the database its reserve, as uploads do.
    const keep = fs.statSync(dir).dev === fs.statSync(this.paths.root).dev ? this.minFreeBytes : 0;
    const room = () => {
      const s = fs.statfsSync(dir);
      // What the sink holds is not on the disk yet.
      if (keep && s.bavail * s.bsize - SINK_BUFFER < keep) throw archiveDiskFull(dir, keep);
    };
    try {
      room();
      const archive = this.fullArchive(opts);
      await writeAll(partial, archive.body, undefined, room);
      fs.renameSync(partial, file);
      const { manifest } = archive.result();
      const bytes = fs.statSync(file).size;
      this.recordFull(file, bytes, manifest, Boolean(opts.passphrase), opts.actor);
      return { file, manifest, bytes };
    } finally {
      fs.rmSync(partial, { force: true });
    }
  }

  recordFull(target: string, bytes: number, manifest: FullBackupManifest, encrypted: boolean, actor: 'cli' | 'system' = 'cli'): void {
    this.audit.record({
      action: AuditActions.backupCreate,
      actor,
      targetType: 'backup',
      targetId: target,
      details: { full: true, encrypted, bytes, objects: manifest.objects, databaseSha256: manifest.database.sha256 },
    });
  }

  /**
   * A full archive as a stream (sealed when a passphrase is given); `result()` gives its manifest once the
   * stream has been read to its end. The hold on object deletions lasts while the stream is read.
   */
  fullArchive(opts: { passphrase?: string | null; signal?: AbortSignal; onProgress?: (p: BackupProgress) => void } = {}): {
    body: AsyncIterable<Uint8Array>;
    result: () => { manifest: FullBackupManifest };
    /** Ends the hold and removes the snapshot when a consumer gave up without reading to the end. */
    close: () => Promise<void>;
  } {
    let manifest: FullBackupManifest | null = null;
    const tar = this.fullTar(opts.onProgress, opts.signal, (m) => {
      manifest = m;
    });
    return {
      body: opts.passphrase ? sealWithPassphrase(tar, opts.passphrase) : tar,
      result: () => {
        if (!manifest) throw new Error('the archive was not read to its end');
        return { manifest };
      },
      close: async () => {
        await tar.return(undefined);
      },
    };
  }

  private async *fullTar(
    onProgress: ((p: BackupProgress) => void) | undefined,
    signal: AbortSignal | undefined,
    done: (manifest: FullBackupManifest) => void,
  ): AsyncGenerator<Uint8Array> {
    const snapshot = path.join(this.paths.root, `${SNAPSHOT_PREFIX}${process.pid}-${crypto.randomUUID()}.db`);
    const release = holdObjectDeletions(this.paths.holds);
    try {
      this.database.snapshotTo(snapshot);
      const { integrity, facts } = DatabaseRepo.inspectSnapshot(snapshot);
      if (!facts) throw new AppError(500, `the snapshot failed its integrity check: ${integrity.join('; ')}`);
      const keys = DatabaseRepo.snapshotStorageKeys(snapshot);
      // Read after the snapshot: rotation only ever adds keys, so this copy holds every key the snapshot needs.
      const secrets = await fsp.readFile(this.paths.secrets);
      const inSecrets = new Set(masterKeyIdsIn(this.paths.secrets));
      const header: FullBackupHeader = {
        format: 'coffer-full-backup',
        formatVersion: 1,
        createdAt: new Date(this.clock.now()).toISOString(),
        cofferVersion: BACKEND_VERSION,
        schema: facts.schema || embeddedMigrations.at(-1)!.tag,
        counts: facts.counts,
        masterKeyIds: facts.masterKeyIds,
        objects: keys.length,
        storage: this.driver.location,
      };
      const mtime = Math.floor(this.clock.now() / 1000);
      const dbBytes = fs.statSync(snapshot).size;
      const progress: BackupProgress = { done: 0, total: dbBytes + secrets.length + facts.counts.storedBytes };
      const sums = new Map<string, ArchivedFile>();
      const driver = this.driver;
      async function* entry(
        name: string,
        size: number,
        body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
      ): AsyncGenerator<Uint8Array> {
        const head = tarHeader({ name, size, mtime });
        progress.done += head.length;
        yield head;
        const hasher = new Bun.CryptoHasher('sha256');
        let bytes = 0;
        for await (const chunk of body) {
          signal?.throwIfAborted();
          bytes += chunk.length;
          if (bytes > size) break;
          hasher.update(chunk);
          progress.done += chunk.length;
          progress.total = Math.max(progress.total, progress.done);
          onProgress?.(progress);
          yield chunk;
        }
        if (bytes !== size) throw new AppError(500, `${name} changed while it was being backed up (${bytes} bytes, expected ${size})`);
        yield tarPadding(size);
        sums.set(name, { bytes, sha256: hasher.digest('hex') });
      }
      const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2) + '\n');
      const headerBytes = json(header);
      yield* entry(FullBackupEntries.header, headerBytes.length, [headerBytes]);
      yield* entry(FullBackupEntries.database, dbBytes, Bun.file(snapshot).stream());
      yield* entry(FullBackupEntries.secrets, secrets.length, [secrets]);
      const objectSums: FullBackupManifest['objectSums'] = [];
      const missingObjects: string[] = [];
      for (const key of keys) {
        const info = await driver.head(key);
        if (!info) {
          missingObjects.push(key);
          continue;
        }
        const name = `${FullBackupEntries.objectPrefix}${key}`;
        yield* entry(name, info.size, await driver.get(key));
        objectSums.push({ key, ...sums.get(name)! });
      }
      const manifest: FullBackupManifest = {
        ...header,
        objects: objectSums.length,
        database: sums.get(FullBackupEntries.database)!,
        secrets: sums.get(FullBackupEntries.secrets)!,
        objectSums,
        missingObjects,
        masterKeysNotInSecrets: facts.masterKeyIds.filter((id) => !inSecrets.has(id)),
      };
      const manifestBytes = json(manifest);
      yield* entry(FullBackupEntries.manifest, manifestBytes.length, [manifestBytes]);
      yield TAR_END;
      done(manifest);
    } finally {
      release();
      fs.rmSync(snapshot, { force: true });
    }
  }

  /** Checks the snapshot and reads its facts from the snapshot itself, not from the live database. */
  private async describe(snapshot: string, name: string): Promise<BackupManifest> {
    const { integrity, facts } = DatabaseRepo.inspectSnapshot(snapshot);
    if (!facts) throw new AppError(500, `the snapshot failed its integrity check: ${integrity.join('; ')}`);
    return {
      format: 'coffer-backup',
      formatVersion: 1,
      createdAt: new Date(this.clock.now()).toISOString(),
      cofferVersion: BACKEND_VERSION,
      schema: facts.schema || embeddedMigrations.at(-1)!.tag,
      database: { file: name, bytes: fs.statSync(snapshot).size, sha256: await sha256Of(snapshot), integrity: 'ok' },
      counts: facts.counts,
      masterKeyIds: facts.masterKeyIds,
      alongside: { blobs: this.blobsLocation(), secrets: this.paths.secrets },
      storage: this.driver.location,
    };
  }

  private blobsLocation(): string {
    const l = this.driver.location;
    return l.driver === 'local' ? this.paths.blobs : `s3://${l.bucket}/${l.prefix}`;
  }
}
