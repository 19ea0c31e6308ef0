import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import { folder, listAll, seedRows, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { ManualClock } from '../../../src/clock.ts';
import { ThumbnailsRepo } from '../../../src/db/repos/thumbnails.ts';
import { THUMBNAIL_TYPES, VIDEO_TYPES } from '../../../src/services/thumbnails/formats.ts';
import { itemsReadPlans } from '../../helpers/query-plans.ts';

let t: TestServer;
const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
let owner: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer({ clock, startWorker: false });
  owner = await seed.admin(t);
});
afterAll(() => t.stop());

const validationFields = async (res: Response) => {
  expect(res.status).toBe(422);
  const body = await json(res);
  expect(body.message).toBe('Validation failed');
  return body.details.map((d: { field: string }) => d.field) as string[];
};

describe('POST /api/files/folder', () => {
  test('answers {id, name, type, size: null, modified}; the same name again gets (1), (2), case-insensitively', async () => {
    const o = await seed.owner(t);
    const res = await o.client.post('/api/files/folder', { name: '  Projects  ' });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(['id', 'modified', 'name', 'size', 'type']);
    expect(body).toMatchObject({ name: 'Projects', type: 'folder', size: null });
    expect(body.id.length).toBeGreaterThanOrEqual(16);
    expect((await folder(o.client, 'Projects')).name).toBe('Projects (1)');
    expect((await folder(o.client, 'PROJECTS')).name).toBe('PROJECTS (2)');
    const inner = await folder(o.client, 'Projects', body.id);
    expect(inner.name).toBe('Projects');
  });

  test.each([
    [''],
    ['   '],
    ['a/b'],
    ['a\\b'],
    ['x'.repeat(101)],
    ['.'],
    ['..'],
    ['tab\there'],
    ['a|b'],
    ['what?'],
    ['<x>'],
    ['a"b'],
    ['c:d'],
    ['star*'],
  ])('name %p → 422 naming name', async (name) => {
    expect(await validationFields(await owner.client.post('/api/files/folder', { name }))).toContain('name');
  });

  test('a missing, trashed or non-folder parent → 404', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'a.txt', 'hello');
    for (const parentId of ['nope-nope-nope-nope', file.id]) {
      const res = await o.client.post('/api/files/folder', { name: 'x', parentId });
      expect(res.status).toBe(404);
    }
  });
});

describe('GET /api/files', () => {
  test('folders come first, then files, in the requested order; X-Next-Cursor only while more pages exist', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'b.txt', 'bb');
    await folder(o.client, 'zeta');
    await upload(o.client, 'a.txt', 'a');
    await folder(o.client, 'alpha');
    const res = await o.client.get('/api/files?sortBy=name&order=asc');
    expect(res.headers.get('x-next-cursor')).toBeNull();
    const names = (await json<any[]>(res)).map((i) => i.name);
    expect(names).toEqual(['alpha', 'zeta', 'a.txt', 'b.txt']);
    const desc = (await json<any[]>(await o.client.get('/api/files?sortBy=name&order=desc'))).map((i) => i.name);
    expect(desc).toEqual(['zeta', 'alpha', 'b.txt', 'a.txt']);
    const first = await o.client.get('/api/files?sortBy=name&order=asc&limit=3');
    expect(first.headers.get('x-next-cursor')).toBeTruthy();
    const item = (await json<any[]>(first))[2];
    expect(Object.keys(item).sort()).toEqual(
      [
        'accessedAt',
        'expiresAt',
        'hasThumbnail',
        'id',
        'mimeType',
        'modified',
        'name',
        'parentId',
        'shared',
        'sharedAt',
        'size',
        'starred',
        'type',
      ].sort(),
    );
    expect(item).toMatchObject({
      name: 'a.txt',
      type: 'file',
      size: 1,
      parentId: null,
      starred: false,
      shared: false,
      sharedAt: null,
      expiresAt: null,
    });
  });

  test('an unknown sortBy falls back to modified; bad limits → 422; malformed or mismatched cursors → 400 Invalid cursor', async () => {
    const o = await seed.owner(t);
    seedRows(t, o.id, null, 5);
    expect((await o.client.get('/api/files?sortBy=bogus&order=sideways')).status).toBe(200);
    for (const limit of ['0', '501', 'abc', '2.5'])
      expect(await validationFields(await o.client.get(`/api/files?limit=${limit}`))).toContain('limit');
    for (const cursor of ['%%%', 'bm90LWpzb24', Buffer.from('[1,2]').toString('base64url')]) {
      const res = await o.client.get(`/api/files?cursor=${cursor}`);
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual(errors.invalidCursor);
    }
    const page = await o.client.get('/api/files?sortBy=name&limit=2');
    const cursor = page.headers.get('x-next-cursor')!;
    const mismatch = await o.client.get(`/api/files?sortBy=size&limit=2&cursor=${cursor}`);
    expect(mismatch.status).toBe(400);
  });

  describe('keyset paging through a folder of 1000 items with limit 7', () => {
    let o: seed.SeededLogin;
    let dir: any;
    let ids: string[];
    const base = Date.parse('2025-06-01T00:00:00Z');

    beforeAll(async () => {
      o = await seed.owner(t);
      dir = await folder(o.client, 'big');
      // Many equal sort values, so the id tie-break carries the order.
      ids = seedRows(t, o.id, dir.id, 1000, (i) => ({
        name: `${['Alpha', 'beta', 'Gamma', 'delta'][i % 4]}-${String(i % 97).padStart(3, '0')}-${i}`,
        type: i % 20 === 0 ? 'folder' : 'file',
        size: (i * 7919) % 50,
        modifiedAt: base + (i % 13) * 1000,
        accessedAt: base + (i % 5) * 1000,
      }));
    });

    for (const sortBy of ['name', 'size', 'modified', 'accessedAt']) {
      for (const order of ['asc', 'desc']) {
        test(`${sortBy} ${order}: every item exactly once, folders first, in order`, async () => {
          const all = await listAll(o.client, `/api/files?parentId=${dir.id}&sortBy=${sortBy}&order=${order}&limit=7`);
          expect(all.length).toBe(1000);
          expect(new Set(all.map((i) => i.id)).size).toBe(1000);
          const firstFile = all.findIndex((i) => i.type === 'file');
          expect(all.slice(0, firstFile).every((i) => i.type === 'folder')).toBe(true);
          expect(all.slice(firstFile).every((i) => i.type === 'file')).toBe(true);
          const key = (i: any) =>
            sortBy === 'name'
              ? i.name.toLowerCase()
              : sortBy === 'size'
                ? (i.size ?? 0)
                : Date.parse(sortBy === 'modified' ? i.modified : i.accessedAt);
          for (let n = 1; n < all.length; n++) {
            const [a, b] = [all[n - 1], all[n]];
            if (a.type !== b.type) continue;
            const cmp = key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id < b.id ? -1 : 1;
            expect(order === 'asc' ? cmp : -cmp).toBe(-1);
          }
        });
      }
    }

    test('items added and removed while paging: no unchanged item is repeated or skipped', async () => {
      const removed = new Set<string>();
      const seen: string[] = [];
      let cursor: string | null = null;
      let round = 0;
      do {
        const res = await o.client.get(`/api/files?parentId=${dir.id}&sortBy=name&order=asc&limit=7${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...(await json<any[]>(res)).map((i) => i.id));
        cursor = res.headers.get('x-next-cursor');
        round++;
        // Add items on both sides of the cursor, and remove one not yet seen and one already seen.
        seedRows(t, o.id, dir.id, 2, (i) => ({ name: `${i ? 'zz' : 'aa'}-new-${round}` }));
        const notSeen = ids.find((id) => !removed.has(id) && !seen.includes(id));
        for (const id of [notSeen, seen[seen.length - 1]]) {
          if (!id) continue;
          removed.add(id);
          t.server.ctx.db.$client.query('DELETE FROM items WHERE id = ?').run(id);
        }
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      const unchanged = ids.filter((id) => !removed.has(id));
      const seenSet = new Set(seen);
      expect(unchanged.filter((id) => !seenSet.has(id))).toEqual([]);
    });
  });

  test('opening a folder marks the folder read (at most once an hour), not its children', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'opened');
    const before = (await json(await o.client.get(`/api/files/${dir.id}/info`))).accessedAt;
    clock.advance(2 * 3600_000);
    await o.client.get(`/api/files?parentId=${dir.id}`);
    t.server.ctx.services.access.flush();
    const after = (await json(await o.client.get(`/api/files/${dir.id}/info`))).accessedAt;
    expect(Date.parse(after)).toBeGreaterThan(Date.parse(before));
    clock.advance(60_000);
    await o.client.get(`/api/files?parentId=${dir.id}`);
    t.server.ctx.services.access.flush();
    expect((await json(await o.client.get(`/api/files/${dir.id}/info`))).accessedAt).toBe(after);
  });
});

describe('POST /api/files/rename', () => {
  test('answers {id, name, type, modified}; a sibling with the name in any case → 409; changing only the case is fine', async () => {
    const o = await seed.owner(t);
    const a = await upload(o.client, 'a.txt', 'a');
    await upload(o.client, 'b.txt', 'b');
    const res = await o.client.post('/api/files/rename', { id: a.id, name: 'c.txt' });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(['id', 'modified', 'name', 'type']);
    expect(body).toMatchObject({ id: a.id, name: 'c.txt', type: 'file', modified: a.modified });
    const clash = await o.client.post('/api/files/rename', { id: a.id, name: 'B.TXT' });
    expect(clash.status).toBe(409);
    expect(await json(clash)).toEqual({ message: 'An item with this name already exists' });
    expect((await o.client.post('/api/files/rename', { id: a.id, name: 'C.txt' })).status).toBe(200);
    expect(await validationFields(await o.client.post('/api/files/rename', { id: a.id, name: 'x/y' }))).toContain('name');
    expect(await validationFields(await o.client.post('/api/files/rename', { name: 'x' }))).toContain('id');
  });
});

describe('POST /api/files/move', () => {
  test('moves into a folder and back to the root; colliding names get (n)', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'dest');
    await upload(o.client, 'same.txt', 'inside', { parentId: dir.id });
    const a = await upload(o.client, 'same.txt', 'outside');
    const res = await o.client.post('/api/files/move', { ids: [a.id], parentId: dir.id });
    expect(res.status).toBe(200);
    expect((await json(res)).message).toEqual(expect.any(String));
    const inside = await listAll(o.client, `/api/files?parentId=${dir.id}&sortBy=name&order=asc`);
    expect(inside.map((i) => i.name)).toEqual(['same (1).txt', 'same.txt']);
    expect((await o.client.post('/api/files/move', { ids: [a.id] })).status).toBe(200);
    expect((await json(await o.client.get(`/api/files/${a.id}/info`))).parentId).toBeNull();
  });

  test('into itself or a descendant → 400; a missing or non-folder target → 404', async () => {
    const o = await seed.owner(t);
    const top = await folder(o.client, 'top');
    const mid = await folder(o.client, 'mid', top.id);
    const leaf = await folder(o.client, 'leaf', mid.id);
    const file = await upload(o.client, 'f.txt', 'f');
    for (const parentId of [top.id, mid.id, leaf.id]) {
      const res = await o.client.post('/api/files/move', { ids: [top.id], parentId });
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual({ message: 'A folder cannot be moved into itself or one of its descendants' });
    }
    expect((await o.client.post('/api/files/move', { ids: [top.id], parentId: file.id })).status).toBe(404);
    expect((await o.client.post('/api/files/move', { ids: [top.id], parentId: 'missing-folder-id-000' })).status).toBe(404);
    expect(await validationFields(await o.client.post('/api/files/move', { ids: [] }))).toContain('ids');
    expect(
      await validationFields(await o.client.post('/api/files/move', { ids: Array.from({ length: 501 }, (_, i) => `id${i}`) })),
    ).toContain('ids');
  });
});

describe('POST /api/files/star, GET /api/files/starred, GET /api/files/stats', () => {
  test('star and unstar; starred lists live starred items; stats count files, folders, stars and share links', async () => {
    const o = await seed.owner(t);
    const a = await upload(o.client, 'a.txt', 'a');
    const b = await upload(o.client, 'b.txt', 'b');
    const d = await folder(o.client, 'd');
    const res = await o.client.post('/api/files/star', { ids: [a.id, d.id], starred: true });
    expect(res.status).toBe(200);
    const starred = await listAll(o.client, '/api/files/starred?limit=1');
    expect(starred.map((i) => i.id)).toEqual([d.id, a.id]);
    expect(starred.every((i) => i.starred)).toBe(true);
    expect(await json(await o.client.get('/api/files/stats'))).toEqual({ totalFiles: 2, totalFolders: 1, sharedCount: 0, starredCount: 2 });
    await o.client.post('/api/files/star', { ids: [a.id], starred: false });
    expect((await listAll(o.client, '/api/files/starred')).map((i) => i.id)).toEqual([d.id]);
    expect(await validationFields(await o.client.post('/api/files/star', { ids: [b.id] }))).toContain('starred');
  });
});

describe('GET /api/files/search', () => {
  let o: seed.SeededLogin;
  beforeAll(async () => {
    o = await seed.owner(t);
    const base = Date.parse('2025-01-01T00:00:00Z');
    seedRows(
      t,
      o.id,
      null,
      8,
      (i) =>
        [
          { name: 'report', modifiedAt: base },
          { name: 'Report.pdf', modifiedAt: base + 5 },
          { name: 'report-2024.xlsx', modifiedAt: base + 1 },
          { name: 'annual report', modifiedAt: base + 9 },
          { name: 'old-report.txt', modifiedAt: base + 3 },
          { name: '100%_done.txt', modifiedAt: base },
          { name: '100 percent done', modifiedAt: base },
          { name: 'unrelated.bin', modifiedAt: base },
        ][i]!,
    );
  });

  test('ranks exact, then prefix, then substring, each newest first; case-insensitive; `q` or `query`', async () => {
    const names = (await json<any[]>(await o.client.get('/api/files/search?q=REPORT'))).map((i) => i.name);
    expect(names).toEqual(['report', 'Report.pdf', 'report-2024.xlsx', 'annual report', 'old-report.txt']);
    const viaQuery = (await json<any[]>(await o.client.get('/api/files/search?query=report&limit=2'))).map((i) => i.name);
    expect(viaQuery).toEqual(['report', 'Report.pdf']);
  });

  test('% and _ are literal characters; short queries work', async () => {
    expect((await json<any[]>(await o.client.get(`/api/files/search?q=${encodeURIComponent('%_')}`))).map((i) => i.name)).toEqual([
      '100%_done.txt',
    ]);
    expect((await json<any[]>(await o.client.get('/api/files/search?q=_'))).map((i) => i.name)).toEqual(['100%_done.txt']);
    expect((await json<any[]>(await o.client.get(`/api/files/search?q=${encodeURIComponent('0%')}`))).map((i) => i.name)).toEqual([
      '100%_done.txt',
    ]);
  });

  test('trash is excluded; empty or over-long queries → 400 Invalid search query', async () => {
    const gone = await upload(o.client, 'trashed-report.txt', 'x');
    await o.client.post('/api/files/delete', { ids: [gone.id] });
    expect((await json<any[]>(await o.client.get('/api/files/search?q=trashed'))).length).toBe(0);
    for (const q of ['', '%20%20', 'x'.repeat(201)]) {
      const res = await o.client.get(`/api/files/search?q=${q}`);
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual({ message: 'Invalid search query' });
    }
    expect((await o.client.get('/api/files/search')).status).toBe(400);
  });

  test('a NUL character in the query → 400 naming it (it reached the trigram index as a syntax error: 500)', async () => {
    for (const q of ['rep\0ort', 'report\0', 'a\0b']) {
      const res = await o.client.get(`/api/files/search?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual({ message: 'A search cannot contain a NUL character: remove it and search again' });
    }
  });

  test('searching does not change accessedAt', async () => {
    const before = (await json<any[]>(await o.client.get('/api/files/search?q=unrelated')))[0].accessedAt;
    clock.advance(2 * 3600_000);
    await o.client.get('/api/files/search?q=unrelated');
    t.server.ctx.services.access.flush();
    expect((await json<any[]>(await o.client.get('/api/files/search?q=unrelated')))[0].accessedAt).toBe(before);
  });
});

describe('GET /api/files/recent', () => {
  test('files by last read, newest first; folders and trash excluded; limit default 10, clamped to 1..50', async () => {
    const o = await seed.owner(t);
    const files = [];
    for (let i = 0; i < 12; i++) files.push(await upload(o.client, `r${i}.txt`, `content ${i}`));
    await folder(o.client, 'a folder');
    clock.advance(2 * 3600_000);
    await o.client.get(`/api/files/${files[3].id}/download`).then((r) => r.arrayBuffer());
    clock.advance(1000);
    await o.client.get(`/api/files/${files[5].id}/download`).then((r) => r.arrayBuffer());
    const recent = await json<any[]>(await o.client.get('/api/files/recent'));
    expect(recent.length).toBe(10);
    expect(recent.slice(0, 2).map((i) => i.id)).toEqual([files[5].id, files[3].id]);
    expect(recent.every((i) => i.type === 'file')).toBe(true);
    await o.client.post('/api/files/delete', { ids: [files[5].id] });
    expect((await json<any[]>(await o.client.get('/api/files/recent?limit=1'))).map((i) => i.id)).toEqual([files[3].id]);
    expect((await json<any[]>(await o.client.get('/api/files/recent?limit=500'))).length).toBe(11);
    expect((await json<any[]>(await o.client.get('/api/files/recent?limit=0'))).length).toBe(1);
  });
});

describe('GET /api/files/:id/info', () => {
  test('file: id, name, type, size, modified, accessedAt, shared, sharedAt, expiresAt, parentId; folder: recursive folderInfo', async () => {
    const o = await seed.owner(t);
    const top = await folder(o.client, 'top');
    const sub = await folder(o.client, 'sub', top.id);
    const f1 = await upload(o.client, 'one.txt', '12345', { parentId: top.id });
    await upload(o.client, 'two.txt', '1234567890', { parentId: sub.id });
    await folder(o.client, 'empty', sub.id);
    const fileInfo = await json(await o.client.get(`/api/files/${f1.id}/info`));
    expect(fileInfo).toMatchObject({
      id: f1.id,
      name: 'one.txt',
      type: 'file',
      size: 5,
      parentId: top.id,
      shared: false,
      sharedAt: null,
      expiresAt: null,
    });
    for (const k of ['modified', 'accessedAt']) expect(Number.isNaN(Date.parse(fileInfo[k]))).toBe(false);
    const folderInfo = await json(await o.client.get(`/api/files/${top.id}/info`));
    expect(folderInfo).toMatchObject({
      id: top.id,
      name: 'top',
      type: 'folder',
      size: null,
      parentId: null,
      folderInfo: { totalSize: 15, fileCount: 2, folderCount: 2 },
    });
    expect((await o.client.get('/api/files/missing-id-xxxxxxxxxx/info')).status).toBe(404);
  });
});

describe('shared status comes from share_links and share_items', () => {
  test('an item in a link shows shared, sharedAt and expiresAt (null when any link never expires, else the latest)', async () => {
    const o = await seed.owner(t);
    const a = await upload(o.client, 'shared.txt', 'x');
    const sqlite = t.server.ctx.db.$client;
    const now = clock.now();
    sqlite
      .query('INSERT INTO share_links (id, token, account_id, item_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run('l1', 'tok1', o.id, a.id, now, now + 1000);
    sqlite.query('INSERT INTO share_items (link_id, item_id, shared_at) VALUES (?, ?, ?)').run('l1', a.id, now);
    let info = await json(await o.client.get(`/api/files/${a.id}/info`));
    expect(info).toMatchObject({ shared: true, sharedAt: new Date(now).toISOString(), expiresAt: new Date(now + 1000).toISOString() });
    const dir = await folder(o.client, 'holder');
    sqlite
      .query('INSERT INTO share_links (id, token, account_id, item_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, NULL)')
      .run('l2', 'tok2', o.id, dir.id, now);
    sqlite.query('INSERT INTO share_items (link_id, item_id, shared_at) VALUES (?, ?, ?)').run('l2', a.id, now + 5);
    info = await json(await o.client.get(`/api/files/${a.id}/info`));
    expect(info).toMatchObject({ shared: true, sharedAt: new Date(now).toISOString(), expiresAt: null });
    expect((await json(await o.client.get('/api/files/stats'))).sharedCount).toBe(2);
    const listed = (await json<any[]>(await o.client.get('/api/files'))).find((i) => i.id === a.id);
    expect(listed.shared).toBe(true);
  });
});

/** Every route of docs/api.md › Permissions that this issue builds, with the permission it needs. */
function permissionRoutes(ids: { file: string; folder: string; trashed: string }) {
  const form = () => {
    const f = new FormData();
    f.append('file', new File(['refused'], 'refused.txt'));
    return f;
  };
  const bulk = () => {
    const f = new FormData();
    f.append('files', new File(['refused'], 'refused.txt'));
    return f;
  };
  return [
    ['files.download', 'Download', 'GET', `/api/files/${ids.file}/download`, undefined],
    ['files.download', 'Download', 'POST', '/api/files/download/bulk', { ids: [ids.file] }],
    ['files.upload', 'Upload & create', 'POST', '/api/files/folder', { name: 'refused' }],
    ['files.upload', 'Upload & create', 'POST', '/api/files/upload', form],
    ['files.upload', 'Upload & create', 'POST', '/api/files/upload/bulk', bulk],
    ['files.upload', 'Upload & create', 'POST', '/api/files/upload/check', { fileSize: 1 }],
    ['files.upload', 'Upload & create', 'POST', '/api/files/copy', { ids: [ids.file] }],
    ['files.upload', 'Upload & create', 'POST', `/api/files/${ids.file}/derived`, form],
    ['files.edit', 'Modify', 'POST', '/api/files/move', { ids: [ids.file], parentId: ids.folder }],
    ['files.edit', 'Modify', 'POST', '/api/files/rename', { id: ids.file, name: 'refused' }],
    ['files.edit', 'Modify', 'POST', '/api/files/star', { ids: [ids.file], starred: true }],
    ['files.edit', 'Modify', 'POST', `/api/files/${ids.file}/replace`, form],
    ['files.delete', 'Move to trash', 'POST', '/api/files/delete', { ids: [ids.file] }],
    ['files.trash', 'Manage trash', 'POST', '/api/files/trash/restore', { ids: [ids.trashed] }],
    ['files.trash', 'Manage trash', 'POST', '/api/files/trash/delete', { ids: [ids.trashed] }],
    ['files.trash', 'Manage trash', 'POST', '/api/files/trash/empty', undefined],
  ] as const;
}

async function send(client: TestClient, method: string, path: string, body: unknown): Promise<Response> {
  if (typeof body === 'function') return client.request(path, { method, body: (body as () => FormData)() });
  return method === 'GET' ? client.get(path) : client.post(path, body);
}

describe('permissions (docs/api.md › Permissions)', () => {
  test('a sub-user without the permission → 403 naming its label, before any body byte is stored', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'keep.txt', 'keep');
    const dir = await folder(o.client, 'keep-dir');
    const trashed = await upload(o.client, 'trashed.txt', 't');
    await o.client.post('/api/files/delete', { ids: [trashed.id] });
    const sub = await seed.subUser(t, o, []);
    const rowsBefore = t.server.ctx.db.$client
      .query('SELECT id, name, parent_id, starred, deleted_at FROM items WHERE account_id = ? ORDER BY id')
      .all(o.id);
    const jobsBefore = t.server.ctx.db.$client.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM jobs').get()!.n;
    for (const [, label, method, path, body] of permissionRoutes({ file: file.id, folder: dir.id, trashed: trashed.id })) {
      const res = await send(sub.client, method, path, body);
      expect({ path, status: res.status }).toEqual({ path, status: 403 });
      expect(await json(res)).toEqual(errors.permission(label));
    }
    expect(
      t.server.ctx.db.$client
        .query('SELECT id, name, parent_id, starred, deleted_at FROM items WHERE account_id = ? ORDER BY id')
        .all(o.id),
    ).toEqual(rowsBefore);
    expect(t.server.ctx.db.$client.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM jobs').get()!.n).toBe(jobsBefore);
  });

  test('each permission unlocks its own routes only', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'k.txt', 'k');
    const dir = await folder(o.client, 'k-dir');
    const trashed = await upload(o.client, 't.txt', 't');
    await o.client.post('/api/files/delete', { ids: [trashed.id] });
    const routes = permissionRoutes({ file: file.id, folder: dir.id, trashed: trashed.id });
    for (const permission of ['files.download', 'files.edit'] as const) {
      const sub = await seed.subUser(t, o, [permission]);
      for (const [needed, , method, path, body] of routes) {
        if (needed === 'files.trash' || path.endsWith('/delete') || path.endsWith('/copy')) continue;
        const res = await send(sub.client, method, path, body);
        await res.arrayBuffer();
        if (needed === permission) expect({ path, status: res.status }).not.toEqual({ path, status: 403 });
        else expect({ path, status: res.status }).toEqual({ path, status: 403 });
      }
    }
  });

  test("sub-users act on the owner's tree and quota; listing, search and info need no permission", async () => {
    const o = await seed.owner(t);
    const uploader = await seed.subUser(t, o, ['files.upload']);
    const reader = await seed.subUser(t, o, []);
    const item = await upload(uploader.client, 'by-sub.txt', '12345');
    expect((await listAll(o.client, '/api/files')).map((i) => i.id)).toContain(item.id);
    expect((await listAll(reader.client, '/api/files')).map((i) => i.id)).toContain(item.id);
    expect((await json<any[]>(await reader.client.get('/api/files/search?q=by-sub'))).length).toBe(1);
    expect((await reader.client.get(`/api/files/${item.id}/info`)).status).toBe(200);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(5);
  });
});

describe("another account's items are 404 everywhere", () => {
  test('every operation taking an id', async () => {
    const victim = await seed.owner(t);
    const file = await upload(victim.client, 'secret.txt', 'secret');
    const dir = await folder(victim.client, 'secret-dir');
    const trashed = await upload(victim.client, 'gone.txt', 'gone');
    await victim.client.post('/api/files/delete', { ids: [trashed.id] });
    const attacker = await seed.owner(t);
    const own = await folder(attacker.client, 'mine');
    const form = () => {
      const f = new FormData();
      f.append('file', new File(['x'], 'x.txt'));
      return f;
    };
    const cases: Array<[string, string, unknown]> = [
      ['GET', `/api/files?parentId=${dir.id}`, undefined],
      ['GET', `/api/files/${file.id}/info`, undefined],
      ['GET', `/api/files/${file.id}/download`, undefined],
      ['GET', `/api/files/${dir.id}/download`, undefined],
      ['POST', '/api/files/download/bulk', { ids: [file.id] }],
      ['POST', '/api/files/folder', { name: 'x', parentId: dir.id }],
      ['POST', '/api/files/rename', { id: file.id, name: 'mine.txt' }],
      ['POST', '/api/files/move', { ids: [file.id], parentId: own.id }],
      ['POST', '/api/files/move', { ids: [own.id], parentId: dir.id }],
      ['POST', '/api/files/star', { ids: [file.id], starred: true }],
      ['POST', '/api/files/copy', { ids: [file.id] }],
      ['POST', '/api/files/copy', { ids: [own.id], parentId: dir.id }],
      ['POST', '/api/files/delete', { ids: [file.id] }],
      ['POST', '/api/files/trash/restore', { ids: [trashed.id] }],
      ['POST', '/api/files/trash/delete', { ids: [trashed.id] }],
      ['POST', `/api/files/${file.id}/replace`, form],
      ['POST', `/api/files/${file.id}/derived`, form],
    ];
    for (const [method, path, body] of cases) {
      const res = await send(attacker.client, method, path, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    const victimJob = await json(await victim.client.post('/api/files/copy', { ids: [file.id] }));
    const poll = await attacker.client.get(`/api/files/jobs/${victimJob.jobId}`);
    expect(poll.status).toBe(404);
    expect(await json(poll)).toEqual(errors.jobNotFound);
    expect((await victim.client.get(`/api/files/${file.id}/info`)).status).toBe(200);
    expect((await json(await victim.client.get(`/api/files/${file.id}/info`))).name).toBe('secret.txt');
  });
});

describe('hot queries stay indexed (EXPLAIN QUERY PLAN)', () => {
  const plansOf = (action: () => unknown) => itemsReadPlans(t.server.ctx.db.$client, action);

  const fullScan = (plan: string[]) => plan.some((d) => /^SCAN items\b/.test(d));

  test('folder pages (every sort, both directions, with a cursor), starred, trash, recent and search never scan items', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'plans');
    seedRows(t, o.id, dir.id, 300);
    const principal = {
      loginId: o.id,
      accountId: o.id,
      sessionId: '',
      ip: '127.0.0.1',
      email: '',
      name: '',
      isOwner: true,
      isAdmin: false,
      permissions: new Set<never>(),
    };
    const items = t.server.ctx.services.items;
    const checked: string[] = [];
    for (const sortBy of ['name', 'size', 'modified', 'accessedAt'] as const) {
      for (const order of ['asc', 'desc'] as const) {
        const first = items.list(principal, { parentId: dir.id, sortBy, order, limit: 50 });
        for (const parentId of [dir.id, undefined]) {
          const plans = plansOf(() =>
            items.list(principal, { parentId, sortBy, order, limit: 50, cursor: parentId ? first.nextCursor! : undefined }),
          );
          for (const p of plans) {
            expect({ sql: p.sql, plan: p.plan, full: fullScan(p.plan) }).toMatchObject({ full: false });
            if (/ORDER BY/.test(p.sql))
              expect({ sql: p.sql, plan: p.plan.filter((d) => d.includes('TEMP B-TREE')) }).toMatchObject({ plan: [] });
            checked.push(p.sql);
          }
        }
      }
    }
    for (const action of [
      () => t.server.ctx.services.trash.list(principal, { sortBy: 'deletedAt', order: 'desc', limit: 50 }),
      () => items.listStarred(principal, { sortBy: 'modified', order: 'desc', limit: 50 }),
      () => items.recent(principal, {}),
      () => items.search(principal, { q: 'item-12' }),
    ]) {
      for (const p of plansOf(action)) {
        expect({ sql: p.sql, plan: p.plan, full: fullScan(p.plan) }).toMatchObject({ full: false });
        checked.push(p.sql);
      }
    }
    expect(checked.some((s) => s.includes('items_search MATCH'))).toBe(true);
    expect(checked.some((s) => s.includes('deleted_root_id = id'))).toBe(true);
  });

  test('the thumbnail sweep reads its sources by type from an index, not every row in upload order', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'sweep-plan');
    seedRows(t, o.id, dir.id, 300);
    const repo = new ThumbnailsRepo(t.server.ctx.db.$client);
    const types = [...THUMBNAIL_TYPES, ...VIDEO_TYPES];
    const plans = [
      ...plansOf(() => repo.sourcesPage(types, { afterSeq: 0, limit: 16 })),
      ...plansOf(() => repo.sourcesPage(types, { afterSeq: 0, limit: 16, accountId: o.id, all: true })),
    ];
    expect(plans.length).toBe(2);
    // A walk of the primary key from seq 0 reads every row once per sweep: 1,100,000 rows made each upload 50x slower.
    const walksAll = (plan: string[]) => plan.some((d) => /^SCAN i\b|USING INTEGER PRIMARY KEY/.test(d));
    for (const p of plans) expect({ sql: p.sql, plan: p.plan, walksAll: walksAll(p.plan) }).toMatchObject({ walksAll: false });
  });
});
