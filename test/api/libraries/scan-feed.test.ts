import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import type { ChangeRow } from '../../../src/db/repos/changes.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { SseReader } from '../../helpers/files.ts';
import { png } from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, rescan, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

// Only an asked-for rescan finds changes: another program's steps land in one scan, as after a restart.
libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });

const rowsOf = (accountId: string, afterSeq = 0): ChangeRow[] => t.server.ctx.repos.changes.pageOfAccounts([accountId], afterSeq, 10_000);

async function open(client: TestClient, lastEventId?: string) {
  const res = await client.get('/api/files/events', lastEventId === undefined ? undefined : { 'Last-Event-ID': lastEventId });
  expect(res.status).toBe(200);
  const reader = new SseReader(res);
  const connected = await reader.nextEvent();
  expect(connected.data).toEqual({ type: 'connected' });
  return { reader, id: connected.id };
}

describe('a library scan in the change feed', () => {
  test("a file renamed by another program onto a folder's name (and a folder onto a file's) purges the one it replaced once", async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'spot/inside.txt', 'under the folder');
    write(root, 'loose.txt', 'a file');
    write(root, 'slot', 'a file where a folder will be');
    write(root, 'boxed/deep.txt', 'in a folder');
    const library = await addLibrary(admin, root, owner);
    const spot = await childNamed(owner, library.folderId, 'spot');
    const loose = await childNamed(owner, library.folderId, 'loose.txt');
    const slot = await childNamed(owner, library.folderId, 'slot');
    const boxed = await childNamed(owner, library.folderId, 'boxed');
    const mark = rowsOf(owner.id).at(-1)!.seq;

    fs.rmSync(path.join(root, 'spot'), { recursive: true });
    fs.renameSync(path.join(root, 'loose.txt'), path.join(root, 'spot'));
    fs.rmSync(path.join(root, 'slot'));
    fs.renameSync(path.join(root, 'boxed'), path.join(root, 'slot'));
    await rescan(admin, library.id);

    const rows = rowsOf(owner.id, mark);
    const purged = rows.filter((r) => r.kind === 'item.purged').map((r) => r.itemId);
    expect(purged.sort()).toEqual([spot.id, slot.id].sort());
    expect(rows.filter((r) => r.kind === 'item.renamed').map((r) => [r.itemId, r.nameAfter])).toEqual(
      expect.arrayContaining([
        [loose.id, 'spot'],
        [boxed.id, 'slot'],
      ]),
    );
    expect(rows).toHaveLength(4);
    const now = await children(owner, library.folderId);
    expect(now.map((i: { id: string; name: string; type: string }) => [i.name, i.id, i.type])).toEqual([
      ['slot', boxed.id, 'folder'],
      ['spot', loose.id, 'file'],
    ]);
  });

  test('an item another program moves out of a folder joined to its link (link-parent-share) leaves the link, as an API move does: a link.removed, heard as an unshare', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'Album/photo.txt', 'a photo');
    const library = await addLibrary(admin, root, owner);
    const album = await childNamed(owner, library.folderId, 'Album');
    const photo = await childNamed(owner, album.id, 'photo.txt');
    const shared = await json(await owner.client.post('/api/files/share', { ids: [album.id], shared: true }));
    const token = /\/s\/([\w-]+)/.exec(shared.links[album.id])![1]!;
    const joined = await json(await owner.client.post('/api/files/link-parent-share', { ids: [photo.id] }));
    expect(joined.links[photo.id]).toBe(`${shared.links[album.id]}/file/${photo.id}`);
    expect((await json(await owner.client.get(`/api/files/${photo.id}/info`))).shared).toBe(true);

    const mark = rowsOf(owner.id).at(-1)!.seq;
    const { reader: live, id: from } = await open(owner.client);
    fs.renameSync(path.join(root, 'Album', 'photo.txt'), path.join(root, 'photo.txt'));
    await rescan(admin, library.id);
    const heard = (await live.untilQuiet()).map((e) => ({ type: e.type, data: e.data }));
    await live.close();
    expect(heard.map((e) => [e.type, e.data.id, e.data.shared])).toEqual([
      ['file.moved', photo.id, undefined],
      ['file.shared', photo.id, false],
    ]);
    const removed = rowsOf(owner.id, mark).find((r) => r.kind === 'link.removed');
    expect(removed).toMatchObject({ itemId: photo.id, actorKind: 'system' });
    expect(JSON.parse(removed!.details!)).toMatchObject({ joined: true });
    const { reader: resumed } = await open(owner.client, from);
    expect((await resumed.untilQuiet()).map((e) => ({ type: e.type, data: e.data }))).toEqual(heard);
    await resumed.close();

    expect((await childNamed(owner, library.folderId, 'photo.txt')).id).toBe(photo.id);
    expect((await json(await owner.client.get(`/api/files/${photo.id}/info`))).shared).toBe(false);
    expect((await t.client().get(`/s/${token}/file/${photo.id}`)).status).toBe(404);
    const page = await json(await t.client().get(`/s/${token}`, { accept: 'application/json' }));
    expect(page.items).toEqual([]);
  });

  test('the events of new and changed items are the same live and replayed: size and mimeType of files, none of folders', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'old.png', 'not a picture yet');
    const library = await addLibrary(admin, root, owner);
    const old = await childNamed(owner, library.folderId, 'old.png');
    const { reader: live, id: from } = await open(owner.client);

    write(root, 'picture.png', await png(4, 4));
    write(root, 'made/note.txt', 'a note');
    const picture = await png(8, 8);
    fs.writeFileSync(path.join(root, 'old.png'), picture);
    await rescan(admin, library.id);
    const heard = await live.untilQuiet();
    await live.close();

    const byName = new Map(heard.map((e) => [e.data.name, e]));
    expect(byName.get('picture.png')).toMatchObject({ type: 'file.uploaded', data: { size: expect.any(Number), mimeType: 'image/png' } });
    expect(byName.get('note.txt')).toMatchObject({ type: 'file.uploaded', data: { size: 6, mimeType: 'text/plain' } });
    expect(byName.get('old.png')).toMatchObject({
      type: 'file.updated',
      data: { id: old.id, size: picture.length, mimeType: 'image/png' },
    });
    const made = byName.get('made')!;
    expect(made.type).toBe('folder.created');
    expect(Object.keys(made.data).sort()).toEqual(['id', 'name', 'parentId', 'type', 'userId']);
    expect(heard).toHaveLength(4);

    const { reader: resumed } = await open(owner.client, from);
    expect(await resumed.untilQuiet()).toEqual(heard);
    await resumed.close();
  });
});
