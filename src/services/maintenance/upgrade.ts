import fs from 'node:fs';
import path from 'node:path';
import { type DataPaths, otherLockHolder } from '../../data-dir.ts';
import type { Db } from '../../db/client.ts';
import {
  appliedSchema,
  lastCofferVersion,
  MigrationFailedError,
  migrate,
  pendingMigrations,
  recordCofferVersion,
  snapshotDatabase,
} from '../../db/migrate.ts';
import { DatabaseRepo } from '../../db/repos/database.ts';
import { badRequest, StartupError } from '../../errors.ts';
import { buildVersion } from '../admin/version.ts';

/** Snapshots kept in <data dir>/snapshots: the newest three. */
const KEEP_SNAPSHOTS = 3;
const DESCRIPTION = 'snapshot.json';
/** The migration that gave folders their versions (their ETags). */
const FOLDER_ETAGS = '0021_tree_versions';

export interface UpgradeSnapshot {
  dir: string;
  /**
   * The Coffer that last ran on the database: its version and commit (`0.1.0+1a2b3c4d5e6f`), the version alone as
   * builds before commits were recorded wrote it, or `schema-<tag>` for one older than version records.
   */
  cofferVersion: string;
  /** The database's last migration when the snapshot was taken. */
  schema: string;
  createdAt: string;
  /** The migrations the upgrade was about to apply. */
  pending: string[];
}

export interface UpgradeResult {
  applied: string[];
  snapshot: UpgradeSnapshot | null;
}

function timeStamp(at: number): string {
  return new Date(at)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/** Snapshots in the data directory, newest first. */
export function listUpgradeSnapshots(paths: DataPaths): UpgradeSnapshot[] {
  if (!fs.existsSync(paths.snapshots)) return [];
  const found: UpgradeSnapshot[] = [];
  for (const name of fs.readdirSync(paths.snapshots)) {
    try {
      const dir = path.join(paths.snapshots, name);
      found.push({ ...JSON.parse(fs.readFileSync(path.join(dir, DESCRIPTION), 'utf8')), dir });
    } catch {
      // Not a snapshot (or one cut short by a crash): not listed, not counted.
    }
  }
  return found.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/**
 * Opening a data directory: when its database needs migrations, first a consistent snapshot of the database
 * and secrets.json into <data dir>/snapshots/<old version>+<its commit>-<time>/ (the newest three kept), then the
 * migrations, in one transaction. A failed migration leaves the database as it was and says how to roll back.
 */
export function upgradeDatabase(db: Db, paths: DataPaths, opts: { now?: number; announce?: (line: string) => void } = {}): UpgradeResult {
  const pending = pendingMigrations(db).map((m) => m.tag);
  const server = pending.length > 0 ? otherLockHolder(paths) : null;
  if (server !== null) {
    // The older server would go on writing without what the migrations added (stored folder sizes, ETags, the change log).
    throw new StartupError(
      `a Coffer server (pid ${server}) is running on ${paths.root} with its older database; restart it with this version first (it upgrades the database), then run this command`,
    );
  }
  const schema = appliedSchema(db);
  let snapshot: UpgradeSnapshot | null = null;
  if (pending.length > 0 && schema !== null) {
    snapshot = takeSnapshot(db, paths, { schema, pending, now: opts.now ?? Date.now() });
    opts.announce?.(
      `upgrading the database from Coffer ${snapshot.cofferVersion} (${schema}); a snapshot of it is in ${snapshot.dir} (to go back: stop Coffer, coffer rollback --to ${snapshot.dir}, then start the older version)`,
    );
  }
  let applied: string[] = [];
  try {
    applied = migrate(db).applied;
  } catch (err) {
    if (!(err instanceof MigrationFailedError)) throw err;
    const back = snapshot
      ? `The database is unchanged; run the previous Coffer (${snapshot.cofferVersion}) on it, or restore the snapshot with: coffer rollback --to ${snapshot.dir}`
      : 'The database is unchanged.';
    throw new StartupError(`${err.message}. ${back}`);
  }
  // Folder ETags came with this migration: on a database from before it (a rollback to such a version leaves one) they
  // would all start again at 0, ETags a newer version may already have answered, and a client would take changes for known.
  if (schema !== null && applied.includes(FOLDER_ETAGS)) DatabaseRepo.moveTreeVersionsPast(db, opts.now ?? Date.now());
  recordCofferVersion(db, buildVersion());
  return { applied, snapshot };
}

function takeSnapshot(db: Db, paths: DataPaths, o: { schema: string; pending: string[]; now: number }): UpgradeSnapshot {
  const cofferVersion = lastCofferVersion(db) ?? `schema-${o.schema}`;
  fs.mkdirSync(paths.snapshots, { recursive: true, mode: 0o700 });
  const name = `${cofferVersion.replace(/[^A-Za-z0-9.+_-]/g, '_')}-${timeStamp(o.now)}`;
  const dir = path.join(paths.snapshots, name);
  const partial = `${dir}.partial`;
  // Snapshots a crash cut short: each as big as the database, never listed, so never among the three kept.
  for (const left of fs.readdirSync(paths.snapshots).filter((n) => n.endsWith('.partial'))) {
    fs.rmSync(path.join(paths.snapshots, left), { recursive: true, force: true });
  }
  fs.mkdirSync(partial, { mode: 0o700 });
  snapshotDatabase(db, path.join(partial, 'coffer.db'));
  if (fs.existsSync(paths.secrets)) fs.copyFileSync(paths.secrets, path.join(partial, 'secrets.json'));
  const snapshot: UpgradeSnapshot = { dir, cofferVersion, schema: o.schema, createdAt: new Date(o.now).toISOString(), pending: o.pending };
  const { dir: _, ...description } = snapshot;
  fs.writeFileSync(path.join(partial, DESCRIPTION), JSON.stringify(description, null, 2) + '\n', { mode: 0o600 });
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(partial, dir);
  for (const old of listUpgradeSnapshots(paths).slice(KEEP_SNAPSHOTS)) fs.rmSync(old.dir, { recursive: true, force: true });
  return snapshot;
}

/**
 * `coffer rollback --to SNAPSHOT`: puts a snapshot's database and secrets.json back in place, for the older
 * Coffer to run on (objects are only ever added by an upgrade, so today's objects serve it). The current
 * database is kept beside it as coffer.db.before-rollback-<time> with its write-ahead log (-wal, -shm: a
 * killed server's last commits are there), and the current secrets.json as secrets.json.before-rollback-<time>
 * (after a key rotation, only it opens the kept database). The server must be stopped (the caller holds the lock).
 */
export function rollbackTo(
  paths: DataPaths,
  snapshotDir: string,
  now = Date.now(),
): { snapshot: UpgradeSnapshot; keptAs: string; secretsKeptAs: string | null } {
  const dir = path.resolve(snapshotDir);
  let snapshot: UpgradeSnapshot;
  try {
    snapshot = { ...JSON.parse(fs.readFileSync(path.join(dir, DESCRIPTION), 'utf8')), dir };
  } catch {
    const known = listUpgradeSnapshots(paths).map((s) => s.dir);
    throw badRequest(`${dir} is not a Coffer upgrade snapshot${known.length ? `; the snapshots are: ${known.join(', ')}` : ''}`);
  }
  const db = path.join(dir, 'coffer.db');
  const { integrity, facts } = DatabaseRepo.inspectSnapshot(db);
  if (!facts) throw badRequest(`the snapshot's database fails its integrity check: ${integrity.join('; ')}`);
  const keptAs = `${paths.database}.before-rollback-${timeStamp(now)}`;
  const secrets = path.join(dir, 'secrets.json');
  const replacesSecrets = fs.existsSync(secrets) && fs.existsSync(paths.secrets);
  const secretsKeptAs = replacesSecrets ? `${paths.secrets}.before-rollback-${timeStamp(now)}` : null;
  for (const kept of [keptAs, secretsKeptAs]) {
    if (kept && fs.existsSync(kept)) throw badRequest(`${kept} already exists (a rollback this very second); run it again in a second`);
  }
  if (secretsKeptAs) {
    fs.copyFileSync(paths.secrets, secretsKeptAs, fs.constants.COPYFILE_EXCL);
    fs.chmodSync(secretsKeptAs, 0o600);
  }
  const staged = `${paths.database}.rollback-${process.pid}`;
  fs.copyFileSync(db, staged);
  fs.chmodSync(staged, 0o600);
  // Sync clients hold folder ETags the newer version answered; the time in ms exceeds any count of changes since.
  DatabaseRepo.moveTreeVersionsPast(staged, now);
  if (fs.existsSync(paths.database)) {
    // Renamed, not opened: SQLite may delete the log of a database it fails to open, and it is where a
    // killed server's last commits are. Opening the kept database reads them from its renamed log.
    for (const suffix of ['-wal', '-shm', '']) {
      if (fs.existsSync(`${paths.database}${suffix}`)) fs.renameSync(`${paths.database}${suffix}`, `${keptAs}${suffix}`);
    }
  }
  fs.renameSync(staged, paths.database);
  if (fs.existsSync(secrets)) {
    fs.copyFileSync(secrets, `${paths.secrets}.rollback`);
    fs.chmodSync(`${paths.secrets}.rollback`, 0o600);
    fs.renameSync(`${paths.secrets}.rollback`, paths.secrets);
  }
  return { snapshot, keptAs, secretsKeptAs };
}
