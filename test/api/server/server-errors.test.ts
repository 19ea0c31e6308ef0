import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { upload } from '../../helpers/files.ts';
import { memoryLogger, waitForLine } from '../../helpers/logs.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const logger = memoryLogger();
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ logger, startWorker: false });
});
afterAll(() => t.stop());

describe('every 500 is logged with its request id', () => {
  test('a file whose stored object is missing → 500 {message} and an error line naming the request', async () => {
    const o = await seed.owner(t);
    const item = await upload(o.client, 'gone.bin', 'some bytes');
    const key = t.server.ctx.repos.items.get(o.id, item.id)!.storageKey!;
    await t.server.ctx.driver.delete(key);
    const res = await o.client.get(`/api/files/${item.id}/download`, { 'x-request-id': 'missing-object-1' });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ message: 'The stored file is missing from storage' });
    const line = await waitForLine(logger, (l) => l.level === 'error' && l.fields.requestId === 'missing-object-1');
    expect(line.fields).toMatchObject({ method: 'GET', path: `/api/files/${item.id}/download` });
    expect(String(line.fields.err)).toContain('does not exist');
  });
});
