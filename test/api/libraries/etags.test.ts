import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json, ok } from '../../helpers/client.ts';
import { davLogin, propfindRows } from '../../helpers/dav.ts';
import { EtagChecker, SyncViewer } from '../../helpers/etag-checker.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, hostDir, libraryServer, rescan, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });

describe('library files: ETags', () => {
  test('new content of the same size moves the file’s ETag, through WebDAV and on the host: a stale If-Match is 412, a stale If-None-Match gets the bytes', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'a.txt', 'one');
    const library = await addLibrary(admin, root, owner);
    const dav = await davLogin(t, owner);
    const at = `${encodeURIComponent(library.name)}/a.txt`;
    const etag = async () => propfindRows(await (await dav.propfind(at, '0')).text())[0]!.props.getetag!.replaceAll('&quot;', '"');

    const first = await etag();
    const put = await dav.put(at, 'two');
    expect(put.status).toBe(204);
    const second = put.headers.get('etag')!;
    expect(second).not.toBe(first);
    expect(await etag()).toBe(second);
    // A client still holding the first ETag neither overwrites the new bytes nor is told it has them.
    expect((await dav.put(at, 'six', { 'if-match': first })).status).toBe(412);
    const got = await dav.request('GET', at, { headers: { 'if-none-match': first } });
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('two');

    // Another program writes the host file, same size again; a rescan picks it up.
    await Bun.sleep(5);
    write(root, 'a.txt', 'ten');
    await rescan(admin, library.id);
    const third = await etag();
    expect(third).not.toBe(second);
    expect((await dav.put(at, 'six', { 'if-match': second })).status).toBe(412);
    expect(await (await dav.request('GET', at)).text()).toBe('ten');
  });

  test('a new content of the same size written in the same millisecond moves the ETag; an unchanged file keeps it across a restart, one indexed in milliseconds by an older version too', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const file = path.join(root, 'same.txt');
    write(root, 'same.txt', 'one');
    // Seconds: the two contents' times share their millisecond, 1700000000123, and differ in its microseconds.
    fs.utimesSync(file, 1_700_000_000.1234, 1_700_000_000.1234);
    const library = await addLibrary(admin, root, owner);
    const at = `${encodeURIComponent(library.name)}/same.txt`;
    const etag = async () => {
      const dav = await davLogin(t, owner);
      return propfindRows(await (await dav.propfind(at, '0')).text())[0]!.props.getetag!;
    };
    const first = await etag();

    // Written in place (the same inode), the same size, in the same millisecond.
    write(root, 'same.txt', 'two');
    fs.utimesSync(file, 1_700_000_000.1238, 1_700_000_000.1238);
    await rescan(admin, library.id);
    expect(await etag()).not.toBe(first);

    // Through a door too: a client that sends the same time (X-OC-Mtime, in seconds) with a new content of the same size.
    const dav = await davLogin(t, owner);
    const sent = await dav.put(at, 'six', { 'x-oc-mtime': '1700000000' });
    expect(sent.status).toBe(204);
    const again = await dav.put(at, 'ten', { 'x-oc-mtime': '1700000000' });
    expect(again.headers.get('etag')).not.toBe(sent.headers.get('etag'));
    await rescan(admin, library.id);
    const second = await etag();
    expect(second).toBe(again.headers.get('etag')!.replaceAll('"', '&quot;'));

    await t.restart({ samePort: true });
    await rescan(admin, library.id);
    expect(await etag()).toBe(second);

    // An older version kept the time in milliseconds: the file is unchanged, so is its ETag.
    t.server.ctx.db.$client.run(
      "UPDATE library_entries SET host_modified_at = ? WHERE item_id = (SELECT id FROM items WHERE name = 'same.txt' AND parent_id = ?)",
      [Math.floor(fs.statSync(file).mtimeMs), library.folderId],
    );
    await rescan(admin, library.id);
    expect(await etag()).toBe(second);
  });

  test('every change in a library, on the host or through a door, moves the ETags above it for its owner and a member of its group', async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const group = await json(await admin.client.post('/api/admin/groups', { name: `Library etags ${Date.now()}` }));
    await ok('member', admin.client.post(`/api/admin/groups/${group.id}/members`, { email: member.email }));
    const root = hostDir();
    write(root, 'a.txt', 'one');
    write(root, 'old-name.txt', 'rename me');
    write(root, 'doomed.txt', 'bye');
    write(root, 'box/inner.txt', 'in the box');
    const library = await addLibrary(admin, root, owner, { group: group.name });
    const lib = encodeURIComponent(library.name);
    const o = new SyncViewer('owner', await davLogin(t, owner), `/remote.php/dav/files/${owner.id}/`);
    const m = new SyncViewer('group member', await davLogin(t, member), `/remote.php/dav/files/${member.id}/`);
    const checker = new EtagChecker([o, m], { ownRoot: new Set([o]), sameTree: [], feeds: [{ viewer: o, rel: `${lib}/` }] });
    await checker.start();
    const step = (op: string, act: () => Promise<unknown>) => checker.step(op, act);
    const onHost = async (change: () => void) => {
      await Bun.sleep(5);
      change();
      await rescan(admin, library.id);
    };

    await step('host: a rescan with nothing changed', () => onHost(() => undefined));
    await step('host: a folder touched', () => onHost(() => fs.utimesSync(path.join(root, 'box'), new Date(), new Date(2020, 1, 1))));
    await step('host: content of the same size', () => onHost(() => write(root, 'a.txt', 'two')));
    await step('host: a new file in a new folder', () => onHost(() => write(root, 'shelf/new.txt', 'new')));
    await step('host: a rename', () => onHost(() => fs.renameSync(path.join(root, 'old-name.txt'), path.join(root, 'new-name.txt'))));
    await step('host: a move into a folder', () =>
      onHost(() => fs.renameSync(path.join(root, 'new-name.txt'), path.join(root, 'box/new-name.txt'))),
    );
    await step('host: a delete', () => onHost(() => fs.rmSync(path.join(root, 'doomed.txt'))));
    await step('WebDAV PUT, content of the same size (owner)', () => ok('put', o.send('PUT', `${lib}/a.txt`, {}, 'six')));
    await step('Nextcloud PUT, content of the same size (group member)', () =>
      ok('put', m.send('PUT', `Shared%20with%20me/${lib}/a.txt`, {}, 'ten')),
    );
    const a = await childNamed(owner, library.folderId, 'a.txt');
    await step('API rename (owner)', () => ok('rename', owner.client.post('/api/files/rename', { id: a.id, name: 'b.txt' })));
    await step('WebDAV MOVE into a folder (owner)', () =>
      ok('move', o.send('MOVE', `${lib}/b.txt`, { destination: o.url(`${lib}/box/b.txt`) })),
    );
    await step('WebDAV DELETE to the trash (owner)', () => ok('delete', o.send('DELETE', `${lib}/box/b.txt`)));
    await step('API restore (owner)', () => ok('restore', owner.client.post('/api/files/trash/restore', { ids: [a.id] })));
    await step('version restored, content (owner)', async () => {
      const versions = (await json(await owner.client.get(`/api/files/${a.id}/versions`))).versions;
      await ok('restore', owner.client.post(`/api/files/${a.id}/versions/${versions.at(-1).id}/restore`, {}));
    });

    expect(checker.problems).toEqual([]);
    expect(checker.checked).toHaveLength(14);
  });
});
