import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../../helpers/eventually.ts';
import { storedKeys, upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// More than one sweep batch (16), so the pause between batches shows.
const COUNT = 20;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ env: { COFFER_STORAGE: 'local' } });
});
afterAll(() => t.stop());

/** Every thumbnail object file under the local store of `dataDir`. */
function thumbnailFiles(dataDir: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name));
      else if (/_thumb_(small|large)$/.test(e.name)) found.push(path.join(dir, e.name));
    }
  };
  walk(path.join(dataDir, 'blobs'));
  return found;
}

test('after an upgrade from a version without thumbnails, the start-up backfill makes them unasked, a batch at a time', async () => {
  const owner = await seed.owner(t);
  const keys: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    const file = await upload(owner.client, `old-${i}.png`, await img.png(300 + i, 200), { type: 'image/png' });
    keys.push(t.server.ctx.repos.items.getLive(owner.id, file.id)!.storageKey!);
  }
  const ready = () => keys.every((k) => t.server.ctx.repos.thumbnails.get(k)?.status === 'ready');
  await eventually(ready, { timeoutMs: 60_000 });

  // Stopped, the data dir is left as a version without thumbnails left it: files, no records, no objects.
  await t.restart({
    whileDown: async () => {
      const db = new Database(path.join(t.dataDir, 'coffer.db'));
      try {
        db.run('DELETE FROM thumbnails');
      } finally {
        db.close();
      }
      for (const f of thumbnailFiles(t.dataDir)) fs.rmSync(f);
      expect(thumbnailFiles(t.dataDir)).toEqual([]);
    },
  });

  // No request asks for one: the server starts the backfill itself.
  await eventually(ready, { timeoutMs: 60_000, intervalMs: 100 });
  const stored = await storedKeys(t);
  for (const k of keys) expect(stored).toEqual(expect.arrayContaining([`${k}_thumb_small`, `${k}_thumb_large`]));

  // Throttled: 16 files a job, and the next job a pause (250 ms) after the last of the batch before it.
  const made = keys.map((k) => t.server.ctx.repos.thumbnails.get(k)!.createdAt).sort((a, b) => a - b);
  expect(made[16]! - made[15]!).toBeGreaterThanOrEqual(250);
});
