import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type DataPaths, dataPaths, FILE_SYSTEM_OWN, isDataDirOwnFile, RESTORE_MARKER } from '../../data-dir.ts';
import { isAlive } from '../../lib/pid.ts';
import { masterKeyIdsIn } from '../../storage/secrets-file.ts';
import { knownMigration } from '../../db/migrations.ts';
import { DatabaseRepo } from '../../db/repos/database.ts';
import { closeDatabase, openDatabase } from '../../db/client.ts';
import { createRepos } from '../../db/repos/index.ts';
import { restoredLogNumbersAfter } from '../changes/change-log.ts';
import type { StorageDriver, StorageLocation } from '../../storage/driver.ts';
import { writeFully } from '../../lib/file-writes.ts';
import { isPassphraseSealed, openSealed, SealedStreamError } from '../../lib/passphrase-seal.ts';
import { badRequest } from '../../errors.ts';
import { TarFormatError, TarReader } from '../../lib/tar.ts';
import { createLocalDriver } from '../../storage/local.ts';
import { isValidStorageKey } from '../../storage/keys.ts';
import { type ArchivedFile, FullBackupEntries, type FullBackupHeader, type FullBackupManifest } from './backup.ts';

export interface RestoreProgress {
  /** Archive bytes read so far, of `total`. */
  done: number;
  total: number;
}

export interface RestoreResult {
  dataDir: string;
  header: FullBackupHeader;
  objects: number;
  bytes: number;
  /** Master keys the data keys need that the restored secrets.json lacks: COFFER_MASTER_KEY must provide them. */
  masterKeysNotInSecrets: string[];
  /** Objects that were already missing when the backup was taken. */
  missingObjects: string[];
  /** A restore into the directory had been cut off part-way: what it wrote was removed, and this one started over. */
  startedOver: boolean;
}

/** The archive is not a sound full backup: nothing of it is kept. */
function invalid(message: string): Error {
  return badRequest(`the backup is not usable: ${message}`);
}

async function writeHashed(file: string, body: AsyncIterable<Uint8Array>): Promise<ArchivedFile> {
  const hasher = new Bun.CryptoHasher('sha256');
  const handle = await fsp.open(file, 'wx', 0o600);
  let bytes = 0;
  try {
    for await (const chunk of body) {
      hasher.update(chunk);
      bytes += chunk.length;
      await writeFully(handle, chunk);
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { bytes, sha256: hasher.digest('hex') };
}

export function isEmptyDir(dir: string): boolean {
  return fs.readdirSync(dir).every((name) => name === FILE_SYSTEM_OWN);
}

/** A restore that failed into a directory that existed: what it wrote goes, the directory stays as it was found. */
export function emptyAgain(dir: string): void {
  for (const name of fs.readdirSync(dir)) if (name !== FILE_SYSTEM_OWN) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
}

// What a full restore writes into the data directory, beside its marker: all a restore cut off part-way can have left.
const RESTORE_WRITES = new Set([
  'coffer.db',
  'coffer.db-wal',
  'coffer.db-shm',
  'coffer.db-journal',
  'secrets.json',
  'blobs',
  RESTORE_MARKER,
]);

/**
 * A restore into `root` was cut off part-way (its marker is there, its process gone): what it wrote is removed, so the
 * restore can start over. Refused while that restore still runs, or when the directory holds anything else.
 */
function clearUnfinishedRestore(root: string): void {
  let pid = 0;
  try {
    pid = Number((JSON.parse(fs.readFileSync(path.join(root, RESTORE_MARKER), 'utf8')) as { pid?: unknown }).pid) || 0;
  } catch {
    // An unreadable marker (cut off while written): no process to wait for.
  }
  if (pid && pid !== process.pid && isAlive(pid)) throw badRequest(`another coffer restore (pid ${pid}) is writing into ${root}`);
  const others = fs.readdirSync(root).filter((name) => name !== FILE_SYSTEM_OWN && !RESTORE_WRITES.has(name));
  if (others.length) {
    throw badRequest(
      `${root} holds a restore that did not finish, and other files (${others.slice(0, 3).join(', ')}): move them aside, or remove the directory`,
    );
  }
  // The marker goes last: cut off again meanwhile, the next run still knows what the directory holds.
  for (const name of fs.readdirSync(root))
    if (name !== RESTORE_MARKER && RESTORE_WRITES.has(name)) fs.rmSync(path.join(root, name), { recursive: true, force: true });
  fs.rmSync(path.join(root, RESTORE_MARKER), { force: true });
}

/** Asks for the passphrase when the archive turns out to be encrypted (and only then). */
export type PassphraseSource = () => Promise<string>;

/** The archive's tar stream: decrypted on the way when it is sealed under a passphrase. */
async function archiveStream(
  file: string,
  passphrase: PassphraseSource | undefined,
): Promise<{ stream: AsyncIterable<Uint8Array>; encrypted: boolean }> {
  const head = new Uint8Array(await Bun.file(file).slice(0, 8).arrayBuffer());
  if (!isPassphraseSealed(head)) return { stream: Bun.file(file).stream(), encrypted: false };
  if (!passphrase)
    throw badRequest('the backup is encrypted: set BACKUP_PASSPHRASE_FILE or run on a terminal to be asked for the passphrase');
  return { stream: openSealed(Bun.file(file).stream(), await passphrase()), encrypted: true };
}

interface Unpacked {
  header: FullBackupHeader;
  manifest: FullBackupManifest;
  objects: number;
  encrypted: boolean;
}

/**
 * Reads a full backup through, writing the database and secrets.json to `paths` and each object to
 * `objects` (or only hashing it), and checks every part against the manifest and the database's integrity.
 */
async function unpack(
  file: string,
  paths: DataPaths,
  objects: StorageDriver | null,
  opts: { onProgress?: (p: RestoreProgress) => void; passphrase?: PassphraseSource; signal?: AbortSignal },
): Promise<Unpacked> {
  const total = fs.statSync(file).size;
  const { stream, encrypted } = await archiveStream(file, opts.passphrase);
  // The first bytes, to tell a database snapshot (coffer backup without --full) from a damaged archive.
  let head = new Uint8Array(0);
  const peeked = (async function* () {
    for await (const chunk of stream) {
      if (head.length < SQLITE_MAGIC.length) head = Buffer.concat([head, chunk.subarray(0, SQLITE_MAGIC.length - head.length)]);
      yield chunk;
    }
  })();
  // Progress counts the archive's plaintext: close enough to its size to show how far it is.
  const reader = new TarReader(peeked);
  const report = () => opts.onProgress?.({ done: Math.min(reader.position, total), total });
  const json = async <T>(): Promise<T> => {
    try {
      return JSON.parse(new TextDecoder().decode(await reader.readAll())) as T;
    } catch (err) {
      if (err instanceof TarFormatError || err instanceof SealedStreamError) throw err;
      throw invalid('a description inside it is not valid JSON');
    }
  };

  const first = await reader.next().catch((err: unknown) => {
    if (err instanceof TarFormatError && isSqliteDatabase(head)) {
      throw badRequest(
        `${file} is a database snapshot (coffer backup without --full), not a full backup: to bring it back, stop the server and put it (decrypted with coffer backup decrypt, if encrypted) in place of coffer.db, beside the secrets.json and blobs/ copied with it`,
      );
    }
    throw err;
  });
  if (first?.name !== FullBackupEntries.header) throw invalid(`it is not a Coffer full backup (made by coffer backup --full)`);
  const header = await json<FullBackupHeader>();
  if (header.format !== 'coffer-full-backup' || header.formatVersion !== 1) {
    throw invalid(`unknown format ${header.format} version ${header.formatVersion}`);
  }
  if (!knownMigration(header.schema)) {
    throw badRequest(
      `the backup was made by Coffer ${header.cofferVersion}, whose database is newer than this Coffer knows: use that version or later`,
    );
  }

  let database: ArchivedFile | null = null;
  let secrets: ArchivedFile | null = null;
  let manifest: FullBackupManifest | null = null;
  const sums = new Map<string, ArchivedFile>();
  for (let entry = await reader.next(); entry; entry = await reader.next()) {
    opts.signal?.throwIfAborted();
    if (manifest) throw invalid(`${entry.name} follows the manifest`);
    if (entry.name === FullBackupEntries.database && !database) database = await writeHashed(paths.database, reader.body());
    else if (entry.name === FullBackupEntries.secrets && !secrets) secrets = await writeHashed(paths.secrets, reader.body());
    else if (entry.name === FullBackupEntries.manifest) manifest = await json<FullBackupManifest>();
    else if (entry.name.startsWith(FullBackupEntries.objectPrefix)) {
      const key = entry.name.slice(FullBackupEntries.objectPrefix.length);
      if (!isValidStorageKey(key) || sums.has(key)) throw invalid(`unexpected object entry ${entry.name}`);
      const hasher = new Bun.CryptoHasher('sha256');
      let size = 0;
      const hashed = (async function* (body: AsyncIterable<Uint8Array>) {
        for await (const chunk of body) {
          opts.signal?.throwIfAborted();
          hasher.update(chunk);
          size += chunk.length;
          yield chunk;
        }
      })(reader.body());
      if (objects) await objects.put(key, hashed);
      else for await (const _ of hashed);
      sums.set(key, { bytes: size, sha256: hasher.digest('hex') });
    } else throw invalid(`unexpected entry ${entry.name}`);
    report();
  }

  if (!manifest) throw invalid('its manifest is missing (the archive was cut short)');
  if (!database || !secrets) throw invalid('the database or secrets.json is missing from it');
  const same = (a: ArchivedFile, b: ArchivedFile | undefined) => b !== undefined && a.bytes === b.bytes && a.sha256 === b.sha256;
  if (!same(database, manifest.database)) throw invalid('the database does not match its checksum');
  if (!same(secrets, manifest.secrets)) throw invalid('secrets.json does not match its checksum');
  const damaged = manifest.objectSums.filter((o) => !same(o, sums.get(o.key))).map((o) => o.key);
  if (damaged.length) throw invalid(`${damaged.length} object(s) do not match their checksum or are missing, e.g. ${damaged[0]}`);
  if (sums.size !== manifest.objectSums.length) throw invalid('it holds objects its manifest does not list');
  const { integrity, facts } = DatabaseRepo.inspectSnapshot(paths.database);
  if (!facts) throw invalid(`the database fails its integrity check: ${integrity.join('; ')}`);
  return { header, manifest, objects: sums.size, encrypted };
}

function asInvalid(err: unknown): unknown {
  if (err instanceof TarFormatError || err instanceof SealedStreamError) return invalid(err.message);
  return err;
}

/**
 * `coffer restore`: unpacks a full backup into an empty (or new) data directory, checking every part
 * against the manifest's sha256 and the database's integrity. On any failure the directory is left as
 * it was found (empty, or absent). A marker written first and removed last tells a restore cut off part-way (kill -9):
 * the next run into the directory removes what it wrote and starts over.
 */
export async function restoreFullBackup(
  archive: string,
  dataDir: string,
  opts: { onProgress?: (p: RestoreProgress) => void; passphrase?: PassphraseSource; signal?: AbortSignal } = {},
): Promise<RestoreResult> {
  const file = path.resolve(archive);
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw badRequest(`${file} does not exist or is not a file`);
  const root = path.resolve(dataDir);
  const existed = fs.existsSync(root);
  if (existed && !fs.statSync(root).isDirectory()) throw badRequest(`${root} is not a directory`);
  const startedOver = existed && fs.existsSync(path.join(root, RESTORE_MARKER));
  if (startedOver) clearUnfinishedRestore(root);
  if (existed && !isEmptyDir(root)) {
    throw badRequest(`${root} is not empty: restore only into an empty or new directory (move the old data directory aside first)`);
  }
  const paths = dataPaths(root);
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  const marker = path.join(root, RESTORE_MARKER);
  try {
    writeMarker(marker, { pid: process.pid, archive: file, startedAt: new Date().toISOString() });
    fs.mkdirSync(paths.blobs, { mode: 0o700 });
    const { header, manifest, objects } = await unpack(file, paths, createLocalDriver(paths.blobs), opts);
    const inSecrets = new Set(masterKeyIdsIn(paths.secrets));
    storeLocally(paths.database, header.storage);
    numberChangesAfresh(paths.database);
    fs.rmSync(path.join(paths.blobs, '.tmp'), { recursive: true, force: true });
    giveToOwnerOf(root);
    fs.rmSync(marker);
    return {
      dataDir: root,
      header,
      objects,
      bytes: fs.statSync(file).size,
      masterKeysNotInSecrets: header.masterKeyIds.filter((id) => !inSecrets.has(id)),
      missingObjects: manifest.missingObjects,
      startedOver,
    };
  } catch (err) {
    // Leave the directory as it was found: absent, or empty.
    if (existed) emptyAgain(root);
    else fs.rmSync(root, { recursive: true, force: true });
    throw asInvalid(err);
  }
}

/** The marker, on disk (synced, with its directory entry) before the restore writes anything else. */
function writeMarker(file: string, body: object): void {
  const fd = fs.openSync(file, 'wx', 0o600);
  try {
    fs.writeSync(fd, JSON.stringify(body));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  const dir = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

export interface VerifyResult {
  file: string;
  header: FullBackupHeader;
  objects: number;
  encrypted: boolean;
}

/**
 * `coffer backup verify`: reads a full backup through and checks every part (sha256 of each object, the
 * database's checksum and integrity) without restoring it. The database is checked in a temporary directory.
 */
export async function verifyFullBackup(
  archive: string,
  opts: { onProgress?: (p: RestoreProgress) => void; passphrase?: PassphraseSource; tempDir?: string } = {},
): Promise<VerifyResult> {
  const file = path.resolve(archive);
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw badRequest(`${file} does not exist or is not a file`);
  const scratch = fs.mkdtempSync(path.join(opts.tempDir ?? os.tmpdir(), 'coffer-verify-'));
  try {
    const { header, objects, encrypted } = await unpack(file, dataPaths(scratch), null, opts);
    return { file, header, objects, encrypted };
  } catch (err) {
    throw asInvalid(err);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

// A tar entry's header starts with its name: a full backup's first entry is its header.
const TAR_NAME_BYTES = 100;
const isFullBackup = (head: Uint8Array) => new TextDecoder().decode(head).replace(/\0+$/, '') === FullBackupEntries.header;

// Every SQLite database file starts with these 16 bytes.
const SQLITE_MAGIC = 'SQLite format 3\0';
const isSqliteDatabase = (head: Uint8Array) => new TextDecoder().decode(head.subarray(0, SQLITE_MAGIC.length)) === SQLITE_MAGIC;

/** `backup decrypt` was given a full archive (coffer backup --full, or a scheduled one), not a database snapshot. */
const notASnapshot = (file: string) =>
  badRequest(
    `${file} is a full backup, not a database snapshot: restore it with coffer restore ${file} --data-dir <empty directory>, or check it with coffer backup verify ${file}`,
  );

/** The decrypted bytes, refused at their first 100 when they are a full archive, before gigabytes of it are written. */
async function* refusingFullBackup(body: AsyncIterable<Uint8Array>, file: string): AsyncIterable<Uint8Array> {
  let head = new Uint8Array(0);
  for await (const chunk of body) {
    if (head.length < TAR_NAME_BYTES) {
      head = Buffer.concat([head, chunk.subarray(0, TAR_NAME_BYTES - head.length)]);
      if (head.length === TAR_NAME_BYTES && isFullBackup(head)) throw notASnapshot(file);
    }
    yield chunk;
  }
}

export interface DecryptedDatabase {
  file: string;
  bytes: number;
  sha256: string;
  /** The backup's `<file>.manifest.json` was beside it and its checksum matched. */
  matchesManifest: boolean;
}

/**
 * `coffer backup decrypt`: the database of an encrypted `coffer backup FILE`, written to `out` (0600) once
 * it opened under the passphrase, passes SQLite's integrity check and matches the manifest beside the backup.
 */
export async function decryptDatabaseBackup(
  backup: string,
  out: string,
  opts: { passphrase: PassphraseSource; force?: boolean; dataDir?: string },
): Promise<DecryptedDatabase> {
  const file = path.resolve(backup);
  const target = path.resolve(out);
  if (opts.dataDir && isDataDirOwnFile(dataPaths(path.resolve(opts.dataDir)), target)) {
    throw badRequest(
      `${target} is one of the data directory's own files: write the database elsewhere (to bring it back, stop the server and move the data directory aside first)`,
    );
  }
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw badRequest(`${file} does not exist or is not a file`);
  if (fs.existsSync(target) && !opts.force) throw badRequest(`${target} already exists; choose another name or pass --force to replace it`);
  const head = new Uint8Array(await Bun.file(file).slice(0, TAR_NAME_BYTES).arrayBuffer());
  if (isFullBackup(head)) throw notASnapshot(file);
  if (!isPassphraseSealed(head)) {
    if (!isSqliteDatabase(head)) throw badRequest(`${file} is not a Coffer backup: neither an encrypted backup nor a database`);
    throw badRequest(`${file} is not encrypted: it is the database itself, use it as it is`);
  }
  const partial = `${target}.partial-${process.pid}`;
  fs.rmSync(partial, { force: true });
  try {
    let written: ArchivedFile;
    try {
      written = await writeHashed(partial, refusingFullBackup(openSealed(Bun.file(file).stream(), await opts.passphrase()), file));
    } catch (err) {
      throw err instanceof SealedStreamError ? badRequest(`${file} cannot be decrypted: ${err.message}`) : err;
    }
    const { integrity, facts } = DatabaseRepo.inspectSnapshot(partial);
    if (!facts) throw badRequest(`the decrypted database fails its integrity check: ${integrity.join('; ')}`);
    const manifestFile = `${file}.manifest.json`;
    let manifest: { database?: ArchivedFile } | null = null;
    try {
      if (fs.existsSync(manifestFile)) manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
    } catch {
      throw badRequest(`${manifestFile} is not a backup manifest (move it aside to decrypt without checking against it)`);
    }
    if (manifest?.database && manifest.database.sha256 !== written.sha256) {
      throw badRequest(
        `the decrypted database does not match ${manifestFile} (sha256 ${written.sha256}, expected ${manifest.database.sha256})`,
      );
    }
    fs.renameSync(partial, target);
    return { file: target, ...written, matchesManifest: Boolean(manifest?.database) };
  } finally {
    fs.rmSync(partial, { force: true });
  }
}

/** The objects are now on local disk: a database that recorded a bucket records local storage instead. */
/**
 * A restored database's change log numbers on from a new epoch: the old server may have handed out the seqs past
 * the restored state for changes it does not hold, and a client resuming after one (a stream's Last-Event-ID, a
 * WebDAV sync token) is then told to list again, not given the new changes numbered alike.
 */
export function numberChangesAfresh(database: string): void {
  const db = openDatabase(database);
  try {
    const changes = createRepos(db).changes;
    changes.numberOnAfter(restoredLogNumbersAfter(changes.latestSeq()));
  } finally {
    closeDatabase(db);
  }
}

function storeLocally(database: string, from: StorageLocation | undefined): void {
  if (!from || from.driver === 'local') return;
  const db = openDatabase(database);
  try {
    createRepos(db).storageLocation.record({ driver: 'local', bucket: null, prefix: '' }, Date.now());
  } finally {
    closeDatabase(db);
  }
}

/** Run as root into a directory someone else owns (the service user's): what was restored becomes theirs. */
export function giveToOwnerOf(root: string): void {
  const { uid, gid } = fs.statSync(root);
  if (process.getuid?.() !== 0 || uid === 0) return;
  const walk = (p: string) => {
    fs.lchownSync(p, uid, gid);
    if (!fs.lstatSync(p).isDirectory()) return;
    for (const name of fs.readdirSync(p)) if (p !== root || name !== FILE_SYSTEM_OWN) walk(path.join(p, name));
  };
  walk(root);
}
