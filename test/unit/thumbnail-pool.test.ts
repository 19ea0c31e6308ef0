import { expect, test } from 'bun:test';
import fs from 'node:fs';
import { createLogger } from '../../src/log.ts';
import { ThumbnailPool } from '../../src/services/thumbnails/pool.ts';
import { eventually } from '../helpers/eventually.ts';
import { startedSince, workerThreads } from '../helpers/threads.ts';
import { tempDir } from '../helpers/run-root.ts';

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

test('a thumbnail worker left idle for idleMs is ended; the next thumbnail starts another', async () => {
  const cacheDir = tempDir('coffer-pool-');
  const pool = new ThumbnailPool({ cacheDir, maxPixels: 100_000_000 }, 1, createLogger('silent'), 300);
  const before = workerThreads();
  try {
    expect((await pool.make('image', async () => new Uint8Array(PNG), true)).ok).toBe(true);
    const [first] = [...startedSince(before).keys()];
    expect(first).toBeDefined();
    await eventually(() => expect(workerThreads().has(first!)).toBe(false));
    expect((await pool.make('image', async () => new Uint8Array(PNG), true)).ok).toBe(true);
    expect(startedSince(before).size).toBe(1);
  } finally {
    pool.stop();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
});
