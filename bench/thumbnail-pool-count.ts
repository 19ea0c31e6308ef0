// `valgrind --tool=callgrind bun bench/thumbnail-pool-count.ts <photo.jpg> <N> [src folder]`: N images through one
// thumbnail worker of a `src/` tree (this checkout's by default). Run with N = 1 and N = 3: (three − one) / 2 is the
// instructions per image, a figure the machine's load and speed do not move (the sixteenth pass, docs/performance.md).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../src/log.ts';
import type { ThumbnailPool } from '../src/services/thumbnails/pool.ts';

const [photo, n = '1', src = path.join(import.meta.dir, '..')] = process.argv.slice(2);
if (!photo) throw new Error('usage: bun bench/thumbnail-pool-count.ts <photo.jpg> <N> [src folder]');
const bytes = fs.readFileSync(photo);
const { ThumbnailPool: Pool } = (await import(path.resolve(src, 'src/services/thumbnails/pool.ts'))) as {
  ThumbnailPool: typeof ThumbnailPool;
};
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-thumb-count-'));
const pool = new Pool({ cacheDir, maxPixels: 100_000_000 }, 1, createLogger('silent'));
try {
  for (let i = 0; i < Number(n); i++) {
    const made = await pool.make('image', () => Promise.resolve(new Uint8Array(bytes)), false);
    if (!made.ok) throw new Error(made.reason);
  }
} finally {
  pool.stop();
  fs.rmSync(cacheDir, { recursive: true, force: true });
}
