import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json, type TestClient } from '../../helpers/client.ts';
import { folder, upload } from '../../helpers/files.ts';
import { newGroup } from '../../helpers/groups.ts';
import { davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let admin: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  admin = await seed.admin(t);
});
afterAll(() => t.stop());

async function activity(client: TestClient, query = ''): Promise<{ items: any[]; nextCursor: string | null }> {
  const res = await client.get(`/api/activity${query}`);
  expect(res.status).toBe(200);
  return json(res);
}

const summary = (lines: any[]) => lines.map((l) => `${l.actor.name} ${l.kind} ${l.item.path ?? l.item.name}`);

describe('GET /api/activity', () => {
  test('newest first: who (display name), what, which item with its path, the folder, when', async () => {
    const o = await seed.owner(t);
    const holidays = await folder(o.client, 'Holidays');
    const year = await folder(o.client, '2026', holidays.id);
    const a = await upload(o.client, 'a.jpg', 'a', { parentId: year.id });
    await upload(o.client, 'b.jpg', 'b', { parentId: year.id });
    await o.client.post('/api/files/rename', { id: a.id, name: 'beach.jpg' });
    await o.client.post('/api/files/delete', { ids: [a.id] });

    const { items, nextCursor } = await activity(o.client);
    expect(nextCursor).toBeNull();
    expect(summary(items)).toEqual([
      'Owner item.trashed beach.jpg',
      'Owner item.renamed beach.jpg',
      'Owner item.uploaded Holidays/2026/b.jpg',
      'Owner item.uploaded a.jpg',
      'Owner item.created Holidays/2026',
      'Owner item.created Holidays',
    ]);
    // A trashed item has no path (it is not where it was); its folder still has one.
    expect(items[0]).toMatchObject({
      kind: 'item.trashed',
      actor: { kind: 'login', id: o.id, name: 'Owner' },
      item: { id: a.id, type: 'file', name: 'beach.jpg', path: null },
      folder: { id: year.id, path: 'Holidays/2026' },
    });
    expect(items[1]).toMatchObject({ before: { name: 'a.jpg', folderId: year.id }, after: { name: 'beach.jpg', folderId: year.id } });
    expect(items[2]).toMatchObject({ details: { size: 1 }, folder: { path: 'Holidays/2026' } });
    expect(items[5]).toMatchObject({ folder: { id: null, path: '' } });
    expect(Date.parse(items[0].at)).toBeGreaterThanOrEqual(Date.parse(items[5].at));
    expect(items.map((l) => l.seq)).toEqual([...items.map((l) => l.seq)].sort((x, y) => y - x));
  });

  test('keyset pages by seq; filters by item, folder, kind and person; bad input is a 400', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.upload']);
    const dir = await folder(o.client, 'Docs');
    const mine = await upload(o.client, 'mine.txt', 'm', { parentId: dir.id });
    await upload(sub.client, 'theirs.txt', 't', { parentId: dir.id });
    await upload(o.client, 'outside.txt', 'o');
    await o.client.post('/api/files/rename', { id: mine.id, name: 'mine2.txt' });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: any[]; nextCursor: string | null } = await activity(o.client, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((l) => l.item.name));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(['mine2.txt', 'outside.txt', 'theirs.txt', 'mine.txt', 'Docs']);

    expect(summary((await activity(o.client, `?itemId=${mine.id}`)).items)).toEqual([
      'Owner item.renamed Docs/mine2.txt',
      'Owner item.uploaded Docs/mine2.txt',
    ]);
    // The name the item had then; its path where it is now.
    expect((await activity(o.client, `?folderId=${dir.id}`)).items.map((l) => l.item.name)).toEqual([
      'mine2.txt',
      'theirs.txt',
      'mine.txt',
      'Docs',
    ]);
    expect(summary((await activity(o.client, `?actor=${sub.id}`)).items)).toEqual(['Sub item.uploaded Docs/theirs.txt']);
    expect((await activity(o.client, '?kind=item.renamed')).items).toHaveLength(1);

    for (const [query, status, message] of [
      ['?kind=item.exploded', 400, /Unknown kind/],
      ['?cursor=not-a-cursor!', 400, /Invalid cursor/],
      ['?limit=0', 422, /limit must be at least 1/],
      ['?limit=201', 422, /limit must be at most 200/],
    ] as const) {
      const res = await o.client.get(`/api/activity${query}`);
      expect(res.status).toBe(status);
      expect(await res.text()).toMatch(message);
    }
    expect((await t.client().get('/api/activity')).status).toBe(401);
  });

  test("one item's history: every change to its row, through new content, rename, move, trash, restore and a version restored; none of another item's; once purged a 404", async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'Work');
    const file = await upload(o.client, 'draft.txt', 'one', { parentId: dir.id });
    const other = await upload(o.client, 'other.txt', 'x', { parentId: dir.id });
    const form = new FormData();
    form.append('file', new File(['two'], 'draft.txt'));
    expect((await o.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    await o.client.post('/api/files/rename', { id: other.id, name: 'other2.txt' });
    await o.client.post('/api/files/rename', { id: file.id, name: 'final.txt' });
    await o.client.post('/api/files/move', { ids: [file.id], parentId: null });
    await o.client.post('/api/files/delete', { ids: [file.id] });
    await o.client.post('/api/files/trash/restore', { ids: [file.id] });
    const [version] = (await json(await o.client.get(`/api/files/${file.id}/versions`))).versions;
    expect((await o.client.post(`/api/files/${file.id}/versions/${version.id}/restore`)).status).toBe(200);

    const history = [
      'Owner item.version_restored final.txt',
      'Owner item.restored final.txt',
      'Owner item.trashed final.txt',
      'Owner item.moved final.txt',
      'Owner item.renamed final.txt',
      'Owner item.replaced final.txt',
      'Owner item.uploaded final.txt',
    ];
    expect(summary((await activity(o.client, `?itemId=${file.id}`)).items)).toEqual(history);
    const paged: any[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: any[]; nextCursor: string | null } = await activity(
        o.client,
        `?itemId=${file.id}&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      paged.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    expect(summary(paged)).toEqual(history);
    expect(summary((await activity(o.client, `?itemId=${other.id}`)).items)).toEqual([
      'Owner item.renamed Work/other2.txt',
      'Owner item.uploaded Work/other2.txt',
    ]);

    await o.client.post('/api/files/delete', { ids: [file.id] });
    expect((await o.client.post('/api/files/trash/delete', { ids: [file.id] })).status).toBeLessThan(300);
    await t.server.worker.drain();
    expect((await o.client.get(`/api/activity?itemId=${file.id}`)).status).toBe(404);
    expect(summary((await activity(o.client, '?limit=2')).items)).toEqual(['Owner item.purged final.txt', 'Owner item.trashed final.txt']);
  });

  test('visibility: another account nothing (404 for its ids), a member only inside the share and nothing once removed, a sub-user without permissions its account', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const stranger = await seed.owner(t);
    const bare = await seed.subUser(t, o, []);
    const shared = await folder(o.client, 'Shared');
    const nested = await folder(o.client, 'Inner', shared.id);
    await upload(o.client, 'private.txt', 'p');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const inside = await upload(o.client, 'inside.txt', 'i', { parentId: nested.id });
    await upload(member.client, 'by-member.txt', 'm', { parentId: shared.id });

    expect((await activity(stranger.client)).items).toEqual([]);
    for (const id of [shared.id, inside.id]) {
      expect((await stranger.client.get(`/api/activity?itemId=${id}`)).status).toBe(404);
      expect((await stranger.client.get(`/api/activity?folderId=${id}`)).status).toBe(404);
    }

    // The member's paths start at the shared folder; nothing of the owner's own tree shows.
    expect(summary((await activity(member.client)).items)).toEqual([
      'Owner item.uploaded Shared/by-member.txt',
      'Owner item.uploaded Shared/Inner/inside.txt',
      'Owner member.added Shared',
      'Owner item.created Shared/Inner',
      'Owner item.created Shared',
    ]);
    expect((await activity(member.client)).items[0].actor).toMatchObject({ id: member.id });
    expect((await activity(member.client, `?itemId=${inside.id}`)).items).toHaveLength(1);

    expect(summary((await activity(bare.client)).items)).toContain('Owner item.uploaded private.txt');
    expect((await activity(bare.client)).items).toHaveLength(6);

    expect((await o.client.send('DELETE', `/api/files/${shared.id}/members/${member.id}`)).status).toBe(200);
    await upload(o.client, 'after.txt', 'a', { parentId: shared.id });
    expect((await activity(member.client)).items).toEqual([]);
    expect((await member.client.get(`/api/activity?itemId=${inside.id}`)).status).toBe(404);
  });

  test('an item moved into a shared folder: members see it arrive and what follows, not the names and folders it had in the owner\u2019s own tree', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const group = await newGroup(admin, 'Activity', member);
    const own = await folder(o.client, 'Private HR');
    const shared = await folder(o.client, 'Shared');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { groupId: group, role: 'viewer' })).status).toBe(201);
    const file = await upload(o.client, 'layoffs-2027.txt', 'x', { parentId: own.id });
    expect((await o.client.post('/api/files/rename', { id: file.id, name: 'plan.txt' })).status).toBe(200);
    expect((await o.client.post('/api/files/move', { ids: [file.id], parentId: shared.id })).status).toBe(200);
    expect((await o.client.post('/api/files/rename', { id: file.id, name: 'plan v2.txt' })).status).toBe(200);

    const seen = [...(await activity(member.client, `?itemId=${file.id}`)).items, ...(await activity(member.client)).items];
    expect(JSON.stringify(seen)).not.toContain('layoffs');
    expect(summary((await activity(member.client, `?itemId=${file.id}`)).items)).toEqual([
      'Owner item.renamed Shared/plan v2.txt',
      'Owner item.moved Shared/plan v2.txt',
    ]);
    // The owner keeps the whole history.
    expect((await activity(o.client, `?itemId=${file.id}`)).items.map((l: any) => l.kind)).toEqual([
      'item.renamed',
      'item.moved',
      'item.renamed',
      'item.uploaded',
    ]);
  });

  test('a folder moved into a shared folder: members see it arrive and what follows, not what was done inside it in the owner\u2019s own tree', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Shared');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    const own = await folder(o.client, 'Private');
    const kept = await upload(o.client, 'layoffs.txt', 'x', { parentId: own.id });
    expect((await o.client.post('/api/files/rename', { id: kept.id, name: 'plan.txt' })).status).toBe(200);
    const gone = await upload(o.client, 'salaries.txt', 'x', { parentId: own.id });
    expect((await o.client.post('/api/files/delete', { ids: [gone.id] })).status).toBe(200);
    const inner = await folder(o.client, 'Inner', shared.id);
    await upload(o.client, 'inner.txt', 'x', { parentId: inner.id });
    expect((await o.client.post('/api/files/move', { ids: [own.id], parentId: shared.id })).status).toBe(200);
    // Moved within the share: its history there stays.
    expect((await o.client.post('/api/files/move', { ids: [inner.id], parentId: own.id })).status).toBe(200);
    await upload(o.client, 'after.txt', 'x', { parentId: own.id });

    for (const query of ['', `?folderId=${own.id}`, `?itemId=${kept.id}`]) {
      const seen = JSON.stringify((await activity(member.client, query)).items);
      for (const secret of ['layoffs', 'salaries', gone.id])
        expect({ query, leaked: seen.includes(secret) }).toEqual({ query, leaked: false });
    }
    expect(summary((await activity(member.client, `?folderId=${own.id}`)).items)).toEqual([
      'Owner item.uploaded Shared/Private/after.txt',
      'Owner item.moved Shared/Private/Inner',
      'Owner item.moved Shared/Private',
      'Owner item.uploaded Shared/Private/Inner/inner.txt',
      'Owner item.created Shared/Private/Inner',
    ]);
    expect((await activity(o.client, `?folderId=${own.id}`)).items).toHaveLength(10);
  });

  test('a move into or out of a shared folder that also renames: members see the side inside the share only, not the name or folder outside it', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Shared');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    const own = await folder(o.client, 'Private HR');
    const file = await upload(o.client, 'layoffs-2027.txt', 'x', { parentId: own.id });
    const dav = await davLogin(t, o);
    const move = (from: string, to: string) => dav.request('MOVE', from, { headers: { destination: `${t.url}/dav/${to}` } });
    expect((await move('Private%20HR/layoffs-2027.txt', 'Shared/plan.txt')).status).toBe(201);
    expect((await move('Shared/plan.txt', 'Private%20HR/fired.txt')).status).toBe(201);

    const { items } = await activity(member.client);
    const seen = JSON.stringify(items);
    for (const secret of ['layoffs', 'fired', own.id]) expect({ secret, leaked: seen.includes(secret) }).toEqual({ secret, leaked: false });
    expect(items.slice(0, 2)).toMatchObject([
      {
        kind: 'item.moved',
        item: { id: file.id, name: 'plan.txt', path: null },
        before: { name: 'plan.txt', folderId: shared.id },
        after: null,
      },
      { kind: 'item.moved', item: { id: file.id, name: 'plan.txt' }, before: null, after: { name: 'plan.txt', folderId: shared.id } },
    ]);
    expect(items[0].folder).toEqual({ id: shared.id, path: 'Shared' });
    // The owner sees both sides.
    expect((await activity(o.client)).items[0]).toMatchObject({
      before: { name: 'plan.txt', folderId: shared.id },
      after: { name: 'fired.txt', folderId: own.id },
    });
  });

  test('the person filter: everyone in the whole log, not only its latest page, through the same visibility; an indexed filter finds an old change at once', async () => {
    const o = await seed.owner(t, undefined, 'Olga');
    const sub = await seed.subUser(t, o, ['files.upload']);
    const member = await seed.owner(t, undefined, 'Mia');
    const stranger = await seed.owner(t);
    const shared = await folder(o.client, 'Team');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    await upload(sub.client, 'private-by-sub.txt', 's');
    await upload(member.client, 'by-mia.txt', 'm', { parentId: shared.id });
    // More than a page of the owner's own changes after them.
    for (let i = 0; i < 250; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => folder(o.client, `f${i + j}`)));

    const people = async (client: TestClient) => {
      const res = await client.get('/api/activity/people');
      expect(res.status).toBe(200);
      return ((await json(res)) as { people: Array<{ id: string; kind: string; name: string; lastAt: string }> }).people;
    };
    const own = await people(o.client);
    expect(own.map((p) => p.id)).toEqual([o.id, member.id, sub.id]);
    expect(own[0]).toMatchObject({ kind: 'login', name: 'Olga' });
    expect(Date.parse(own[2]!.lastAt)).toBeLessThanOrEqual(Date.parse(own[0]!.lastAt));
    expect((await people(sub.client)).map((p) => p.id)).toEqual([o.id, member.id, sub.id]);
    // The member: the people of what is shared with it (the owner made the folder), not the sub-user's private upload.
    expect((await people(member.client)).map((p) => p.id)).toEqual([member.id, o.id]);
    expect(await people(stranger.client)).toEqual([]);

    const page = await activity(o.client, `?actor=${sub.id}&limit=1`);
    expect(summary(page.items)).toEqual(['Sub item.uploaded private-by-sub.txt']);
    expect((await activity(member.client, `?actor=${sub.id}`)).items).toEqual([]);

    expect((await o.client.send('DELETE', `/api/files/${shared.id}/members/${member.id}`)).status).toBe(200);
    expect(await people(member.client)).toEqual([]);
    const bad = await o.client.get('/api/activity/people?limit=500');
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/limit must be at most 200/);
    expect((await t.client().get('/api/activity/people')).status).toBe(401);
  });
});
