import { afterAll, describe, expect, spyOn, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { ManualClock } from '../../src/clock.ts';
import type { Config } from '../../src/config.ts';
import type { Logger } from '../../src/log.ts';
import { wrappedKeyId } from '../../src/storage/keyring.ts';
import { addMasterKeyToSecrets, followSecretsFile, loadSecrets, SECRETS_RECHECK_MS } from '../../src/storage/secrets-file.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('coffer-secrets-follow-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const paths = { secrets: path.join(dir, 'secrets.json'), database: path.join(dir, 'coffer.db') };
const config = { masterKey: { source: 'secrets' } } as unknown as Config;
const log = { error: () => {} } as unknown as Logger;
const dataKey = new Uint8Array(32).fill(3);

describe('a keyring following secrets.json', () => {
  test('wrapping looks at the file once a second, and sees a rotated key by then', () => {
    const { keyring } = loadSecrets(config, paths);
    const clock = new ManualClock(1_000_000);
    followSecretsFile(config, paths, keyring, log, clock);
    const stat = spyOn(fs, 'statSync');
    try {
      const before = keyring.current.id;
      clock.advance(SECRETS_RECHECK_MS);
      for (let i = 0; i < 200; i++) keyring.wrap(dataKey);
      const looks = stat.mock.calls.filter(([p]) => p === paths.secrets).length;
      expect(looks).toBe(1);

      const rotated = addMasterKeyToSecrets(paths);
      clock.advance(SECRETS_RECHECK_MS);
      expect(wrappedKeyId(keyring.wrap(dataKey))).toBe(rotated.id);
      expect(keyring.has(before)).toBe(true);
    } finally {
      stat.mockRestore();
    }
  });

  test('a value under a key not loaded yet makes it look at once', () => {
    const { keyring } = loadSecrets(config, paths);
    const clock = new ManualClock(1_000_000);
    followSecretsFile(config, paths, keyring, log, clock);
    addMasterKeyToSecrets(paths);
    const other = loadSecrets(config, paths).keyring;
    expect(Buffer.from(keyring.unwrap(other.wrap(dataKey))).equals(Buffer.from(dataKey))).toBe(true);
  });
});
