import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { dataPaths } from '../../data-dir.ts';
import { masterKeyIdsIn } from '../../storage/secrets-file.ts';
import { embeddedMigrations } from '../../db/migrations.ts';
import { DatabaseRepo } from '../../db/repos/database.ts';
import { closeDatabase, openDatabase } from '../../db/client.ts';
import { createRepos } from '../../db/repos/index.ts';
import type { StorageLocation } from '../../storage/driver.ts';
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
      await handle.write(chunk);
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { bytes, sha256: hasher.digest('hex') };
}

function isEmptyDir(dir: string): boolean {
  return fs.readdirSync(dir).length === 0;
}

/**
 * `coffer restore`: unpacks a full backup into an empty (or new) data directory, checking every part
 * against the manifest's sha256 and the database's integrity. On any failure the directory is left as
 * it was found (empty, or absent).
 */
export async function restoreFullBackup(
  archive: string,
  dataDir: string,
  opts: { onProgress?: (p: RestoreProgress) => void } = {},
): Promise<RestoreResult> {
  const file = path.resolve(archive);
  if (!fs.existsSync(file)) throw badRequest(`${file} does not exist`);
  const root = path.resolve(dataDir);
  const existed = fs.existsSync(root);
  if (existed && !fs.statSync(root).isDirectory()) throw badRequest(`${root} is not a directory`);
  if (existed && !isEmptyDir(root)) {
    throw badRequest(`${root} is not empty: restore only into an empty or new directory (move the old data directory aside first)`);
  }
  const paths = dataPaths(root);
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  const total = fs.statSync(file).size;
  try {
    fs.mkdirSync(paths.blobs, { mode: 0o700 });
    const driver = createLocalDriver(paths.blobs);
    const reader = new TarReader(Bun.file(file).stream());
    const report = () => opts.onProgress?.({ done: reader.position, total });
    const json = async <T>(): Promise<T> => {
      try {
        return JSON.parse(new TextDecoder().decode(await reader.readAll())) as T;
      } catch (err) {
        if (err instanceof TarFormatError) throw err;
        throw invalid('a description inside it is not valid JSON');
      }
    };

    const first = await reader.next();
    if (first?.name !== FullBackupEntries.header) throw invalid(`it is not a Coffer full backup (made by coffer backup --full)`);
    const header = await json<FullBackupHeader>();
    if (header.format !== 'coffer-full-backup' || header.formatVersion !== 1) {
      throw invalid(`unknown format ${header.format} version ${header.formatVersion}`);
    }
    if (!embeddedMigrations.some((m) => m.tag === header.schema)) {
      throw badRequest(
        `the backup was made by Coffer ${header.cofferVersion}, whose database is newer than this Coffer knows: restore it with that version or later`,
      );
    }

    let database: ArchivedFile | null = null;
    let secrets: ArchivedFile | null = null;
    let manifest: FullBackupManifest | null = null;
    const objects = new Map<string, ArchivedFile>();
    for (let entry = await reader.next(); entry; entry = await reader.next()) {
      if (manifest) throw invalid(`${entry.name} follows the manifest`);
      if (entry.name === FullBackupEntries.database && !database) database = await writeHashed(paths.database, reader.body());
      else if (entry.name === FullBackupEntries.secrets && !secrets) secrets = await writeHashed(paths.secrets, reader.body());
      else if (entry.name === FullBackupEntries.manifest) manifest = await json<FullBackupManifest>();
      else if (entry.name.startsWith(FullBackupEntries.objectPrefix)) {
        const key = entry.name.slice(FullBackupEntries.objectPrefix.length);
        if (!isValidStorageKey(key) || objects.has(key)) throw invalid(`unexpected object entry ${entry.name}`);
        const hasher = new Bun.CryptoHasher('sha256');
        const body = reader.body();
        const { size } = await driver.put(
          key,
          (async function* () {
            for await (const chunk of body) {
              hasher.update(chunk);
              yield chunk;
            }
          })(),
        );
        objects.set(key, { bytes: size, sha256: hasher.digest('hex') });
      } else throw invalid(`unexpected entry ${entry.name}`);
      report();
    }

    if (!manifest) throw invalid('its manifest is missing (the archive was cut short)');
    if (!database || !secrets) throw invalid('the database or secrets.json is missing from it');
    const same = (a: ArchivedFile, b: ArchivedFile | undefined) => b !== undefined && a.bytes === b.bytes && a.sha256 === b.sha256;
    if (!same(database, manifest.database)) throw invalid('the database does not match its checksum');
    if (!same(secrets, manifest.secrets)) throw invalid('secrets.json does not match its checksum');
    const damaged = manifest.objectSums.filter((o) => !same(o, objects.get(o.key))).map((o) => o.key);
    if (damaged.length) throw invalid(`${damaged.length} object(s) do not match their checksum or are missing, e.g. ${damaged[0]}`);
    if (objects.size !== manifest.objectSums.length) throw invalid('it holds objects its manifest does not list');
    const { integrity, facts } = DatabaseRepo.inspectSnapshot(paths.database);
    if (!facts) throw invalid(`the database fails its integrity check: ${integrity.join('; ')}`);
    const inSecrets = new Set(masterKeyIdsIn(paths.secrets));

    storeLocally(paths.database, header.storage);
    fs.rmSync(path.join(paths.blobs, '.tmp'), { recursive: true, force: true });
    giveToOwnerOf(root);
    return {
      dataDir: root,
      header,
      objects: objects.size,
      bytes: total,
      masterKeysNotInSecrets: header.masterKeyIds.filter((id) => !inSecrets.has(id)),
      missingObjects: manifest.missingObjects,
    };
  } catch (err) {
    // Leave the directory as it was found: absent, or empty.
    if (existed) for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true, force: true });
    else fs.rmSync(root, { recursive: true, force: true });
    if (err instanceof TarFormatError) throw invalid(err.message);
    throw err;
  }
}

/** The objects are now on local disk: a database that recorded a bucket records local storage instead. */
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
function giveToOwnerOf(root: string): void {
  const { uid, gid } = fs.statSync(root);
  if (process.getuid?.() !== 0 || uid === 0) return;
  const walk = (p: string) => {
    fs.lchownSync(p, uid, gid);
    if (fs.lstatSync(p).isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  walk(root);
}
