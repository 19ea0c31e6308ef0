import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { davLogin, NextcloudApp, type PropfindRow, propfindRows } from '../../helpers/dav.ts';
import { listAll } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
  await seed.admin(t);
});
afterAll(() => t.stop());

/** What the Android app asks of a file's versions (its getFileVersionPropSet). */
const VERSION_PROPS = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>
  <d:getcontenttype/><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:creationdate/><d:getetag/><oc:id/><oc:size/></d:prop></d:propfind>`;

/** A Nextcloud app, with what these tests ask of it. */
class App extends NextcloudApp {
  async fileid(path: string): Promise<string> {
    const res = await this.files(
      'PROPFIND',
      path,
      { depth: '0' },
      '<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:fileid/></d:prop></d:propfind>',
    );
    return propfindRows(await res.text())[0]!.props.fileid!;
  }
  /** The version entries of a file (the collection itself, first in the answer, left out as the apps do). */
  async versions(fileid: string): Promise<PropfindRow[]> {
    const res = await this.send('PROPFIND', `/remote.php/dav/versions/${this.userId}/versions/${fileid}`, { depth: '1' }, VERSION_PROPS);
    expect(res.status).toBe(207);
    const rows = propfindRows(await res.text());
    expect(rows[0]!.href).toBe(`/remote.php/dav/versions/${this.userId}/versions/${fileid}/`);
    return rows.slice(1);
  }
  restore(fileid: string, name: string, as = this.userId) {
    return this.send('MOVE', `/remote.php/dav/versions/${as}/versions/${fileid}/${name}`, {
      destination: `${t.url}/remote.php/dav/versions/${as}/restore/target`,
    });
  }
}

async function app(login: seed.SeededLogin): Promise<App> {
  return new App(await davLogin(t, login), login.id);
}

const T0 = 1_700_000_000;

/** A file written three times with distinct modified times: two versions kept, the third content current. */
async function threeContents(a: App, path: string): Promise<string> {
  for (const [i, body] of ['first', 'second!', 'third!!!'].entries())
    expect((await a.files('PUT', path, { 'x-oc-mtime': String(T0 + i * 100), 'content-type': 'text/plain' }, body)).status).toBeLessThan(
      300,
    );
  return a.fileid(path);
}

describe('Nextcloud clients: file versions', () => {
  test('PROPFIND lists a file’s versions named by their modified second; GET downloads one; MOVE into restore/ restores it and keeps the current content', async () => {
    const capabilities = (await (await fetch(`${t.url}/ocs/v2.php/cloud/capabilities?format=json`)).json()) as any;
    expect(capabilities.ocs.data.capabilities.files.versioning).toBe(true);
    const o = await seed.owner(t);
    const a = await app(o);
    const fileid = await threeContents(a, 'notes.txt');

    const listed = await a.versions(fileid);
    expect(listed.map((r) => r.href)).toEqual([
      `/remote.php/dav/versions/${o.id}/versions/${fileid}/${T0 + 100}`,
      `/remote.php/dav/versions/${o.id}/versions/${fileid}/${T0}`,
    ]);
    const [second, first] = listed;
    // Android names a version by its getlastmodified second: it must be the entry's name.
    expect(Math.floor(Date.parse(second!.props.getlastmodified!) / 1000)).toBe(T0 + 100);
    expect(second!.props).toMatchObject({ getcontentlength: '7', size: '7', resourcetype: '', id: fileid, getcontenttype: 'text/plain' });
    expect(first!.props.getcontentlength).toBe('5');
    expect(second!.props.getetag).not.toBe(first!.props.getetag);

    const got = await a.send('GET', `/remote.php/dav/versions/${o.id}/versions/${fileid}/${T0}`);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('first');
    expect(got.headers.get('etag')).toBe(first!.props.getetag!.replaceAll('&quot;', '"'));
    const cached = await a.send('GET', `/remote.php/dav/versions/${o.id}/versions/${fileid}/${T0}`, {
      'if-none-match': got.headers.get('etag')!,
    });
    expect(cached.status).toBe(304);
    const ranged = await a.send('GET', `/remote.php/dav/versions/${o.id}/versions/${fileid}/${T0}`, { range: 'bytes=1-2' });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe('ir');

    // The Android app moves into restore/<fileid>, the web page into restore/target: both restore.
    const rootEtag = async () => /<D:getetag>([^<]*)<\/D:getetag>/.exec(await (await a.files('PROPFIND', '', { depth: '0' })).text())![1];
    const before = await rootEtag();
    const moved = await a.send('MOVE', `/remote.php/dav/versions/${o.id}/versions/${fileid}/${T0}`, {
      destination: `${t.url}/remote.php/dav/versions/${o.id}/restore/${fileid}`,
    });
    expect(moved.status).toBe(201);
    expect(await (await a.files('GET', 'notes.txt')).text()).toBe('first');
    expect(await a.fileid('notes.txt')).toBe(fileid);
    expect(await rootEtag()).not.toBe(before);
    // The replaced content is now the newest version; the restored one left the list.
    const after = await a.versions(fileid);
    expect(after).toHaveLength(2);
    expect(after.map((r) => r.props.getcontentlength)).toEqual(['8', '7']);
    const api = (await (await o.client.get(`/api/files/${(await listAll(o.client, '/api/files'))[0].id}/versions`)).json()) as any;
    expect(api.versions.map((v: any) => v.source)).toEqual(['webdav', 'webdav']);
    expect((await a.restore(fileid, String(T0 + 200))).status).toBe(201);
    expect(await (await a.files('GET', 'notes.txt')).text()).toBe('third!!!');
    expect((await a.restore(fileid, String(T0 + 200))).status).toBe(404);

    // Depth 0 names the collection alone; the home lists versions/ and restore/.
    const zero = await a.send('PROPFIND', `/remote.php/dav/versions/${o.id}/versions/${fileid}`, { depth: '0' });
    expect(propfindRows(await zero.text())).toHaveLength(1);
    const home = await a.send('PROPFIND', `/remote.php/dav/versions/${o.id}`, { depth: '1' });
    expect(propfindRows(await home.text()).map((r) => r.href)).toEqual([
      `/remote.php/dav/versions/${o.id}/`,
      `/remote.php/dav/versions/${o.id}/versions/`,
      `/remote.php/dav/versions/${o.id}/restore/`,
    ]);
  });

  test('another login’s id or another account’s fileid is 404; a sub-user needs Download to read and Edit to restore; a viewer member reads, an editor restores', async () => {
    const o = await seed.owner(t);
    const a = await app(o);
    await a.files('MKCOL', 'Team');
    const fileid = await threeContents(a, 'Team/plan.txt');
    const v = String(T0);
    const versionPath = (as: string) => `/remote.php/dav/versions/${as}/versions/${fileid}/${v}`;

    const stranger = await app(await seed.owner(t));
    expect((await stranger.send('PROPFIND', `/remote.php/dav/versions/${o.id}/versions/${fileid}`, { depth: '1' })).status).toBe(404);
    expect((await stranger.send('PROPFIND', `/remote.php/dav/versions/${stranger.userId}/versions/${fileid}`, { depth: '1' })).status).toBe(
      404,
    );
    expect((await stranger.send('GET', versionPath(stranger.userId))).status).toBe(404);
    expect((await stranger.restore(fileid, v)).status).toBe(404);
    expect((await fetch(`${t.url}${versionPath(o.id)}`)).status).toBe(401);

    const noDownload = await app(await seed.subUser(t, o, ['files.upload', 'files.edit']));
    expect(await noDownload.versions(fileid)).toHaveLength(2);
    expect((await noDownload.send('GET', versionPath(noDownload.userId))).status).toBe(403);
    const noEdit = await app(await seed.subUser(t, o, ['files.download']));
    expect(await (await noEdit.send('GET', versionPath(noEdit.userId))).text()).toBe('first');
    expect((await noEdit.restore(fileid, v)).status).toBe(403);
    expect(await (await a.files('GET', 'Team/plan.txt')).text()).toBe('third!!!');
    expect((await noDownload.restore(fileid, v)).status).toBe(201);
    expect(await (await a.files('GET', 'Team/plan.txt')).text()).toBe('first');

    const team = (await listAll(o.client, '/api/files')).find((i) => i.name === 'Team');
    const viewer = await seed.owner(t);
    const editor = await seed.owner(t);
    expect((await o.client.post(`/api/files/${team.id}/members`, { email: viewer.email, role: 'viewer' })).status).toBe(201);
    expect((await o.client.post(`/api/files/${team.id}/members`, { email: editor.email, role: 'editor' })).status).toBe(201);
    const vw = await app(viewer);
    const ed = await app(editor);
    const names = (await vw.versions(fileid)).map((r) => r.href.split('/').at(-1)!);
    expect(names).toHaveLength(2);
    expect((await vw.send('GET', `/remote.php/dav/versions/${vw.userId}/versions/${fileid}/${names[0]}`)).status).toBe(200);
    expect((await vw.restore(fileid, names[0]!)).status).toBe(403);
    expect((await ed.restore(fileid, names[0]!)).status).toBe(201);
    expect(await (await a.files('GET', 'Team/plan.txt')).text()).toBe('third!!!');
  });

  test('two versions modified in the same second list once, as the newer: the name the apps restore by names one version', async () => {
    const o = await seed.owner(t);
    const a = await app(o);
    for (const body of ['older', 'newer', 'current'])
      expect((await a.files('PUT', 'same.txt', { 'x-oc-mtime': String(T0), 'content-type': 'text/plain' }, body)).status).toBeLessThan(300);
    const fileid = await a.fileid('same.txt');
    const listed = await a.versions(fileid);
    expect(listed.map((r) => r.href.split('/').at(-1))).toEqual([String(T0)]);
    expect(await (await a.send('GET', `/remote.php/dav/versions/${o.id}/versions/${fileid}/${T0}`)).text()).toBe('newer');
    const all = (await (await o.client.get(`/api/files/${(await listAll(o.client, '/api/files'))[0].id}/versions`)).json()) as any;
    expect(all.versions).toHaveLength(2);
  });

  test('bad requests are a 4xx that says what to send', async () => {
    const o = await seed.owner(t);
    const a = await app(o);
    const fileid = await threeContents(a, 'x.txt');
    await a.files('MKCOL', 'Folder');
    const folderId = await a.fileid('Folder');
    const base = `/remote.php/dav/versions/${o.id}`;
    const entry = `${base}/versions/${fileid}/${T0}`;
    for (const [res, status] of [
      [await a.send('MOVE', entry), 400],
      [await a.send('MOVE', entry, { destination: 'http://[bad' }), 400],
      [await a.send('MOVE', entry, { destination: `http://elsewhere.example${base}/restore/target` }), 502],
      [await a.send('MOVE', entry, { destination: `${t.url}/remote.php/dav/files/${o.id}/y.txt` }), 403],
      [await a.send('MOVE', `${base}/versions/${fileid}`, { destination: `${t.url}${base}/restore/target` }), 403],
      [await a.send('PROPFIND', `${base}/versions/${fileid}`, { depth: 'infinity' }), 403],
      [await a.send('PROPFIND', `${base}/versions/${fileid}`, { depth: 'two' }), 400],
      [await a.send('PROPFIND', `${base}/versions/${folderId}`, { depth: '1' }), 400],
      [await a.send('PROPFIND', `${base}/versions/abc`, { depth: '1' }), 404],
      [await a.send('PROPFIND', `${base}/versions/999999999`, { depth: '1' }), 404],
      [await a.send('PROPFIND', `${base}/versions/${fileid}/%E0%A4%A`, { depth: '0' }), 400],
      [await a.send('PROPFIND', `${base}/versions/${fileid}/${T0}/deeper`, { depth: '0' }), 404],
      [await a.send('PROPFIND', `${base}/elsewhere`, { depth: '0' }), 404],
      [await a.send('GET', `${base}/versions/${fileid}`), 405],
      [await a.send('DELETE', entry), 405],
    ] as const)
      expect({ url: res.url, status: res.status }).toEqual({ url: res.url, status });
    const notServed = await a.send('DELETE', entry);
    const allow = (await a.send('OPTIONS', `${base}/versions/${fileid}`)).headers.get('allow');
    expect({ allow: notServed.headers.get('allow'), body: await notServed.json() }).toEqual({
      allow,
      body: { message: 'DELETE is not served on versions' },
    });
    expect(allow).toContain('PROPFIND');
    expect(await a.versions(fileid)).toHaveLength(2);
  });
});
