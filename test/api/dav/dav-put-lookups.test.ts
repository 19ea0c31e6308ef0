import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test';
import { type DavClient, davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let dav: DavClient;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
  dav = await davLogin(t, await seed.owner(t));
});
afterAll(() => t.stop());

describe('a WebDAV PUT of a new file at the root, for an account that reaches no team folder', () => {
  test('looks its name up once to find where it goes, once more under the write lock, once for a free name', async () => {
    const byName = spyOn(t.server.ctx.repos.items, 'liveByName');
    try {
      const res = await dav.request('PUT', 'new.bin', { body: 'four' });
      expect(res.status).toBe(201);
      expect(byName.mock.calls.filter(([, parentId, name]) => parentId === null && name === 'new.bin')).toHaveLength(3);
    } finally {
      byName.mockRestore();
    }
    const again = await dav.request('PUT', 'new.bin', { body: 'five!' });
    expect(again.status).toBe(204);
    expect(await (await dav.request('GET', 'new.bin')).text()).toBe('five!');
  });
});
