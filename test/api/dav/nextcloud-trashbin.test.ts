import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { davLogin, NextcloudApp, type PropfindRow, propfindRows } from '../../helpers/dav.ts';
import { folder, listAll, upload } from '../../helpers/files.ts';
import { jpeg } from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
  await seed.admin(t);
});
afterAll(() => t.stop());

/** What the Nextcloud apps ask of the trash. */
const TRASH_PROPS = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>
  <nc:trashbin-filename/><nc:trashbin-original-location/><nc:trashbin-deletion-time/><d:getcontentlength/><d:resourcetype/>
  <oc:fileid/><oc:size/><d:getlastmodified/></d:prop></d:propfind>`;
const FILE_PROPS = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>
  <oc:fileid/><oc:permissions/><nc:has-preview/></d:prop></d:propfind>`;

/** A Nextcloud app, with what these tests ask of it. */
class App extends NextcloudApp {
  async filesProps(path: string, depth = '1'): Promise<PropfindRow[]> {
    const res = await this.files('PROPFIND', path, { depth }, FILE_PROPS);
    expect(res.status).toBe(207);
    return propfindRows(await res.text());
  }
  async trash(): Promise<PropfindRow[]> {
    const res = await this.send('PROPFIND', `/remote.php/dav/trashbin/${this.userId}/trash`, { depth: '1' }, TRASH_PROPS);
    expect(res.status).toBe(207);
    return propfindRows(await res.text()).slice(1);
  }
}

async function app(login: seed.SeededLogin): Promise<App> {
  return new App(await davLogin(t, login), login.id);
}

describe('Nextcloud clients: the trashbin', () => {
  test('a delete lists in the trashbin with its name, where it was and when; MOVE into restore/ puts it back with its fileid; DELETE purges', async () => {
    const capabilities = (await (await fetch(`${t.url}/ocs/v2.php/cloud/capabilities?format=json`)).json()) as any;
    expect(capabilities.ocs.data.capabilities.files.undelete).toBe(true);
    const o = await seed.owner(t);
    const a = await app(o);
    await a.files('MKCOL', 'Docs');
    await a.files('MKCOL', 'Docs/Old');
    await a.files('PUT', 'Docs/Old/inner.txt', {}, '1234');
    await a.files('PUT', 'Docs/report 🎉.txt', {}, 'report');
    const fileid = (await a.filesProps('Docs/report%20%F0%9F%8E%89.txt', '0'))[0]!.props.fileid!;
    const before = Math.floor(Date.now() / 1000);
    expect((await a.files('DELETE', 'Docs/report%20%F0%9F%8E%89.txt')).status).toBe(204);
    expect((await a.files('DELETE', 'Docs/Old')).status).toBe(204);

    const listed = await a.trash();
    expect(listed.map((r) => r.props['trashbin-filename']).sort()).toEqual(['Old', 'report 🎉.txt']);
    const report = listed.find((r) => r.props['trashbin-filename'] === 'report 🎉.txt')!;
    expect(report.props['trashbin-original-location']).toBe('Docs/report 🎉.txt');
    expect(Number(report.props['trashbin-deletion-time'])).toBeGreaterThanOrEqual(before - 1);
    expect(report.props.fileid).toBe(fileid);
    expect(report.props.getcontentlength).toBe('6');
    expect(report.href).toStartWith(`/remote.php/dav/trashbin/${o.id}/trash/`);
    const old = listed.find((r) => r.props['trashbin-filename'] === 'Old')!;
    expect(old.props['trashbin-original-location']).toBe('Docs/Old');
    expect(old.props.size).toBe('4');
    expect(old.props.resourcetype).toBe('<D:collection/>');

    // The home lists trash/ and restore/; Depth 0 of an entry answers it alone.
    const home = await a.send('PROPFIND', `/remote.php/dav/trashbin/${o.id}/`, { depth: '1' });
    expect(propfindRows(await home.text()).map((r) => r.href)).toEqual([
      `/remote.php/dav/trashbin/${o.id}/`,
      `/remote.php/dav/trashbin/${o.id}/trash/`,
      `/remote.php/dav/trashbin/${o.id}/restore/`,
    ]);
    const entryUrl = encodeURI(report.href);
    const one = await a.send('PROPFIND', entryUrl, { depth: '0' }, TRASH_PROPS);
    expect(propfindRows(await one.text())[0]!.props['trashbin-filename']).toBe('report 🎉.txt');

    const restore = await a.send('MOVE', entryUrl, {
      destination: `${t.url}/remote.php/dav/trashbin/${o.id}/restore/${encodeURIComponent('report 🎉.txt')}`,
    });
    expect(restore.status).toBe(201);
    const back = await a.filesProps('Docs/', '1');
    expect(back.find((r) => r.href.endsWith('/report 🎉.txt'))?.props.fileid).toBe(fileid);
    expect((await a.send('MOVE', entryUrl, { destination: `${t.url}/remote.php/dav/trashbin/${o.id}/restore/x` })).status).toBe(404);

    // Restoring somewhere other than restore/ is refused; DELETE purges for good.
    const oldUrl = encodeURI(old.href);
    expect((await a.send('MOVE', oldUrl, { destination: `${t.url}/remote.php/dav/files/${o.id}/Old` })).status).toBe(403);
    expect((await a.send('DELETE', oldUrl)).status).toBe(204);
    expect(await a.trash()).toEqual([]);
    expect(await listAll(o.client, '/api/files/trash')).toEqual([]);
    expect((await a.files('PROPFIND', 'Docs/Old', { depth: '0' })).status).toBe(404);
  });

  test('DELETE of trash/ empties it; another login’s trashbin and another account’s entry are 404; a sub-user without Trash is 403', async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const a = await app(o);
    const b = await app(other);
    await a.files('PUT', 'one.txt', {}, '1');
    await a.files('PUT', 'two.txt', {}, '2');
    await a.files('DELETE', 'one.txt');
    const [entry] = await a.trash();
    const name = entry!.href.split('/').at(-1)!;

    expect((await b.send('PROPFIND', `/remote.php/dav/trashbin/${o.id}/trash`, { depth: '1' })).status).toBe(404);
    // The same entry name under the other account's own trashbin names nothing there.
    expect((await b.send('DELETE', `/remote.php/dav/trashbin/${other.id}/trash/${name}`)).status).toBe(404);
    expect(
      (
        await b.send('MOVE', `/remote.php/dav/trashbin/${other.id}/trash/${name}`, {
          destination: `${t.url}/remote.php/dav/trashbin/${other.id}/restore/x`,
        })
      ).status,
    ).toBe(404);
    expect(await a.trash()).toHaveLength(1);

    const sub = await app(await seed.subUser(t, o, ['files.download', 'files.delete']));
    expect(await sub.trash()).toHaveLength(1);
    const subUrl = `/remote.php/dav/trashbin/${sub.userId}/trash/${name}`;
    expect((await sub.send('DELETE', subUrl)).status).toBe(403);
    expect((await sub.send('MOVE', subUrl, { destination: `${t.url}/remote.php/dav/trashbin/${sub.userId}/restore/x` })).status).toBe(403);
    expect((await sub.send('DELETE', `/remote.php/dav/trashbin/${sub.userId}/trash`)).status).toBe(403);
    expect(await a.trash()).toHaveLength(1);

    await a.files('DELETE', 'two.txt');
    expect(await a.trash()).toHaveLength(2);
    expect((await a.send('DELETE', `/remote.php/dav/trashbin/${o.id}/trash`)).status).toBe(204);
    expect(await a.trash()).toEqual([]);
    expect((await fetch(`${t.url}/remote.php/dav/trashbin/${o.id}/trash`, { method: 'PROPFIND' })).status).toBe(401);

    // Bad requests are a 4xx that says what to send.
    await a.files('PUT', 'three.txt', {}, '3');
    await a.files('DELETE', 'three.txt');
    const [three] = await a.trash();
    const threeUrl = encodeURI(three!.href);
    const trashUrl = `/remote.php/dav/trashbin/${o.id}/trash`;
    for (const [res, status] of [
      [await a.send('MOVE', threeUrl), 400],
      [await a.send('MOVE', threeUrl, { destination: 'http://[bad' }), 400],
      [await a.send('MOVE', threeUrl, { destination: `http://elsewhere.example/remote.php/dav/trashbin/${o.id}/restore/x` }), 502],
      [await a.send('PROPFIND', trashUrl, { depth: 'infinity' }), 403],
      [await a.send('PROPFIND', trashUrl, { depth: 'two' }), 400],
      [await a.send('PROPFIND', trashUrl, { depth: '1' }, '<d:propfind xmlns:d="DAV:"><d:prop>'), 400],
      [await a.send('PROPFIND', `${trashUrl}/%E0%A4%A`, { depth: '0' }), 400],
      [await a.send('PROPFIND', `${trashUrl}/no-number-here.d1`, { depth: '0' }), 404],
      [await a.send('PROPFIND', `${trashUrl}/1-a/deeper`, { depth: '0' }), 404],
      [await a.send('DELETE', `/remote.php/dav/trashbin/${o.id}/restore`), 403],
      [await a.send('GET', threeUrl), 405],
    ] as const)
      expect(res.status).toBe(status);
    const notServed = await a.send('PUT', threeUrl);
    expect({ status: notServed.status, allow: notServed.headers.get('allow'), body: await notServed.json() }).toEqual({
      status: 405,
      allow: 'OPTIONS, PROPFIND, MOVE, DELETE',
      body: { message: 'PUT is not served on the trashbin' },
    });
    const options = await a.send('OPTIONS', trashUrl);
    expect({ status: options.status, dav: options.headers.get('dav'), allow: options.headers.get('allow') }).toEqual({
      status: 200,
      dav: '1',
      allow: 'OPTIONS, PROPFIND, MOVE, DELETE',
    });
    expect(await a.trash()).toHaveLength(1);
  });
});

describe('Nextcloud clients: previews and oc:permissions S', () => {
  test('an image has nc:has-preview and a preview by fileid and by path, small or large; a text file has none; another account’s is 404', async () => {
    const o = await seed.owner(t);
    const a = await app(o);
    await a.files('MKCOL', 'Photos');
    expect((await a.files('PUT', 'Photos/beach.jpg', { 'content-type': 'image/jpeg' }, (await jpeg(800, 600)) as never)).status).toBe(201);
    await a.files('PUT', 'Photos/notes.txt', {}, 'notes');
    const rows = await a.filesProps('Photos/', '1');
    const beach = rows.find((r) => r.href.endsWith('beach.jpg'))!;
    const notes = rows.find((r) => r.href.endsWith('notes.txt'))!;
    expect(beach.props['has-preview']).toBe('true');
    expect(notes.props['has-preview']).toBe('false');

    const small = await a.send('GET', `/index.php/core/preview?fileId=${beach.props.fileid}&x=64&y=64&a=1`);
    expect(small.status).toBe(200);
    expect(small.headers.get('content-type')).toBe('image/webp');
    const smallBytes = (await small.arrayBuffer()).byteLength;
    const large = await a.send('GET', `/index.php/core/preview.png?file=${encodeURIComponent('/Photos/beach.jpg')}&x=1024&y=1024`);
    expect(large.status).toBe(200);
    expect((await large.arrayBuffer()).byteLength).toBeGreaterThan(smallBytes);
    expect((await a.send('GET', `/index.php/core/preview?fileId=${notes.props.fileid}&x=64&y=64`)).status).toBe(404);
    expect((await a.send('GET', '/index.php/core/preview.png?file=/Photos/missing.jpg')).status).toBe(404);
    expect((await a.send('GET', '/index.php/core/preview?fileId=abc')).status).toBe(400);

    const stranger = await app(await seed.owner(t));
    expect((await stranger.send('GET', `/index.php/core/preview?fileId=${beach.props.fileid}&x=64&y=64`)).status).toBe(404);
    expect((await fetch(`${t.url}/index.php/core/preview?fileId=${beach.props.fileid}`)).status).toBe(401);
    const noDownload = await app(await seed.subUser(t, o, ['files.upload']));
    expect((await noDownload.send('GET', `/index.php/core/preview?fileId=${beach.props.fileid}&x=64&y=64`)).status).toBe(403);

    // A member sees the owner's picture through "Shared with me", by path and by fileid.
    const member = await seed.owner(t);
    const photos = (await listAll(o.client, '/api/files')).find((i) => i.name === 'Photos');
    expect((await o.client.post(`/api/files/${photos.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    const m = await app(member);
    const byPath = await m.send(
      'GET',
      `/index.php/core/preview.png?file=${encodeURIComponent('/Shared with me/Photos/beach.jpg')}&x=64&y=64`,
    );
    expect(byPath.status).toBe(200);
    expect((await m.send('GET', `/index.php/core/preview?fileId=${beach.props.fileid}&x=64&y=64`)).status).toBe(200);
  });

  test('the owner’s items shared with people or by a link have S in oc:permissions; others do not', async () => {
    const o = await seed.owner(t);
    const a = await app(o);
    const family = await folder(o.client, 'Family');
    const linked = await upload(o.client, 'linked.txt', 'l');
    await upload(o.client, 'private.txt', 'p');
    const member = await seed.owner(t);
    expect((await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    expect((await o.client.post('/api/files/share', { ids: [linked.id], shared: true })).status).toBeLessThan(300);
    const rows = await a.filesProps('', '1');
    const perms = Object.fromEntries(rows.slice(1).map((r) => [r.href.split('/').filter(Boolean).at(-1), r.props.permissions]));
    expect(perms).toEqual({ Family: 'RGDNVCKS', 'linked.txt': 'RGDNVWS', 'private.txt': 'RGDNVW' });
  });
});

/** Every folder's stored tree size beside a walk of its live subtree, and the root's beside the account's live files. */
function storedAndWalked(accountId: string) {
  const sqlite = t.server.ctx.db.$client;
  const folders = sqlite
    .query<{ id: string; name: string; treeSize: number }, [string]>(
      "SELECT id, name, tree_size AS treeSize FROM items WHERE account_id = ? AND type = 'folder' AND deleted_at IS NULL",
    )
    .all(accountId);
  const walk = (id: string) => t.server.ctx.repos.items.liveTreeTotals(id).totalSize;
  const files = sqlite
    .query<{ n: number | null }, [string]>("SELECT SUM(size) AS n FROM items WHERE account_id = ? AND type = 'file' AND deleted_at IS NULL")
    .get(accountId)!.n;
  return {
    stored: {
      root: t.server.ctx.repos.items.rootSize(accountId),
      ...Object.fromEntries(folders.map((f) => [`${f.name} ${f.id}`, f.treeSize])),
    },
    walked: { root: files ?? 0, ...Object.fromEntries(folders.map((f) => [`${f.name} ${f.id}`, walk(f.id)])) },
  };
}

describe('Nextcloud clients: stored folder sizes', () => {
  test('oc:size of every folder follows uploads, replaces, moves, copies, trash, restore, purge and a member’s edits without a subtree walk', async () => {
    const o = await seed.owner(t);
    const a = await app(o);
    const check = (step: string) => {
      const { stored, walked } = storedAndWalked(o.id);
      expect({ step, ...stored }).toEqual({ step, ...walked });
    };
    for (const f of ['A', 'A/B', 'A/B/C', 'D']) await a.files('MKCOL', f);
    await a.files('PUT', 'A/B/C/one.txt', {}, '12345');
    await a.files('PUT', 'A/two.txt', {}, '123');
    await a.files('PUT', 'top.txt', {}, '1');
    check('uploads');
    const rows = await a.send(
      'PROPFIND',
      `/remote.php/dav/files/${o.id}/`,
      { depth: '1' },
      '<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:size/></d:prop></d:propfind>',
    );
    expect(propfindRows(await rows.text()).map((r) => r.props.size)).toEqual(['9', '8', '0', '1']);
    await a.files('PUT', 'A/B/C/one.txt', {}, '1234567890');
    check('replace, larger');
    await a.files('MOVE', 'A/B', { destination: `${t.url}/remote.php/dav/files/${o.id}/D/B` });
    check('move a folder');
    await a.files('COPY', 'D/B', { destination: `${t.url}/remote.php/dav/files/${o.id}/A/B2` });
    check('copy a folder');
    await a.files('DELETE', 'D/B/C/one.txt');
    await a.files('DELETE', 'D/B');
    check('trash a file, then its folder');
    const trash = await a.trash();
    const folderEntry = trash.find((r) => r.props['trashbin-filename'] === 'B')!;
    expect(folderEntry.props.size).toBe('0');
    const fileEntry = trash.find((r) => r.props['trashbin-filename'] === 'one.txt')!;
    await a.send('MOVE', encodeURI(folderEntry.href), { destination: `${t.url}/remote.php/dav/trashbin/${o.id}/restore/B` });
    check('restore the folder');
    await a.send('MOVE', encodeURI(fileEntry.href), { destination: `${t.url}/remote.php/dav/trashbin/${o.id}/restore/one.txt` });
    check('restore the file into it');
    await a.files('DELETE', 'A');
    const [aEntry] = (await a.trash()).filter((r) => r.props['trashbin-filename'] === 'A');
    expect(aEntry!.props.size).toBe('13');
    await a.send('DELETE', encodeURI(aEntry!.href));
    check('purge');

    const member = await seed.owner(t);
    const d = (await listAll(o.client, '/api/files')).find((i) => i.name === 'D');
    expect((await o.client.post(`/api/files/${d.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const m = await app(member);
    expect((await m.files('PUT', 'Shared%20with%20me/D/B/C/from-member.txt', {}, 'member!')).status).toBe(201);
    await upload(o.client, 'via-api.txt', 'api', { parentId: d.id });
    check('a member’s upload and an API upload');
  });
});
