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
  });

  test('come 64 at a time in one folder, the uploads in progress sharing its syncs; the folders drawn at random, spread evenly', () => {
    const keys = Array.from({ length: 64 * 10_000 }, newStorageKey);
    const runs: number[] = [];
    for (let i = 0, run = 1; i < keys.length; i++, run++)
      if (i === keys.length - 1 || keys[i + 1]!.slice(0, 2) !== keys[i]!.slice(0, 2)) {
        runs.push(run);
        run = 0;
      }
    // Between the first and the last (this test's keys start and end mid-run) every run is 64 keys, or a multiple
    // when a draw repeats the folder before it (1 in 4,096).
    expect(runs.slice(1, -1).every((run) => run % 64 === 0)).toBe(true);
    expect(runs.length).toBeGreaterThan(9_990);
    // 10,000 draws from 4,096 leave about 4,096 × e^-2.44 ≈ 356 unused.
    expect(new Set(keys.map((key) => key.slice(0, 2))).size).toBeGreaterThan(3600);
  });

  test('stay valid, distinct and random past their shard folder', () => {
    const keys = Array.from({ length: 20_000 }, newStorageKey);
    expect(keys.every(isValidStorageKey)).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(keys.map((key) => key.slice(4, 8))).size).toBeGreaterThan(19_900);
  });
});
