import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config, SecretSetting } from './config.ts';
import type { Logger } from './log.ts';
import { generateMasterKey, makeKeyring, masterKeyFrom, parseMasterKey, type Keyring, type MasterKey } from './storage/keyring.ts';

/** A start-up problem the operator can fix; printed as one line, exit code 1. */
export class StartupError extends Error {}

/** The text of a secret setting; a file that cannot be read or is empty is a one-line StartupError naming `fileVariable`. */
export function secretText(secret: SecretSetting, fileVariable: string): string {
  if (secret.source === 'env') return secret.text;
  let text: string;
  try {
    text = fs.readFileSync(secret.path, 'utf8').trim();
  } catch (err) {
    throw new StartupError(`cannot read ${fileVariable} ${secret.path} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  if (!text) throw new StartupError(`${fileVariable} ${secret.path} is empty`);
  return text;
}

export interface DataPaths {
  root: string;
  database: string;
  secrets: string;
  blobs: string;
  lock: string;
  /** One file per process that holds object deletions back (a full backup reading objects). */
  holds: string;
}

export function dataPaths(dataDir: string): DataPaths {
  return {
    root: dataDir,
    database: path.join(dataDir, 'coffer.db'),
    secrets: path.join(dataDir, 'secrets.json'),
    blobs: path.join(dataDir, 'blobs'),
    lock: path.join(dataDir, 'coffer.lock'),
    holds: path.join(dataDir, 'holds'),
  };
}

/** Creates the data dir (0700) and blobs dir, and proves they are writable. */
export function prepareDataDir(paths: DataPaths): void {
  try {
    fs.mkdirSync(paths.root, { recursive: true, mode: 0o700 });
    fs.mkdirSync(paths.blobs, { recursive: true, mode: 0o700 });
    const probe = path.join(paths.root, `.write-test-${process.pid}`);
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (err) {
    throw new StartupError(`data directory ${paths.root} is not writable (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
}

/** A user's name from /etc/passwd, or `#uid` (which sudo -u also takes) when it has none. */
function userName(uid: number): string {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && Number(id) === uid && id !== '') return name;
    }
  } catch {
    /* no passwd file: fall through */
  }
  return `#${uid}`;
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * Files written into a data dir by another user (a root-owned secrets.json or database journal) cannot be
 * read by the service that owns it, so every command that opens one refuses to run as anyone but its owner.
 */
export function requireDataDirOwner(root: string): void {
  if (typeof process.getuid !== 'function') return;
  let owner: number;
  try {
    owner = fs.statSync(root).uid;
  } catch {
    return;
  }
  const uid = process.getuid();
  if (owner === uid) return;
  const name = userName(owner);
  const command = ['coffer', ...process.argv.slice(2)].map(shellQuote).join(' ');
  throw new StartupError(
    `${root} belongs to user ${name} but this command runs as ${userName(uid)}, and files it wrote would be unreadable to the service: run it as the owner instead: sudo -u ${shellQuote(name)} ${command}`,
  );
}

/**
 * Every command but `serve` and `init` works on an existing instance only: one pointed at a wrong or
 * missing directory must not quietly start a new instance with a new master key.
 */
export function requireExistingDataDir(paths: DataPaths): void {
  const fix = 'pass --data-dir (or set COFFER_DATA_DIR, or COFFER_CONFIG for a coffer.env), or create a new instance with `coffer init`';
  if (!fs.existsSync(paths.root)) throw new StartupError(`data directory ${paths.root} does not exist: ${fix}`);
  if (!fs.existsSync(paths.database)) throw new StartupError(`${paths.root} holds no Coffer database: ${fix}`);
}

interface SecretsFile {
  version: 1;
  jwtSecret: string;
  masterKey: string;
  previousMasterKeys?: string[];
}

export interface Secrets {
  jwtSecret: Uint8Array;
  keyring: Keyring;
}

function readSecretsFile(file: string): SecretsFile | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StartupError(`cannot read secrets file ${file} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  try {
    const parsed = JSON.parse(text) as SecretsFile;
    if (typeof parsed.jwtSecret !== 'string' || typeof parsed.masterKey !== 'string') throw new Error('fields missing');
    return parsed;
  } catch {
    throw new StartupError(`secrets file ${file} is damaged: restore it from your backup`);
  }
}

function writeSecretsFile(file: string, secrets: SecretsFile): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeFileSync(fd, JSON.stringify(secrets, null, 2) + '\n');
    // Durable before the rename: losing a new master key after data was wrapped with it loses the data.
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  const dir = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

/**
 * Loads the signing secret and the master keys; generates the secrets file on first start.
 * A database without its key is refused: its files could never be read.
 */
export function loadSecrets(config: Config, paths: DataPaths): Secrets {
  let file = readSecretsFile(paths.secrets);
  if (!file) {
    if (config.masterKey.source === 'secrets' && fs.existsSync(paths.database)) {
      throw new StartupError(
        `master key missing: ${paths.secrets} does not exist but the database does; restore the secrets file or set COFFER_MASTER_KEY`,
      );
    }
    file = {
      version: 1,
      jwtSecret: randomBytes(32).toString('base64'),
      masterKey: Buffer.from(generateMasterKey()).toString('base64'),
    };
    writeSecretsFile(paths.secrets, file);
  }

  const currentText = config.masterKey.source === 'secrets' ? file.masterKey : secretText(config.masterKey, 'COFFER_MASTER_KEY_FILE');

  let current;
  try {
    current = masterKeyFrom(parseMasterKey(currentText));
  } catch (err) {
    throw new StartupError(`invalid master key: ${(err as Error).message}`);
  }
  const others = [file.masterKey, ...(file.previousMasterKeys ?? [])]
    .map((text) => {
      try {
        return masterKeyFrom(parseMasterKey(text));
      } catch {
        return null;
      }
    })
    .filter((k): k is NonNullable<typeof k> => k !== null && k.id !== current.id);

  const jwtSecret = new TextEncoder().encode(config.jwtSecret ?? file.jwtSecret);
  return { jwtSecret, keyring: makeKeyring(current, others) };
}

/** Only one `serve` may own a data dir; a stale lock from a dead process is taken over. */
export function acquireLock(paths: DataPaths): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(paths.lock, 'wx', 0o600);
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      return () => {
        try {
          if (fs.readFileSync(paths.lock, 'utf8') === String(process.pid)) fs.rmSync(paths.lock);
        } catch {
          /* already gone */
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new StartupError(`cannot create lock file ${paths.lock} (${(err as NodeJS.ErrnoException).code ?? err})`);
      }
      const pid = Number(fs.readFileSync(paths.lock, 'utf8'));
      if (pid && pid !== process.pid && isAlive(pid)) {
        throw new StartupError(`another Coffer server (pid ${pid}) is already using ${paths.root}`);
      }
      fs.rmSync(paths.lock, { force: true });
    }
  }
  throw new StartupError(`cannot lock ${paths.root}`);
}

/**
 * Holds object deletions back until the returned release is called: a full backup reads the objects its
 * database snapshot names, so none of them may go in the meantime. The hold of a dead process lapses.
 */
export function holdObjectDeletions(paths: DataPaths): () => void {
  fs.mkdirSync(paths.holds, { recursive: true, mode: 0o700 });
  const file = path.join(paths.holds, `backup-${process.pid}-${randomBytes(4).toString('hex')}`);
  fs.writeFileSync(file, String(process.pid), { mode: 0o600 });
  return () => fs.rmSync(file, { force: true });
}

/** Whether a live process holds object deletions back; lapsed holds are removed. */
export function objectDeletionsHeld(paths: DataPaths): boolean {
  let names: string[];
  try {
    names = fs.readdirSync(paths.holds);
  } catch {
    return false;
  }
  let held = false;
  for (const name of names) {
    const file = path.join(paths.holds, name);
    const pid = Number(/^backup-(\d+)-/.exec(name)?.[1]);
    if (pid && isAlive(pid)) held = true;
    else fs.rmSync(file, { force: true });
  }
  return held;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function secretsStamp(file: string): string | null {
  try {
    const st = fs.statSync(file);
    // ctime too: fixing a file's owner or mode changes only that, and must make a failed reload retry.
    return `${st.ino}:${st.mtimeMs}:${st.ctimeMs}:${st.size}`;
  } catch {
    return null;
  }
}

/**
 * Keeps a process's keyring in step with secrets.json, so a server running beside `coffer keys rotate`
 * wraps new files under the new key and can read what the rotation re-wrapped. Costs one stat per use.
 */
export function followSecretsFile(config: Config, paths: DataPaths, keyring: Keyring, log: Logger): void {
  let seen = secretsStamp(paths.secrets);
  let failed: string | null = null;
  keyring.setRefresher(() => {
    const stamp = secretsStamp(paths.secrets);
    // A version that failed is not retried until the file changes again (its owner or mode included).
    if (stamp === null || stamp === seen || stamp === failed) return;
    try {
      const fresh = loadSecrets(config, paths).keyring.keys();
      keyring.install(fresh[0]!, fresh.slice(1));
      seen = stamp;
      failed = null;
    } catch (err) {
      // Keep the keys already loaded; files wrapped under a key only the new file holds cannot be read until it is fixed.
      failed = stamp;
      log.error('cannot reload the secrets file; keeping the keys loaded before', { file: paths.secrets, err: (err as Error).message });
    }
  });
}

/** The ids of the master keys a secrets file holds (current first); a damaged file throws StartupError. */
export function masterKeyIdsIn(file: string): string[] {
  const secrets = readSecretsFile(file);
  if (!secrets) throw new StartupError(`secrets file ${file} is missing`);
  return [secrets.masterKey, ...(secrets.previousMasterKeys ?? [])].flatMap((text) => {
    try {
      return [masterKeyFrom(parseMasterKey(text)).id];
    } catch {
      return [];
    }
  });
}

/**
 * Puts a freshly generated master key into secrets.json as the current one, keeping every earlier key
 * in previousMasterKeys (older data and backups still need them). Returns the new key.
 */
export function addMasterKeyToSecrets(paths: DataPaths): MasterKey {
  const file = readSecretsFile(paths.secrets);
  if (!file) throw new StartupError(`secrets file ${paths.secrets} is missing`);
  const bytes = generateMasterKey();
  const text = Buffer.from(bytes).toString('base64');
  const previous = [file.masterKey, ...(file.previousMasterKeys ?? [])].filter((k, i, all) => all.indexOf(k) === i);
  writeSecretsFile(paths.secrets, { ...file, masterKey: text, previousMasterKeys: previous });
  return masterKeyFrom(bytes);
}
