import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/server.ts';
import { LocalDriver } from '../../src/storage/local.ts';
import { isValidStorageKey, newStorageKey } from '../../src/storage/keys.ts';

const root = tempDir('coffer-keys-');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('new storage keys (docs/performance.md, the thirteenth pass: single)', () => {
  test('land in at most 4,096 of the local driver’s shard folders, so a folder is made and synced once, not per object', () => {
    const driver = new LocalDriver(root);
    const keys = Array.from({ length: 20_000 }, newStorageKey);
    const folders = new Set(keys.map((key) => path.dirname(driver.pathOf(key))));
    expect(folders.size).toBeLessThanOrEqual(4096);
    // Spread over the first level as before: 20,000 draws from 4,096 leave few of them unused.
    expect(new Set(keys.map((key) => key.slice(0, 2))).size).toBeGreaterThan(3900);
  });

  test('stay valid, distinct and random past their shard folder', () => {
    const keys = Array.from({ length: 20_000 }, newStorageKey);
    expect(keys.every(isValidStorageKey)).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(keys.map((key) => key.slice(4, 8))).size).toBeGreaterThan(19_900);
  });
});
