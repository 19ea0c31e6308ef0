import { beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { parseJson, runCli } from '../../helpers/cli.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { listAll, storedKeys } from '../../helpers/files.ts';
import { jpegTakenAt, malformedJpeg } from '../../helpers/images.ts';
import { searchable } from '../../helpers/search-documents.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, rescan, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

// Changes made "by another program" are followed by the rescans asked here (inotify has watch.test.ts).
libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });
beforeAll(async () => {
  expect((await admin.client.put('/api/user/content-search-config', { enabled: true })).status).toBe(200);
});

const photos = (client: TestClient, whose = 'mine') => listAll(client, `/api/files/photos?whose=${whose}`);

async function searchContent(client: TestClient, q: string, shared = false): Promise<any[]> {
  const res = await client.get(`/api/files/search?q=${encodeURIComponent(q)}&content=true${shared ? '&includeShared=true' : ''}`);
  expect(res.status).toBe(200);
  return (await json(res)).filter((h: { match: string }) => h.match === 'content');
}

/** The library entry's content key: what its thumbnail row and text are of. */
const contentKey = (itemId: string) =>
  t.server.ctx.db.$client.query<{ k: string }, [string]>('SELECT content_key AS k FROM library_entries WHERE item_id = ?').get(itemId)!.k;

const thumbnailRow = (key: string) => t.server.ctx.repos.thumbnails.get(key);

/** A picture none can be made of, once the sweep tried and its one retry (an hour later, at a request) failed too. */
async function noneMadeOf(login: seed.SeededLogin, itemId: string): Promise<void> {
  const key = contentKey(itemId);
  await eventually(() => thumbnailRow(key)?.status === 'failed');
  t.server.ctx.db.$client.query('UPDATE thumbnails SET created_at = created_at - 3600000 WHERE storage_key = ?').run(key);
  expect((await login.client.get(`/api/files/${itemId}/thumbnail`)).status).toBe(404);
  expect(thumbnailRow(key)?.status).toBe('none');
}

/** A group whose one member is `member`; the library given to it reaches the member. */
async function groupWith(member: seed.SeededLogin) {
  const group = await json(await admin.client.post('/api/admin/groups', { name: `Family ${Date.now()} ${Math.random()}` }));
  expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: member.email })).status).toBe(201);
  return group as { id: string; name: string };
}

describe('thumbnails and Photos of library files', () => {
  test('a JPEG put in the folder by another program gets a thumbnail (sealed in the data directory, none in the folder) and is in Photos with its EXIF date', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'readme.txt', 'not a photo');
    const library = await addLibrary(admin, root, owner);
    write(root, 'trips/beach.jpg', await jpegTakenAt('2016:08:21 15:04:05'));
    await rescan(admin, library.id);
    const trips = await childNamed(owner, library.folderId, 'trips');
    const beach = await childNamed(owner, trips.id, 'beach.jpg');
    expect(beach.mimeType).toBe('image/jpeg');
    expect(beach.hasThumbnail).toBe(true);
    expect((await childNamed(owner, library.folderId, 'readme.txt')).hasThumbnail).toBe(false);

    const photo = await eventually(async () => {
      const found = (await photos(owner.client)).find((p) => p.id === beach.id);
      return found?.width === 300 ? found : false;
    });
    expect(photo.takenAt).toBe(new Date(2016, 7, 21, 15, 4, 5).toISOString());
    expect(photo.height).toBe(200);

    const small = await owner.client.get(`/api/files/${beach.id}/thumbnail`);
    expect(small.status).toBe(200);
    expect(small.headers.get('content-type')).toStartWith('image/');
    const key = contentKey(beach.id);
    expect(thumbnailRow(key)?.status).toBe('ready');
    // Cached in Coffer's store, sealed as every thumbnail is: the folder holds only what the other program wrote.
    const keys = await storedKeys(t);
    expect(keys).toContain(`${key}_thumb_small`);
    const sealed = fs.readFileSync(findStored(`${key}_thumb_small`));
    expect(Buffer.compare(sealed.subarray(0, 16), Buffer.from(await small.clone().arrayBuffer()).subarray(0, 16))).not.toBe(0);
    expect(fs.readdirSync(root, { recursive: true }).map(String).sort()).toEqual(['readme.txt', 'trips', path.join('trips', 'beach.jpg')]);

    const stranger = await seed.owner(t);
    expect((await stranger.client.get(`/api/files/${beach.id}/thumbnail`)).status).toBe(404);
    expect((await photos(stranger.client, 'all')).map((p) => p.id)).not.toContain(beach.id);
  });

  test('changed on the host: the thumbnail and date are made again, the old thumbnail removed; deleted: its thumbnail goes', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'cat.jpg', await jpegTakenAt('2012:01:02 03:04:05'));
    const library = await addLibrary(admin, root, owner);
    const cat = await childNamed(owner, library.folderId, 'cat.jpg');
    const taken = async () => (await photos(owner.client)).find((p) => p.id === cat.id)?.takenAt;
    await eventually(async () => (await taken()) === new Date(2012, 0, 2, 3, 4, 5).toISOString());
    const before = contentKey(cat.id);
    expect(thumbnailRow(before)?.status).toBe('ready');

    write(root, 'cat.jpg', await jpegTakenAt('2020:05:06 07:08:09', 320, 240));
    await rescan(admin, library.id);
    expect(contentKey(cat.id)).not.toBe(before);
    await eventually(async () => (await taken()) === new Date(2020, 4, 6, 7, 8, 9).toISOString());
    await eventually(() => thumbnailRow(before) === null);
    expect((await storedKeys(t)).filter((k) => k.startsWith(before))).toEqual([]);

    const after = contentKey(cat.id);
    await eventually(() => thumbnailRow(after)?.status === 'ready');
    fs.rmSync(path.join(root, 'cat.jpg'));
    await rescan(admin, library.id);
    expect((await owner.client.get(`/api/files/${cat.id}/thumbnail`)).status).toBe(404);
    await eventually(() => thumbnailRow(after) === null);
    expect((await storedKeys(t)).filter((k) => k.startsWith(after))).toEqual([]);
  });

  test('a group member sees the library photos in Photos (shared, all) and their thumbnails; an album holds one', async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const group = await groupWith(member);
    const root = hostDir();
    write(root, 'family/picnic.jpg', await jpegTakenAt('2018:06:01 12:00:00'));
    const library = await addLibrary(admin, root, owner, { readOnly: true, group: group.name });
    const family = await childNamed(owner, library.folderId, 'family');
    const picnic = await childNamed(owner, family.id, 'picnic.jpg');
    for (const whose of ['shared', 'all']) {
      const seen = await eventually(async () => (await photos(member.client, whose)).find((p) => p.id === picnic.id) ?? false);
      expect(seen.owner.id).toBe(owner.id);
    }
    await eventually(async () => (await photos(member.client, 'shared')).find((p) => p.id === picnic.id)?.width === 300);
    expect((await photos(member.client, 'mine')).map((p) => p.id)).not.toContain(picnic.id);
    expect((await member.client.get(`/api/files/${picnic.id}/thumbnail?size=large`)).status).toBe(200);

    const blind = await seed.subUser(t, owner, []);
    expect((await blind.client.get(`/api/files/${picnic.id}/thumbnail`)).status).toBe(403);

    write(root, 'family/torn.jpg', malformedJpeg());
    await rescan(admin, library.id);
    const torn = await childNamed(owner, family.id, 'torn.jpg');
    await noneMadeOf(owner, torn.id);
    const album = await json(await owner.client.post('/api/albums', { name: 'Picnic' }));
    const added = await owner.client.post(`/api/albums/${album.album.id}/items`, { ids: [picnic.id, torn.id] });
    expect(added.status).toBe(200);
    expect((await json(added)).added).toBe(2);
    // The album's public page shows the picture there is, and only the name of the one none could be made of.
    const link = await json(await owner.client.post(`/api/albums/${album.album.id}/link`, { expiry: 'never' }));
    const page = await (await fetch(`${t.url}/s/album/${link.link.token}`, { headers: { accept: 'text/html' } })).text();
    expect(page).toContain(`/thumbnail/${picnic.id}`);
    expect(page).not.toContain(`/thumbnail/${torn.id}"`);
    expect(page).not.toContain(`/thumbnail/${torn.id}?`);
    expect(page).toContain('torn.jpg');
    expect((await fetch(`${t.url}/s/album/${link.link.token}/thumbnail/${picnic.id}`)).status).toBe(200);
    const { items } = await json(await owner.client.get(`/api/albums/${album.album.id}`));
    expect(
      items
        .filter((i: { id: string }) => i.id === picnic.id)
        .map((i: { id: string; takenAt: string; width: number }) => [i.id, i.takenAt, i.width]),
    ).toEqual([[picnic.id, new Date(2018, 5, 1, 12).toISOString(), 300]]);
  });

  test('a share page of a library folder shows the thumbnails there are: not of a text, not of a picture none could be made of', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'garden/rose.jpg', await jpegTakenAt('2021:04:04 10:00:00'));
    write(root, 'garden/broken.jpg', malformedJpeg());
    write(root, 'garden/notes.txt', 'water on Sundays');
    const library = await addLibrary(admin, root, owner);
    const garden = await childNamed(owner, library.folderId, 'garden');
    const rose = await childNamed(owner, garden.id, 'rose.jpg');
    const broken = await childNamed(owner, garden.id, 'broken.jpg');
    await noneMadeOf(owner, broken.id);
    expect((await childNamed(owner, garden.id, 'broken.jpg')).hasThumbnail).toBe(false);
    expect((await childNamed(owner, garden.id, 'rose.jpg')).hasThumbnail).toBe(true);

    const shared = await json(await owner.client.post('/api/files/share', { ids: [garden.id], shared: true }));
    const token = /\/s\/([A-Za-z0-9_-]+)/.exec(shared.links[garden.id])![1]!;
    const page = await json(await fetch(`${t.url}/s/${token}`, { headers: { accept: 'application/json' } }));
    const flags = Object.fromEntries(page.items.map((i: { name: string; hasThumbnail?: boolean }) => [i.name, i.hasThumbnail]));
    expect(flags).toEqual({ 'broken.jpg': false, 'notes.txt': false, 'rose.jpg': true });
    const html = await (await fetch(`${t.url}/s/${token}`, { headers: { accept: 'text/html' } })).text();
    expect(html).toContain(`/thumbnail/${rose.id}`);
    expect(html).not.toContain(`/thumbnail/${broken.id}`);
    const thumb = await fetch(`${t.url}/s/${token}/thumbnail/${rose.id}`);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toStartWith('image/');
  });
});

describe("the library thumbnails' key", () => {
  test('coffer keys rotate re-wraps it: the thumbnails made before are still served as they were', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'owl.jpg', await jpegTakenAt('2010:10:10 10:10:10'));
    const library = await addLibrary(admin, root, owner);
    const owl = await childNamed(owner, library.folderId, 'owl.jpg');
    const first = await owner.client.get(`/api/files/${owl.id}/thumbnail`);
    expect(first.status).toBe(200);
    const bytes = Buffer.from(await first.arrayBuffer());
    const made = thumbnailRow(contentKey(owl.id))!.createdAt;
    const keyOf = () =>
      t.server.ctx.db.$client.query<{ k: string }, [string]>('SELECT key_id AS k FROM libraries WHERE id = ?').get(library.id)!.k;
    const before = keyOf();

    const rotated = await runCli(['keys', 'rotate', '--json', '--data-dir', t.dataDir]);
    expect(rotated.code).toBe(0);
    const result = parseJson(rotated);
    expect(result).toMatchObject({ completed: true, remaining: 0 });
    expect(keyOf()).toBe(result.keyId);
    expect(keyOf()).not.toBe(before);
    const again = await owner.client.get(`/api/files/${owl.id}/thumbnail`);
    expect(again.status).toBe(200);
    expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).toBe(true);
    expect(thumbnailRow(contentKey(owl.id))!.createdAt).toBe(made);
  });
});

describe('content search in library files', () => {
  test('words inside a text and a PDF are found; a change on the host changes the results; a delete drops them', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'letters/boiler.txt', 'the boiler was serviced by quillfeather in march');
    write(root, 'letters/invoice.pdf', searchable.pdf('invoice for the marmalade jars'));
    const library = await addLibrary(admin, root, owner);
    const letters = await childNamed(owner, library.folderId, 'letters');
    const boiler = await childNamed(owner, letters.id, 'boiler.txt');
    const invoice = await childNamed(owner, letters.id, 'invoice.pdf');
    await eventually(async () => (await searchContent(owner.client, 'quillfeather')).length === 1);
    expect((await searchContent(owner.client, 'quillfeather'))[0].id).toBe(boiler.id);
    expect((await searchContent(owner.client, 'quillfeather'))[0].snippet).toContain('<mark>quillfeather</mark>');
    await eventually(async () => (await searchContent(owner.client, 'marmalade')).map((h) => h.id).join() === invoice.id);

    write(root, 'letters/boiler.txt', 'the boiler was replaced by brightwater in april, a larger one');
    await rescan(admin, library.id);
    await eventually(async () => (await searchContent(owner.client, 'brightwater')).map((h) => h.id).join() === boiler.id);
    expect(await searchContent(owner.client, 'quillfeather')).toEqual([]);

    fs.rmSync(path.join(root, 'letters/boiler.txt'));
    await rescan(admin, library.id);
    expect(await searchContent(owner.client, 'brightwater')).toEqual([]);
    expect((await searchContent(owner.client, 'marmalade')).map((h) => h.id)).toEqual([invoice.id]);
  });

  test('who finds the words: the owner and the group members; a sub-user without Download sees the match without its words; others nothing', async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const stranger = await seed.owner(t);
    const group = await groupWith(member);
    const root = hostDir();
    write(root, 'minutes.txt', 'the committee agreed on zanzibarine paint');
    const library = await addLibrary(admin, root, owner, { group: group.name });
    const minutes = await childNamed(owner, library.folderId, 'minutes.txt');
    await eventually(async () => (await searchContent(owner.client, 'zanzibarine')).length === 1);
    const memberHits = await searchContent(member.client, 'zanzibarine', true);
    expect(memberHits.map((h) => h.id)).toEqual([minutes.id]);
    expect(memberHits[0].snippet).toContain('<mark>zanzibarine</mark>');
    expect(await searchContent(member.client, 'zanzibarine')).toEqual([]);
    expect(await searchContent(stranger.client, 'zanzibarine', true)).toEqual([]);

    const blind = await seed.subUser(t, owner, []);
    const blindHits = await searchContent(blind.client, 'zanzibarine');
    expect(blindHits.map((h) => [h.id, h.snippet])).toEqual([[minutes.id, null]]);
    expect((await blind.client.get(`/api/files/${minutes.id}/download`)).status).toBe(403);
    expect((await stranger.client.get(`/api/files/${minutes.id}/download`)).status).toBe(404);
  });

  test('nothing is extracted again when nothing changed: a rescan leaves the text as it was', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'recipe.txt', 'a pinch of grumbleweed');
    const library = await addLibrary(admin, root, owner);
    const recipe = await childNamed(owner, library.folderId, 'recipe.txt');
    await eventually(async () => (await searchContent(owner.client, 'grumbleweed')).length === 1);
    const indexedAt = () =>
      t.server.ctx.db.$client
        .query<{ at: number }, [string]>('SELECT d.indexed_at AS at FROM content_docs d JOIN items i ON i.seq = d.seq WHERE i.id = ?')
        .get(recipe.id)!.at;
    const first = indexedAt();
    const key = contentKey(recipe.id);
    await rescan(admin, library.id);
    expect(contentKey(recipe.id)).toBe(key);
    expect(t.server.ctx.repos.content.progress().pending).toBe(0);
    expect(indexedAt()).toBe(first);
    expect((await children(owner, library.folderId)).map((i) => i.name)).toEqual(['recipe.txt']);
  });
});

/** The file of a stored object under the data directory's blobs. */
function findStored(key: string): string {
  const walk = (dir: string): string | null => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) {
        const found = walk(full);
        if (found) return found;
      } else if (e.name === key) return full;
    }
    return null;
  };
  const found = walk(path.join(t.dataDir, 'blobs'));
  if (!found) throw new Error(`no stored object ${key}`);
  return found;
}
