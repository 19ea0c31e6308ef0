import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { secretText, type Config } from '../config.ts';
import { StartupError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { generateMasterKey, makeKeyring, masterKeyFrom, parseMasterKey, type Keyring, type MasterKey } from './keyring.ts';

/** Where a data directory keeps its secrets file, and its database (a database without its key is refused). */
interface SecretsPaths {
  secrets: string;
  database: string;
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
export function loadSecrets(config: Config, paths: SecretsPaths): Secrets {
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
export function followSecretsFile(config: Config, paths: SecretsPaths, keyring: Keyring, log: Logger): void {
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
export function addMasterKeyToSecrets(paths: SecretsPaths): MasterKey {
  const file = readSecretsFile(paths.secrets);
  if (!file) throw new StartupError(`secrets file ${paths.secrets} is missing`);
  const bytes = generateMasterKey();
  const text = Buffer.from(bytes).toString('base64');
  const previous = [file.masterKey, ...(file.previousMasterKeys ?? [])].filter((k, i, all) => all.indexOf(k) === i);
  writeSecretsFile(paths.secrets, { ...file, masterKey: text, previousMasterKeys: previous });
  return masterKeyFrom(bytes);
}
