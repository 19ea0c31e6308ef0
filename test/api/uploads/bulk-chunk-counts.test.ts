import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { blobFiles } from '../../helpers/files.ts';
import { admin, owner, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import type { StorageDriver } from '../../../src/storage/driver.ts';
import { Messages } from '../../../src/errors.ts';

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

const sqlite = () => t.server.ctx.db.$client;
const fileCount = () => sqlite().query<{ n: number }, []>("SELECT COUNT(*) AS n FROM items WHERE type = 'file'").get()!.n;
const intents = () => sqlite().query<{ n: number }, []>('SELECT COUNT(*) AS n FROM upload_intents').get()!.n;

function bulkForm(count: number, content: (i: number) => string): FormData {
  const form = new FormData();
  for (let i = 0; i < count; i++) form.append('files', new File([content(i)], `file-${i}.txt`));
  return form;
}

/** Runs `during` once the request's last object is stored, before any of its rows commits. */
async function afterLastStore(count: number, during: () => void, send: () => Promise<Response>): Promise<Response> {
  let puts = 0;
  t.server.ctx.driver.put = async (key, body, opts) => {
    const info = await originalPut(key, body, opts);
    if (++puts === count) during();
    return info;
  };
  try {
    return await send();
  } finally {
    t.server.ctx.driver.put = originalPut;
  }
}

describe("a bulk request's chunk does once what each of its files repeated", () => {
  test('150 files: the usage counter read and written, the location checked and the intents cleared once per chunk of 100, the location once per group of intents', async () => {
    const query = spyOn(sqlite(), 'query');
    let sql: string[];
    try {
      const res = await a.client.request('/api/files/upload/bulk', { method: 'POST', body: bulkForm(150, (i) => `file ${i}`) });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { successful: number }).successful).toBe(150);
      sql = query.mock.calls.map(([text]) => String(text));
    } finally {
      query.mockRestore();
    }
    const count = (pattern: RegExp) => sql.filter((text) => pattern.test(text)).length;
    // One read for the budget before the target is known, then one per chunk (151 before: one per file).
    expect(count(/"storage_used" AS "storageUsed".* FROM users WHERE id = \?/)).toBe(3);
    expect(count(/UPDATE users SET storage_used/)).toBe(2);
    expect(count(/DELETE FROM upload_intents/)).toBe(2);
    // One per chunk, and one per group commit of the intents recorded before the objects are written (the stores
    // start up to 16 at once): 152 before the twelfth pass (one per intent), 300 before the tenth (twice per file).
    expect(count(/FROM storage_location/)).toBeGreaterThan(2);
    expect(count(/FROM storage_location/)).toBeLessThan(100);
    expect(intents()).toBe(0);
  });

  test('the store refusing writes when the rows commit (a storage move began): every file fails with its message, and none is kept', async () => {
    const before = { files: fileCount(), objects: blobFiles(t.dataDir).objects.length };
    const location = t.server.ctx.repos.storageLocation;
    const res = await afterLastStore(
      5,
      () => location.setWritesPaused(Date.now()),
      () => a.client.request('/api/files/upload/bulk', { method: 'POST', body: bulkForm(5, (i) => `moving ${i}`) }),
    );
    location.setWritesPaused(null);
    const body = await json(res);
    expect(body).toMatchObject({ total: 5, successful: 0, failedCount: 5 });
    expect(body.failed.map((f: { error: string }) => f.error)).toEqual(Array(5).fill(Messages.storageMoving));
    // Before, each file's row was inserted before its check failed, and committed with the chunk: rows without objects.
    expect(fileCount()).toBe(before.files);
    expect(blobFiles(t.dataDir).objects.length).toBe(before.objects);
    expect(intents()).toBe(0);
  });

  test('room running out inside a chunk: the files before fit, the ones after fail with what is left, and the counter holds exactly the kept bytes', async () => {
    const o = await owner(t);
    const quota = t.server.ctx.services.quota;
    const setLimit = (bytes: number | null) => sqlite().query('UPDATE users SET storage_limit = ? WHERE id = ?').run(bytes, o.id);
    setLimit(100_000);
    const content = (i: number) => String(i % 10).repeat(1000);
    // The objects are stored within the limit; then the limit drops to leave room for two and a half files.
    const res = await afterLastStore(
      5,
      () => setLimit(quota.usage(o.id).used + 2500),
      () => o.client.request('/api/files/upload/bulk', { method: 'POST', body: bulkForm(5, content) }),
    );
    const body = await json(res);
    expect(body).toMatchObject({ total: 5, successful: 2, failedCount: 3 });
    expect(body.files.map((f: { name: string }) => f.name)).toEqual(['file-0.txt', 'file-1.txt']);
    expect(body.failed.map((f: { error: string }) => f.error)).toEqual(
      Array(3).fill('Storage limit exceeded. Required: 1000, available: 500.'),
    );
    expect(quota.usage(o.id)).toMatchObject({ used: 2000, free: 500 });
  });
});
