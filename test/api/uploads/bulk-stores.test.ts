import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { json } from '../../helpers/client.ts';
import { blobFiles } from '../../helpers/files.ts';
import { admin, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import type { StorageDriver } from '../../../src/storage/driver.ts';

let t: TestServer;
let a: SeededLogin;
let originalPut: StorageDriver['put'];

beforeAll(async () => {
  // Local storage: the test counts the objects left in the data directory.
  t = await startTestServer({ env: { COFFER_STORAGE: 'local' } });
  a = await admin(t);
  originalPut = t.server.ctx.driver.put.bind(t.server.ctx.driver);
});
afterAll(() => t.stop());

function bulkForm(count: number, size = 4096): FormData {
  const form = new FormData();
  for (let i = 0; i < count; i++) form.append('files', new File([randomBytes(size)], `small-${i}.bin`));
  return form;
}

const fileCount = () => t.server.ctx.db.$client.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM items WHERE type = 'file'").get()!.n;

describe('bulk upload of small files', () => {
  test('stores small files while the next ones arrive (their syncs overlap), and commits each once it is durable', async () => {
    let running = 0;
    let most = 0;
    let durable = 0;
    let committedEarly = false;
    const before = fileCount();
    t.server.ctx.driver.put = async (key, body, opts) => {
      running++;
      most = Math.max(most, running);
      try {
        // A slow disk: a put that waits for its sync.
        const info = await originalPut(key, body, opts);
        await Bun.sleep(20);
        // No row may commit before every object of the request is durable.
        if (fileCount() !== before) committedEarly = true;
        durable++;
        return info;
      } finally {
        running--;
      }
    };
    try {
      const res = await a.client.request('/api/files/upload/bulk', { method: 'POST', body: bulkForm(40) });
      expect(res.status).toBe(200);
      expect((await json(res)).successful).toBe(40);
      expect(most).toBeGreaterThan(1);
      expect(durable).toBe(40);
      expect(committedEarly).toBe(false);
      expect(fileCount() - before).toBe(40);
    } finally {
      t.server.ctx.driver.put = originalPut;
    }
  });

  test('a store that fails fails the whole request: nothing is acknowledged or committed, and every object it stored is removed', async () => {
    let calls = 0;
    t.server.ctx.driver.put = async (key, body, opts) => {
      if (++calls !== 7) {
        const info = await originalPut(key, body, opts);
        await Bun.sleep(10);
        return info;
      }
      // As the local driver fails a sync: the bytes were read, nothing was published.
      for await (const _ of body);
      await Bun.sleep(10);
      throw new Error('sync failed: EIO');
    };
    try {
      const before = { files: fileCount(), objects: blobFiles(t.dataDir).objects.length };
      const res = await a.client.request('/api/files/upload/bulk', { method: 'POST', body: bulkForm(30) });
      expect(res.status).toBe(500);
      expect(calls).toBeGreaterThanOrEqual(7);
      expect(fileCount()).toBe(before.files);
      expect(blobFiles(t.dataDir).objects.length).toBe(before.objects);
    } finally {
      t.server.ctx.driver.put = originalPut;
    }
  });

  test('a file over the size limit fails alone, held or streamed, and the others are stored', async () => {
    t.server.ctx.services.settings.set('maxUploadBytes', 1024 * 1024);
    try {
      const form = new FormData();
      form.append('files', new File([randomBytes(4096)], 'a.bin'));
      form.append('files', new File([randomBytes(1024 * 1024 + 1)], 'too-big.bin'));
      form.append('files', new File([randomBytes(300 * 1024)], 'streamed.bin'));
      form.append('files', new File([randomBytes(4096)], 'b.bin'));
      const body = await json(await a.client.request('/api/files/upload/bulk', { method: 'POST', body: form }));
      expect(body).toMatchObject({ total: 4, successful: 3, failedCount: 1 });
      expect(body.files.map((f: { name: string }) => f.name)).toEqual(['a.bin', 'streamed.bin', 'b.bin']);
      expect(body.failed[0].fileName).toBe('too-big.bin');
    } finally {
      t.server.ctx.services.settings.set('maxUploadBytes', 10 * 1024 ** 3);
    }
  });
});
