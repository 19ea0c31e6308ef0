import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../clock.ts';
import type { DataPaths } from '../../data-dir.ts';
import { holdObjectDeletions, objectDeletionsHeld } from '../../storage/deletion-holds.ts';
import { masterKeyIdsIn } from '../../storage/secrets-file.ts';
import { DatabaseRepo } from '../../db/repos/database.ts';
import { AppError, badRequest } from '../../errors.ts';
import { embeddedMigrations } from '../../db/migrations.ts';
import type { StorageDriver, StorageLocation } from '../../storage/driver.ts';
import { TAR_END, tarHeader, tarPadding } from '../../lib/tar.ts';
import { AuditActions, type AuditService } from '../administration/audit.ts';
import { BACKEND_VERSION } from '../administration/version.ts';

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

const SINK_BUFFER = 4 * 1024 * 1024;

/** Appends to a file in few large writes; counts what it wrote. */
class ArchiveSink {
  private readonly buffer = new Uint8Array(SINK_BUFFER);
  private used = 0;
  written = 0;

  constructor(private readonly handle: fsp.FileHandle) {}

  async write(data: Uint8Array): Promise<void> {
    this.written += data.length;
    if (this.used + data.length > this.buffer.length) await this.flush();
    if (data.length >= this.buffer.length) {
      await this.handle.write(data);
      return;
    }
    this.buffer.set(data, this.used);
    this.used += data.length;
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    await this.handle.write(this.buffer.subarray(0, this.used));
    this.used = 0;
  }
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
  ) {}

  /** Whether a full backup is reading objects now: deleting any must wait. */
  objectDeletionsHeld(): boolean {
    return objectDeletionsHeld(this.paths.holds);
  }

  private checkTarget(target: string, force: boolean | undefined): string {
    const file = path.resolve(target);
    if (file === path.resolve(this.paths.database)) throw badRequest('The backup file cannot be the live database');
    if (fs.existsSync(file) && !force) throw badRequest(`${file} already exists; choose another name or pass --force to replace it`);
    const dir = path.dirname(file);
    if (!fs.existsSync(dir)) throw badRequest(`directory ${dir} does not exist`);
    return file;
  }

  async create(target: string, opts: { force?: boolean } = {}): Promise<{ file: string; manifestFile: string; manifest: BackupManifest }> {
    const file = this.checkTarget(target, opts.force);
    const manifestFile = `${file}.manifest.json`;

    const partial = `${file}.partial-${process.pid}`;
    fs.rmSync(partial, { force: true });
    try {
      this.database.snapshotTo(partial);
      const manifest = await this.describe(partial, path.basename(file));
      fs.renameSync(partial, file);
      // Created anew, so --force over an older, wider manifest leaves it 0600 too.
      fs.rmSync(manifestFile, { force: true });
      fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
      this.audit.record({
        action: AuditActions.backupCreate,
        actor: 'cli',
        targetType: 'backup',
        targetId: file,
        details: { bytes: manifest.database.bytes, sha256: manifest.database.sha256 },
      });
      return { file, manifestFile, manifest };
    } finally {
      fs.rmSync(partial, { force: true });
    }
  }

  /**
   * `coffer backup --full`: one tar archive holding a consistent database snapshot, secrets.json and every
   * object the snapshot names, then a manifest with each part's sha256. Object deletions are held back
   * from before the snapshot until the last object is read, so every object the snapshot names is there.
   */
  async createFull(
    target: string,
    opts: { force?: boolean; onProgress?: (p: BackupProgress) => void } = {},
  ): Promise<{ file: string; manifest: FullBackupManifest }> {
    const file = this.checkTarget(target, opts.force);
    const partial = `${file}.partial-${process.pid}`;
    const snapshot = `${file}.db-${process.pid}`;
    const release = holdObjectDeletions(this.paths.holds);
    fs.rmSync(partial, { force: true });
    fs.rmSync(snapshot, { force: true });
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
      const handle = await fsp.open(partial, 'wx', 0o600);
      const sink = new ArchiveSink(handle);
      const report = () => {
        progress.done = sink.written;
        progress.total = Math.max(progress.total, progress.done);
        opts.onProgress?.(progress);
      };
      const entry = async (name: string, size: number, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<ArchivedFile> => {
        await sink.write(tarHeader({ name, size, mtime }));
        const hasher = new Bun.CryptoHasher('sha256');
        let bytes = 0;
        for await (const chunk of body) {
          bytes += chunk.length;
          if (bytes > size) break;
          hasher.update(chunk);
          await sink.write(chunk);
          report();
        }
        if (bytes !== size) throw new AppError(500, `${name} changed while it was being backed up (${bytes} bytes, expected ${size})`);
        await sink.write(tarPadding(size));
        return { bytes, sha256: hasher.digest('hex') };
      };
      const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2) + '\n');
      try {
        const headerBytes = json(header);
        await entry(FullBackupEntries.header, headerBytes.length, [headerBytes]);
        const database = await entry(FullBackupEntries.database, dbBytes, Bun.file(snapshot).stream());
        const secretsSum = await entry(FullBackupEntries.secrets, secrets.length, [secrets]);
        const objectSums: FullBackupManifest['objectSums'] = [];
        const missingObjects: string[] = [];
        for (const key of keys) {
          const info = await this.driver.head(key);
          if (!info) {
            missingObjects.push(key);
            continue;
          }
          const sum = await entry(`${FullBackupEntries.objectPrefix}${key}`, info.size, await this.driver.get(key));
          objectSums.push({ key, ...sum });
        }
        const manifest: FullBackupManifest = {
          ...header,
          objects: objectSums.length,
          database,
          secrets: secretsSum,
          objectSums,
          missingObjects,
          masterKeysNotInSecrets: facts.masterKeyIds.filter((id) => !inSecrets.has(id)),
        };
        const manifestBytes = json(manifest);
        await entry(FullBackupEntries.manifest, manifestBytes.length, [manifestBytes]);
        await sink.write(TAR_END);
        await sink.flush();
        await handle.sync();
        await handle.close();
        fs.renameSync(partial, file);
        this.audit.record({
          action: AuditActions.backupCreate,
          actor: 'cli',
          targetType: 'backup',
          targetId: file,
          details: { full: true, bytes: sink.written, objects: objectSums.length, databaseSha256: database.sha256 },
        });
        return { file, manifest };
      } finally {
        await handle.close().catch(() => {});
      }
    } finally {
      release();
      fs.rmSync(snapshot, { force: true });
      fs.rmSync(partial, { force: true });
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
