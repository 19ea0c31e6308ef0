import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../clock.ts';
import type { DataPaths } from '../data-dir.ts';
import { DatabaseRepo } from '../db/repos/database.ts';
import { AppError, badRequest } from '../errors.ts';
import { embeddedMigrations } from '../db/migrations.ts';
import type { StorageLocation } from '../storage/driver.ts';
import { AuditActions, type AuditService } from './audit.ts';
import { BACKEND_VERSION } from './version.ts';

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

async function sha256Of(file: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256');
  for await (const chunk of Bun.file(file).stream()) hasher.update(chunk);
  return hasher.digest('hex');
}

/**
 * `coffer backup`: an online, consistent snapshot of the database (SQLite copies one
 * transaction's view while the server keeps writing), checked, hashed and described by a manifest.
 * Blobs and secrets.json are not in it: the README explains how to copy them alongside.
 */
export class BackupService {
  constructor(
    private readonly database: DatabaseRepo,
    private readonly paths: DataPaths,
    private readonly storage: StorageLocation,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async create(target: string, opts: { force?: boolean } = {}): Promise<{ file: string; manifestFile: string; manifest: BackupManifest }> {
    const file = path.resolve(target);
    const manifestFile = `${file}.manifest.json`;
    if (path.resolve(file) === path.resolve(this.paths.database)) throw badRequest('The backup file cannot be the live database');
    if (fs.existsSync(file) && !opts.force) throw badRequest(`${file} already exists; choose another name or pass --force to replace it`);
    const dir = path.dirname(file);
    if (!fs.existsSync(dir)) throw badRequest(`directory ${dir} does not exist`);

    const partial = `${file}.partial-${process.pid}`;
    fs.rmSync(partial, { force: true });
    try {
      this.database.snapshotTo(partial);
      const manifest = await this.describe(partial, path.basename(file));
      fs.renameSync(partial, file);
      fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
      fs.chmodSync(file, 0o600);
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
      storage: this.storage,
    };
  }

  private blobsLocation(): string {
    const l = this.storage;
    return l.driver === 'local' ? this.paths.blobs : `s3://${l.bucket}/${l.prefix}`;
  }
}
