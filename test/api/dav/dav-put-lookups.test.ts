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

describe('a WebDAV request signed in with an app password', () => {
  test('reads the login and the app password under one read transaction, the same snapshot', async () => {
    const { users, appPasswords } = t.server.ctx.repos;
    const sqlite = t.server.ctx.db.$client;
    const seen: string[] = [];
    const byEmailKey = users.byEmailKey;
    const bySecretHash = appPasswords.bySecretHash;
    users.byEmailKey = (...args) => {
      seen.push(`login ${sqlite.inTransaction}`);
      return byEmailKey.apply(users, args);
    };
    appPasswords.bySecretHash = (...args) => {
      seen.push(`app password ${sqlite.inTransaction}`);
      return bySecretHash.apply(appPasswords, args);
    };
    try {
      expect((await dav.request('PUT', 'signed-in.bin', { body: 'four' })).status).toBe(201);
    } finally {
      users.byEmailKey = byEmailKey;
      appPasswords.bySecretHash = bySecretHash;
    }
    expect(seen).toEqual(['login true', 'app password true']);
    expect(sqlite.inTransaction).toBe(false);
  });
});
