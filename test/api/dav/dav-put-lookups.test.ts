import { Database } from 'bun:sqlite';
import { afterAll, beforeAll, describe, expect, spyOn, test } from 'bun:test';
import { type DavClient, davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import { storedObjectFiles } from '../../helpers/files.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { transactionAtRuns } from '../../helpers/statements.ts';

let t: TestServer;
let owner: seed.SeededLogin;
let dav: DavClient;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
  owner = await seed.owner(t);
  dav = await davLogin(t, owner);
});

const folderId = (name: string) =>
  (t.server.ctx.db.$client.query('SELECT id FROM items WHERE account_id = ? AND name = ?').get(owner.id, name) as { id: string }).id;
afterAll(() => t.stop());

describe('a WebDAV PUT of a new file at the root, for an account that reaches no team folder', () => {
  test('looks its name up once to find where it goes and once for a free name as the row is written', async () => {
    const byName = spyOn(t.server.ctx.repos.items, 'liveByName');
    try {
      const res = await dav.request('PUT', 'new.bin', { body: 'four' });
      expect(res.status).toBe(201);
      expect(byName.mock.calls.filter(([, parentId, name]) => parentId === null && name === 'new.bin')).toHaveLength(2);
    } finally {
      byName.mockRestore();
    }
    const again = await dav.request('PUT', 'new.bin', { body: 'five!' });
    expect(again.status).toBe(204);
    expect(await (await dav.request('GET', 'new.bin')).text()).toBe('five!');
  });
});

describe('a WebDAV PUT of a new file two folders down', () => {
  test('looks the names of its path up once, under one read transaction, and reads its folder by id only in the commit', async () => {
    for (const folder of ['deep', 'deep/er']) expect((await dav.request('MKCOL', folder)).status).toBe(201);
    const { items } = t.server.ctx.repos;
    const sqlite = t.server.ctx.db.$client;
    const liveByName = items.liveByName;
    const inTransaction: boolean[] = [];
    items.liveByName = (...args) => {
      inTransaction.push(sqlite.inTransaction);
      return liveByName.apply(items, args);
    };
    let folderReads: boolean[];
    try {
      folderReads = await transactionAtRuns(
        t,
        'FROM items WHERE id = ? AND account_id = ? AND deleted_at IS NULL',
        async () => expect((await dav.request('PUT', 'deep/er/new.bin', { body: 'four' })).status).toBe(201),
        folderId('er'),
      );
    } finally {
      items.liveByName = liveByName;
    }
    // The walk's three names (the folder it goes into found with them), the free name's probe as the row is written.
    expect(inTransaction).toEqual([true, true, true, true]);
    // Not before the body: the walk found it in this request; the commit finds it again under the write lock.
    expect(folderReads).toEqual([true]);
    expect(await (await dav.request('GET', 'deep/er/new.bin')).text()).toBe('four');
  });
});

describe('WebDAV PUTs of one new path at once', () => {
  test('the first creates the file, each one after it waits and replaces it: one file, no numbered copy', async () => {
    const bodies = Array.from({ length: 6 }, (_, i) => `content ${i}`);
    const statuses = await Promise.all(bodies.map(async (body) => (await dav.request('PUT', 'raced.txt', { body })).status));
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 204)).toHaveLength(bodies.length - 1);
    const listing = await (await dav.request('PROPFIND', '', { headers: { Depth: '1' } })).text();
    // Every resource's href names it once: another file beside it would be a second href.
    expect(listing.match(/href>[^<]*raced[^<]*</g)).toEqual(['href>/dav/raced.txt<']);
    expect(bodies).toContain(await (await dav.request('GET', 'raced.txt')).text());
  });
});

describe('a WebDAV request signed in with an app password', () => {
  test('reads the login and the app password under one read transaction, the same snapshot', async () => {
    // A new app password: its first request reads both rows.
    const fresh = await davLogin(t, await seed.owner(t));
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
      expect((await fresh.request('PUT', 'signed-in.bin', { body: 'four' })).status).toBe(201);
    } finally {
      users.byEmailKey = byEmailKey;
      appPasswords.bySecretHash = bySecretHash;
    }
    expect(seen).toEqual(['login true', 'app password true']);
    expect(sqlite.inTransaction).toBe(false);
  });

  test('the next request reads neither row; an app password removed, or a login disabled, by another process is refused at the request after', async () => {
    const owner = await seed.owner(t);
    const [kept, removed] = [await davLogin(t, owner, 'kept'), await davLogin(t, owner, 'removed')];
    expect((await kept.request('PUT', 'first.bin', { body: 'one' })).status).toBe(201);
    expect((await removed.request('PUT', 'second.bin', { body: 'two' })).status).toBe(201);
    const { users, appPasswords } = t.server.ctx.repos;
    const byEmailKey = spyOn(users, 'byEmailKey');
    const bySecretHash = spyOn(appPasswords, 'bySecretHash');
    try {
      expect((await kept.request('PUT', 'again.bin', { body: 'three' })).status).toBe(201);
      expect((await removed.request('PROPFIND', '', { headers: { Depth: '0' } })).status).toBe(207);
      expect(byEmailKey).not.toHaveBeenCalled();
      expect(bySecretHash).not.toHaveBeenCalled();
    } finally {
      byEmailKey.mockRestore();
      bySecretHash.mockRestore();
    }
    // The CLI beside the server: another connection to the same database.
    const other = new Database(t.server.ctx.db.$client.filename);
    try {
      other.run('PRAGMA busy_timeout = 5000');
      other.run('DELETE FROM app_passwords WHERE id = ?', [removed.id]);
      expect((await removed.request('PROPFIND', '', { headers: { Depth: '0' } })).status).toBe(401);
      expect((await kept.request('PROPFIND', '', { headers: { Depth: '0' } })).status).toBe(207);
      other.run('UPDATE users SET disabled_at = ? WHERE id = ?', [Date.now(), owner.id]);
      expect((await kept.request('PROPFIND', '', { headers: { Depth: '0' } })).status).toBe(401);
    } finally {
      other.close();
    }
  });
});

describe('a WebDAV PUT into a folder trashed while its body is sent', () => {
  test('is refused at its commit as before: 404, the folder not found, nothing stored', async () => {
    for (const folder of ['going', 'going/gone']) expect((await dav.request('MKCOL', folder)).status).toBe(201);
    const objects = storedObjectFiles(t).objects.length;
    let step = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        step++;
        if (step === 1) c.enqueue(new TextEncoder().encode('first half '));
        else if (step === 2) {
          await Bun.sleep(100);
          expect((await dav.request('DELETE', 'going')).status).toBe(204);
          c.enqueue(new TextEncoder().encode('second half'));
        } else c.close();
      },
    });
    const res = await fetch(`${t.url}/dav/going/gone/late.bin`, {
      method: 'PUT',
      headers: { authorization: dav.authorization },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('Folder not found');
    expect(t.server.ctx.db.$client.query("SELECT COUNT(*) AS n FROM items WHERE name = 'late.bin'").get()).toEqual({ n: 0 });
    expect(storedObjectFiles(t).objects.length).toBe(objects);
  });
});

describe('a WebDAV COPY inside a folder shared with the caller', () => {
  test('places each of its paths once, reading what is shared with the caller once each, and looks the destination up once', async () => {
    const member = await seed.owner(t);
    const memberDav = await davLogin(t, member);
    for (const folder of ['team', 'team/plans']) expect((await dav.request('MKCOL', folder)).status).toBe(201);
    expect((await dav.request('PUT', 'team/plans/a.txt', { body: 'plan' })).status).toBe(201);
    const res = await owner.client.post(`/api/files/${folderId('team')}/members`, { email: member.email, role: 'editor' });
    expect(res.status).toBe(201);
    const { members, items } = t.server.ctx.repos;
    const sharedWith = spyOn(members, 'sharedWith');
    const byName = spyOn(items, 'liveByName');
    try {
      const copy = await memberDav.request('COPY', 'Shared%20with%20me/team/plans/a.txt', {
        headers: { destination: `${t.url}/dav/Shared%20with%20me/team/plans/b.txt` },
      });
      expect(copy.status).toBe(201);
      // The source's place, then the destination's (eight before: each path placed twice, each placing reading it twice).
      expect(sharedWith.mock.calls).toHaveLength(2);
      // The destination's names once each (its folder was looked up, then its whole path again), and once for the copy's row.
      expect(byName.mock.calls.filter(([, , name]) => name === 'b.txt')).toHaveLength(2);
      expect(byName.mock.calls.filter(([, , name]) => name === 'plans')).toHaveLength(2);
    } finally {
      sharedWith.mockRestore();
      byName.mockRestore();
    }
    expect(await (await memberDav.request('GET', 'Shared%20with%20me/team/plans/b.txt')).text()).toBe('plan');
  });
});
