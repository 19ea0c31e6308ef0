import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DavClient, davLogin, type PropfindRow, propfindRows } from '../../helpers/dav.ts';
import { json } from '../../helpers/client.ts';
import { rawRequest } from '../../helpers/raw-http.ts';
import { downloaded, folder, listAll, upload } from '../../helpers/files.ts';
import { newGroup } from '../../helpers/groups.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let admin: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer();
  admin = await seed.admin(t);
});
afterAll(() => t.stop());

const OC_PROPS = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>
  <d:getetag/><d:getlastmodified/><d:getcontentlength/><d:resourcetype/><oc:fileid/><oc:id/><oc:permissions/><oc:size/>
  <nc:has-preview/><oc:checksums/></d:prop></d:propfind>`;

/** A Nextcloud client: WebDAV under /remote.php/dav/files/<id>/ and OCS, HTTP Basic with an app password. */
class NextcloudClient extends DavClient {
  constructor(
    dav: DavClient,
    readonly userId: string,
  ) {
    super(dav.baseUrl, dav.email, dav.password);
  }
  files(method: string, path: string, opts: { headers?: Record<string, string>; body?: RequestInit['body'] } = {}) {
    return fetch(`${this.baseUrl}/remote.php/dav/files/${this.userId}/${path.replace(/^\//, '')}`, {
      method,
      headers: { authorization: this.authorization, ...opts.headers },
      body: opts.body,
    });
  }
  async props(path: string, depth: '0' | '1' = '0'): Promise<PropfindRow[]> {
    const res = await this.files('PROPFIND', path, { headers: { depth }, body: OC_PROPS });
    expect(res.status).toBe(207);
    return propfindRows(await res.text());
  }
  async etag(path: string): Promise<string> {
    return (await this.props(path))[0]!.props.getetag!;
  }
}

async function nextcloudLogin(login: seed.SeededLogin): Promise<NextcloudClient> {
  return new NextcloudClient(await davLogin(t, login), login.id);
}

describe('Nextcloud clients: discovery and account', () => {
  test('status.php and the capabilities answer without a session; capabilities in JSON or XML, advertising only what exists', async () => {
    const status = await fetch(`${t.url}/status.php`);
    expect(status.status).toBe(200);
    const body = await json(status);
    expect(body).toMatchObject({ installed: true, maintenance: false, needsDbUpgrade: false, productname: 'Coffer', edition: '' });
    expect(Number(body.version.split('.')[0])).toBeGreaterThanOrEqual(28);
    for (const v of ['v1', 'v2']) {
      const res = await fetch(`${t.url}/ocs/${v}.php/cloud/capabilities?format=json`);
      const ocs = (await json(res)).ocs;
      expect(ocs.meta.statuscode).toBe(v === 'v1' ? 100 : 200);
      expect(ocs.data.capabilities.core['webdav-root']).toBe('remote.php/webdav');
      expect(ocs.data.capabilities.dav.chunking).toBe('1.0');
      const viaAccept = await fetch(`${t.url}/ocs/${v}.php/cloud/capabilities`, { headers: { accept: 'application/json' } });
      expect((await json(viaAccept)).ocs.data.version.string).toBe(ocs.data.version.string);
    }
    const xml = await fetch(`${t.url}/ocs/v1.php/cloud/capabilities`);
    expect(xml.headers.get('content-type')).toContain('application/xml');
    const text = await xml.text();
    expect(text).toContain('<statuscode>100</statuscode>');
    expect(text).toContain('<webdav-root>remote.php/webdav</webdav-root>');
    expect((await fetch(`${t.url}/index.php/204`)).status).toBe(204);
  });

  test('an OCS error for a request with an empty Host is the OCS envelope, not a 500 (the query is read without parsing the URL)', async () => {
    for (const head of [
      'PATCH /ocs/nothing?format=json HTTP/1.1\r\nHost: \r\nContent-Length: 0\r\n\r\n',
      'GET /ocs/v2.php/x HTTP/1.1\r\nHost: \r\n\r\n',
    ]) {
      const res = await rawRequest(t.url, head);
      expect(res.status).toBeLessThan(500);
    }
  });

  test('cloud/user with an app password (and the account password where allowed); bad credentials are 401 with WWW-Authenticate in an OCS envelope', async () => {
    const o = await seed.owner(t);
    const nc = await nextcloudLogin(o);
    for (const v of ['v1', 'v2']) {
      const res = await fetch(`${t.url}/ocs/${v}.php/cloud/user?format=json`, { headers: { authorization: nc.authorization } });
      expect(res.status).toBe(200);
      const data = (await json(res)).ocs.data;
      expect(data).toMatchObject({ id: o.id, 'display-name': 'Owner', email: o.email });
      expect(data.quota).toMatchObject({ free: -3, used: 0 });
    }
    // The account password works where WebDAV allows it (the admin's setting), and desktop-only access leaves these open.
    const account = `Basic ${Buffer.from(`${o.email}:${o.password}`).toString('base64')}`;
    const userUrl = `${t.url}/ocs/v2.php/cloud/user?format=json`;
    expect((await fetch(userUrl, { headers: { authorization: account } })).status).toBe(401);
    t.server.ctx.services.settings.set('davAccountPasswords', true);
    t.server.ctx.services.settings.set('desktopOnlyAccess', true);
    try {
      expect((await json(await fetch(userUrl, { headers: { authorization: account } }))).ocs.data.id).toBe(o.id);
      expect((await fetch(`${t.url}/status.php`)).status).toBe(200);
      expect((await fetch(`${t.url}/remote.php/webdav/`, { method: 'PROPFIND', headers: { authorization: account } })).status).toBe(207);
      expect((await fetch(`${t.url}/api/files`)).status).toBe(403);
    } finally {
      t.server.ctx.services.settings.set('davAccountPasswords', false);
      t.server.ctx.services.settings.set('desktopOnlyAccess', false);
    }
    const bad = `Basic ${Buffer.from(`${o.email}:wrong`).toString('base64')}`;
    const v1 = await fetch(`${t.url}/ocs/v1.php/cloud/user?format=json`, { headers: { authorization: bad } });
    expect(v1.status).toBe(401);
    expect(v1.headers.get('www-authenticate')).toStartWith('Basic ');
    expect((await json(v1)).ocs.meta).toMatchObject({ status: 'failure', statuscode: 997 });
    const v2 = await fetch(`${t.url}/ocs/v2.php/cloud/user`, { headers: { authorization: bad } });
    expect(v2.status).toBe(401);
    expect(await v2.text()).toContain('<statuscode>401</statuscode>');
    for (const path of [
      'core/navigation/apps',
      'apps/notifications/api/v2/notifications',
      'apps/user_status/api/v1/user_status',
      'search/providers',
    ]) {
      const res = await fetch(`${t.url}/ocs/v2.php/${path}?format=json`, { headers: { authorization: nc.authorization } });
      expect(res.status).toBe(200);
      expect((await json(res)).ocs.data).toEqual([]);
    }
    const providers = await fetch(`${t.url}/ocs/v2.php/search/providers`, { headers: { authorization: nc.authorization } });
    expect(await providers.text()).toContain('<statuscode>200</statuscode>');
    expect((await fetch(`${t.url}/ocs/v2.php/search/providers`)).status).toBe(401);
    // A remote wipe check and an avatar are 404, which the apps read as "no wipe pending" and "no picture".
    const wipe = await fetch(`${t.url}/index.php/core/wipe/check`, { method: 'POST', body: new URLSearchParams({ token: 'x' }) });
    expect(wipe.status).toBe(404);
    expect((await fetch(`${t.url}/index.php/avatar/${o.id}/128`, { headers: { authorization: nc.authorization } })).status).toBe(404);
    const unknown = await fetch(`${t.url}/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json`);
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).ocs.meta.statuscode).toBe(404);
  });
});

describe('Nextcloud clients: files under /remote.php', () => {
  test('/remote.php/dav/files/<id>/ and /remote.php/webdav/ are the account’s tree, hrefs under the door used; another login’s id is 404', async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const nc = await nextcloudLogin(o);
    expect((await nc.files('MKCOL', 'Docs')).status).toBe(201);
    expect((await nc.files('PUT', 'Docs/a%20b.txt', { body: 'hello' })).status).toBe(201);
    const rows = await nc.props('Docs/', '1');
    expect(rows.map((r) => r.href)).toEqual([`/remote.php/dav/files/${o.id}/Docs/`, `/remote.php/dav/files/${o.id}/Docs/a b.txt`]);
    const legacy = await fetch(`${t.url}/remote.php/webdav/Docs/a%20b.txt`, { headers: { authorization: nc.authorization } });
    expect(await legacy.text()).toBe('hello');
    const listed = await fetch(`${t.url}/remote.php/webdav/Docs/`, {
      method: 'PROPFIND',
      headers: { authorization: nc.authorization, depth: '1' },
    });
    expect(await listed.text()).toContain('<D:href>/remote.php/webdav/Docs/a%20b.txt</D:href>');
    const mover = await nc.files('MOVE', 'Docs/a%20b.txt', { headers: { destination: `${t.url}/remote.php/dav/files/${o.id}/c.txt` } });
    expect(mover.status).toBe(201);
    expect(await (await nc.request('GET', 'c.txt')).text()).toBe('hello');
    const elsewhere = await fetch(`${t.url}/remote.php/dav/files/${other.id}/`, {
      method: 'PROPFIND',
      headers: { authorization: nc.authorization, depth: '0' },
    });
    expect(elsewhere.status).toBe(404);
    const intoOther = await nc.files('COPY', 'c.txt', { headers: { destination: `${t.url}/remote.php/dav/files/${other.id}/c.txt` } });
    expect(intoOther.status).toBe(404);
  });

  test('letter case: another case is another path on /remote.php (404, a new name taken is 409) and one path on /dav/; a MOVE changing only the case renames on both', async () => {
    const o = await seed.owner(t);
    const nc = await nextcloudLogin(o);
    expect((await nc.files('MKCOL', 'Docs')).status).toBe(201);
    expect((await nc.files('PUT', 'Docs/a.txt', { body: 'lower' })).status).toBe(201);
    // The desktop client takes a 404 at a rename's old path for "moved", and anything else for "copied": it downloads again.
    for (const path of ['Docs/A.txt', 'DOCS/a.txt'])
      expect({ path, status: (await nc.files('PROPFIND', path, { headers: { depth: '0' } })).status }).toEqual({ path, status: 404 });
    expect((await nc.request('PROPFIND', 'DOCS/A.txt', { headers: { depth: '0' } })).status).toBe(207);
    // A second file whose name differs only in case (on a case-sensitive disk) is refused, not written over the first.
    expect((await nc.files('PUT', 'Docs/A.txt', { body: 'UPPER' })).status).toBe(409);
    expect((await nc.files('MKCOL', 'docs')).status).toBe(409);
    expect(await (await nc.files('GET', 'Docs/a.txt')).text()).toBe('lower');
    expect((await listAll(o.client, '/api/files')).map((i) => i.name)).toEqual(['Docs']);

    const id = (await nc.props('Docs/a.txt'))[0]!.props.fileid;
    const to = (path: string) => ({ headers: { destination: `${t.url}/remote.php/dav/files/${o.id}/${path}` } });
    expect((await nc.files('MOVE', 'Docs/a.txt', to('Docs/A.txt'))).status).toBe(201);
    expect((await nc.files('MOVE', 'Docs', to('DOCS'))).status).toBe(201);
    expect((await nc.props('DOCS/A.txt'))[0]!.props.fileid).toBe(id);
    expect((await nc.files('MOVE', 'DOCS/A.txt', to('DOCS/A.txt'))).status).toBe(403);
    // Finder and Explorer rename by case through /dav/ the same way.
    expect((await nc.request('MOVE', 'docs/a.txt', { headers: { destination: `${t.url}/dav/DOCS/report.TXT` } })).status).toBe(201);
    expect((await nc.request('MOVE', 'docs/report.txt', { headers: { destination: `${t.url}/dav/DOCS/Report.txt` } })).status).toBe(201);
    expect(await nc.list('DOCS/')).toEqual(['/dav/DOCS/', '/dav/DOCS/Report.txt']);
    expect((await nc.props('DOCS/Report.txt'))[0]!.props.fileid).toBe(id);
  });

  test('a MOVE onto the same name spelled otherwise (NFD, as the desktop client renames café.txt) changes nothing and succeeds; onto its own URL it is 403', async () => {
    const o = await seed.owner(t);
    const nc = await nextcloudLogin(o);
    expect((await nc.files('MKCOL', 'Caf%C3%A9')).status).toBe(201);
    expect((await nc.files('PUT', 'Caf%C3%A9/caf%C3%A9.txt', { body: 'café' })).status).toBe(201);
    const before = (await nc.props('Caf%C3%A9/caf%C3%A9.txt'))[0]!.props;
    const to = (path: string) => ({ headers: { destination: `${t.url}/remote.php/dav/files/${o.id}/${path}` } });
    expect((await nc.files('MOVE', 'Caf%C3%A9/caf%C3%A9.txt', to('Caf%C3%A9/cafe%CC%81.txt'))).status).toBe(201);
    expect((await nc.files('MOVE', 'Caf%C3%A9', to('Cafe%CC%81'))).status).toBe(201);
    // Sent decomposed, the source is the same item too.
    expect((await nc.files('MOVE', 'Cafe%CC%81/cafe%CC%81.txt', to('Caf%C3%A9/caf%C3%A9.txt'))).status).toBe(201);
    expect(
      (await nc.request('MOVE', 'caf%C3%A9/CAF%C3%89.txt', { headers: { destination: `${t.url}/dav/Caf%C3%A9/CAF%C3%89.TXT` } })).status,
    ).toBe(201);
    const after = (await nc.props('Caf%C3%A9/CAF%C3%89.TXT'))[0]!.props;
    expect({ fileid: after.fileid, getetag: after.getetag }).toEqual({ fileid: before.fileid, getetag: before.getetag });
    expect((await listAll(o.client, '/api/files')).map((i) => i.name)).toEqual(['Café']);
    // Byte for byte the same URL: RFC 4918's refusal, for a folder and a file, on both doors.
    expect((await nc.files('MOVE', 'Caf%C3%A9/CAF%C3%89.TXT', to('Caf%C3%A9/CAF%C3%89.TXT'))).status).toBe(403);
    expect((await nc.files('MOVE', 'Caf%C3%A9', to('Caf%C3%A9'))).status).toBe(403);
    expect((await nc.request('MOVE', 'Caf%C3%A9/', { headers: { destination: `${t.url}/dav/Caf%C3%A9/` } })).status).toBe(403);
    // A COPY onto itself stays refused, however it is spelled.
    expect((await nc.files('COPY', 'Caf%C3%A9/CAF%C3%89.TXT', to('Cafe%CC%81/CAFE%CC%81.TXT'))).status).toBe(403);
    expect(await (await nc.files('GET', 'Caf%C3%A9/CAF%C3%89.TXT')).text()).toBe('café');
  });

  test('letter case of a share and a team folder: renamed by case only, the old path is 404 on /remote.php as any item’s is; one path on /dav/', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const docs = await folder(o.client, 'Docs');
    await upload(o.client, 'a.txt', 'in docs', { parentId: docs.id });
    expect((await o.client.post(`/api/files/${docs.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const group = await newGroup(admin, 'Letter case crew', member);
    const team = await json(
      await admin.client.post('/api/admin/team-folders', { name: 'Crew', quota: null, groups: [{ groupId: group, role: 'editor' }] }),
    );
    const nc = await nextcloudLogin(member);
    expect((await o.client.post('/api/files/rename', { id: docs.id, name: 'docs' })).status).toBe(200);
    expect((await admin.client.send('PATCH', `/api/admin/team-folders/${team.id}`, { name: 'crew' })).status).toBe(200);
    // The desktop client checks that a folder it sees under a new path is gone from the old one before it takes it for moved.
    for (const [path, status] of [
      ['Shared%20with%20me/Docs/', 404],
      ['Shared%20with%20me/Docs/a.txt', 404],
      ['shared%20with%20me/docs/a.txt', 404],
      ['Shared%20with%20me/docs/a.txt', 207],
      ['Crew/', 404],
      ['crew/', 207],
    ] as const)
      expect({ path, status: (await nc.files('PROPFIND', path, { headers: { depth: '0' } })).status }).toEqual({ path, status });
    expect((await nc.request('PROPFIND', 'shared%20with%20me/DOCS/a.txt', { headers: { depth: '0' } })).status).toBe(207);
    expect((await nc.request('PROPFIND', 'CREW/', { headers: { depth: '0' } })).status).toBe(207);
  });

  test('an app folder that exists in another letter case (InstantUpload beside instantUpload): the MKCOL and the PUT refusals name it and say what to do', async () => {
    const o = await seed.owner(t);
    const nc = await nextcloudLogin(o);
    expect((await nc.files('MKCOL', 'instantUpload')).status).toBe(201);
    const message = async (res: Response) => {
      expect(res.status).toBe(409);
      return /<s:message>([^<]*)<\/s:message>/.exec(await res.text())![1]!.replaceAll('&quot;', '"');
    };
    expect(await message(await nc.files('MKCOL', 'InstantUpload'))).toBe(
      '"instantUpload" already exists here, and names differing only in letter case are one name on this server: use "instantUpload" as it is written, or rename it to "InstantUpload"',
    );
    expect(await message(await nc.files('PUT', 'InstantUpload/IMG_0001.jpg', { body: 'photo' }))).toBe(
      'The folder "InstantUpload" does not exist in this letter case, but one whose name differs only in case does, and letter case counts in these addresses: choose that folder in the app as it is written, or rename it to "InstantUpload"',
    );
    expect(await message(await nc.files('PUT', 'Nowhere/IMG_0001.jpg', { body: 'photo' }))).toBe('The parent folder does not exist');
  });

  test('a refusal under /remote.php is Sabre’s XML error with the reason in s:message, which the clients show; /dav/ keeps its JSON', async () => {
    const o = await seed.owner(t);
    const nc = await nextcloudLogin(o);
    const refused = await nc.files('PUT', `${'x'.repeat(101)}.txt`, { body: 'long' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toStartWith('application/xml');
    expect(await refused.text()).toBe(
      '<?xml version="1.0" encoding="utf-8"?>\n<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns"><s:message>' +
        `Name must be at most 100 characters: &quot;${'x'.repeat(101)}.txt&quot;</s:message></d:error>`,
    );
    const unsigned = await fetch(`${t.url}/remote.php/webdav/`, { method: 'PROPFIND' });
    expect(unsigned.status).toBe(401);
    expect(unsigned.headers.get('www-authenticate')).toStartWith('Basic');
    expect(await unsigned.text()).toContain('<s:message>');
    const onDav = await nc.request('PUT', `${'x'.repeat(101)}.txt`, { body: 'long' });
    expect(onDav.status).toBe(400);
    expect((await json(onDav)).message).toContain('at most 100 characters');
  });

  test('a team folder listed at the root has its members’ oc:permissions, as inside it: no D, N, V; C and K for an editor only', async () => {
    const editor = await seed.owner(t);
    const viewer = await seed.owner(t);
    const editors = await newGroup(admin, 'Team editors', editor);
    const viewers = await newGroup(admin, 'Team readers', viewer);
    const groups = [
      { groupId: editors, role: 'editor' },
      { groupId: viewers, role: 'viewer' },
    ];
    expect((await admin.client.post('/api/admin/team-folders', { name: 'Crew', quota: null, groups })).status).toBe(201);
    for (const [login, expected] of [
      [editor, 'GCKS'],
      [viewer, 'GS'],
    ] as const) {
      const nc = await nextcloudLogin(login);
      const atRoot = (await nc.props('', '1')).find((r) => r.href.endsWith('/Crew/'));
      expect([atRoot?.props.permissions, (await nc.props('Crew/'))[0]!.props.permissions]).toEqual([expected, expected]);
    }
  });

  test('a sub-user without Upload is 403 and a viewer member cannot write, through /remote.php, and oc:permissions says so', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'report.txt', 'r1');
    const sub = await seed.subUser(t, o, ['files.download', 'files.edit']);
    const subNc = await nextcloudLogin(sub);
    expect((await subNc.files('PUT', 'new.txt', { body: 'x' })).status).toBe(403);
    expect((await subNc.files('MKCOL', 'New')).status).toBe(403);
    const [root, report] = await subNc.props('', '1');
    expect(root!.props.permissions).toBe('G');
    expect(report!.props.permissions).toBe('GNVW');
    const ownerRows = await (await nextcloudLogin(o)).props('', '1');
    expect(ownerRows[0]!.props.permissions).toBe('GCK');
    expect(ownerRows[1]!.props.permissions).toBe('RGDNVW');

    const member = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    await upload(o.client, 'photo.txt', 'photo', { parentId: family.id });
    expect((await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    const m = await nextcloudLogin(member);
    const inF = 'Shared%20with%20me/Family';
    expect(await (await m.files('GET', `${inF}/photo.txt`)).text()).toBe('photo');
    for (const res of [
      await m.files('PUT', `${inF}/photo.txt`, { body: 'changed' }),
      await m.files('PUT', `${inF}/new.txt`, { body: 'x' }),
      await m.files('MKCOL', `${inF}/New`),
      await m.files('DELETE', `${inF}/photo.txt`),
    ])
      expect(res.status).toBe(403);
    const shared = await m.props(`${inF}/`, '1');
    expect(shared.map((r) => r.props.permissions)).toEqual(['GS', 'GS']);
    expect((await downloaded(o.client, (await listAll(o.client, `/api/files?parentId=${family.id}`))[0].id)).toString()).toBe('photo');
  });

  test('oc:fileid is a decimal id kept through rename, move, trash and restore; oc:id, oc:size, nc:has-preview; no checksum is made up', async () => {
    const o = await seed.owner(t);
    const nc = await nextcloudLogin(o);
    await nc.files('MKCOL', 'A');
    await nc.files('MKCOL', 'A/B');
    await nc.files('PUT', 'A/B/f.txt', { body: '12345' });
    await nc.files('PUT', 'A/g.txt', { body: '123' });
    const [a, , g] = await nc.props('A/', '1');
    expect(a!.props.size).toBe('8');
    expect(g!.props.size).toBe('3');
    expect(g!.props['has-preview']).toBe('false');
    expect(g!.props.checksums).toBeUndefined();
    const id = g!.props.fileid!;
    expect(id).toMatch(/^[1-9]\d*$/);
    expect(g!.props.id).toBe(`${id.padStart(8, '0')}${t.server.ctx.instanceId}`);
    expect(a!.props.fileid).not.toBe(id);
    await nc.files('MOVE', 'A/g.txt', { headers: { destination: `${t.url}/remote.php/dav/files/${o.id}/A/B/h.txt` } });
    expect((await nc.props('A/B/h.txt'))[0]!.props.fileid).toBe(id);
    await nc.files('DELETE', 'A/B/h.txt');
    const trashed = (await listAll(o.client, '/api/files/trash')).find((i: { name: string }) => i.name === 'h.txt');
    await o.client.post('/api/files/trash/restore', { ids: [trashed.id] });
    expect((await nc.props('A/B/h.txt'))[0]!.props.fileid).toBe(id);
  });

  test('oc:id and OC-FileId stay the same across a restart (an upgrade is one): clients match moved files by them', async () => {
    const s = await startTestServer();
    try {
      const o = await seed.admin(s);
      const nc = new NextcloudClient(await davLogin(s, o), o.id);
      const put = await nc.files('PUT', 'kept.txt', { body: 'kept' });
      const before = (await nc.props('kept.txt'))[0]!.props.id!;
      expect(put.headers.get('oc-fileid')).toBe(before);
      await s.restart({ samePort: true });
      expect((await nc.props('kept.txt'))[0]!.props.id).toBe(before);
      expect(before.endsWith(s.server.ctx.instanceId)).toBe(true);
    } finally {
      await s.stop();
    }
  });

  test('PUT: X-OC-Mtime sets the modified time; ETag, OC-ETag and OC-FileId answer; a stale If-Match is 412 and changes nothing', async () => {
    const o = await seed.owner(t);
    const nc = await nextcloudLogin(o);
    const put = await nc.files('PUT', 'm.txt', { body: 'one', headers: { 'x-oc-mtime': '1700000000' } });
    expect(put.status).toBe(201);
    expect(put.headers.get('x-oc-mtime')).toBe('accepted');
    const [row] = await nc.props('m.txt');
    expect(row!.props.getlastmodified).toBe(new Date(1_700_000_000_000).toUTCString());
    expect(put.headers.get('etag')).toBe(row!.props.getetag!.replaceAll('&quot;', '"'));
    expect(put.headers.get('oc-etag')).toBe(put.headers.get('etag'));
    expect(put.headers.get('oc-fileid')).toBe(row!.props.id!);
    const stale = put.headers.get('etag')!;
    const second = await nc.files('PUT', 'm.txt', { body: 'two', headers: { 'if-match': stale } });
    expect(second.status).toBe(204);
    const refused = await nc.files('PUT', 'm.txt', { body: 'three', headers: { 'if-match': stale } });
    expect(refused.status).toBe(412);
    expect(await (await nc.files('GET', 'm.txt')).text()).toBe('two');
  });
});

describe('Nextcloud clients: folder ETags', () => {
  test('a folder’s ETag and every ancestor’s, the root’s included, move with each change below; on /dav/ too; nothing else moves them', async () => {
    const o = await seed.owner(t);
    const nc = await nextcloudLogin(o);
    await nc.files('MKCOL', 'X');
    await nc.files('MKCOL', 'X/Y');
    await nc.files('MKCOL', 'Other');
    await nc.files('PUT', 'X/Y/f.txt', { body: 'v1' });
    const chain = ['', 'X/', 'X/Y/'];
    const tags = async () => Promise.all(chain.map((p) => nc.etag(p)));
    const dav = async () => propfindRows(await (await nc.propfind('X/Y/', '0')).text())[0]!.props.getetag!;
    let before = await tags();
    let davBefore = await dav();
    expect(davBefore).toBe(before[2]!);
    const otherBefore = await nc.etag('Other/');
    const moved = async (what: string) => {
      const after = await tags();
      for (let i = 0; i < chain.length; i++)
        expect({ what, path: chain[i], tag: after[i] }).not.toEqual({ what, path: chain[i], tag: before[i] });
      const davAfter = await dav();
      expect(davAfter).toBe(after[2]!);
      expect(davAfter).not.toBe(davBefore);
      before = after;
      davBefore = davAfter;
    };
    const fileId = async (name: string) =>
      (await listAll(o.client, `/api/files?parentId=${(await tItem(o, 'X/Y'))!.id}`)).find((i: { name: string }) => i.name === name)
        .id as string;

    await nc.files('PUT', 'X/Y/new.txt', { body: 'n' });
    await moved('upload');
    await nc.files('PUT', 'X/Y/f.txt', { body: 'v2' });
    await moved('replace');
    await o.client.post('/api/files/rename', { id: await fileId('new.txt'), name: 'renamed.txt' });
    await moved('rename');
    await nc.files('MOVE', 'X/Y/renamed.txt', { headers: { destination: `${t.url}/remote.php/webdav/Other/renamed.txt` } });
    await moved('move out');
    await nc.request('MOVE', 'Other/renamed.txt', { headers: { destination: `${t.url}/dav/X/Y/back.txt` } });
    await moved('move in');
    await nc.files('COPY', 'X/Y/back.txt', { headers: { destination: `${t.url}/remote.php/webdav/X/Y/copy.txt` } });
    await moved('copy');
    const trashedId = await fileId('copy.txt');
    await nc.files('DELETE', 'X/Y/copy.txt');
    await moved('trash');
    await o.client.post('/api/files/trash/restore', { ids: [trashedId] });
    await moved('restore');
    const fId = await fileId('f.txt');
    const versions = (await json(await o.client.get(`/api/files/${fId}/versions`))).versions;
    expect((await o.client.post(`/api/files/${fId}/versions/${versions[0].id}/restore`, {})).status).toBe(200);
    await moved('version restored');

    // Reading, starring and listing change nothing a client syncs.
    await nc.files('GET', 'X/Y/f.txt');
    await o.client.post('/api/files/star', { ids: [fId], starred: true });
    await nc.props('X/', '1');
    expect(await tags()).toEqual(before);
    expect(await nc.etag('Other/')).not.toBe(otherBefore);
  });

  test('a member’s change inside a share moves the owner’s folder ETags and the member’s root and Shared with me ETags', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const team = await folder(o.client, 'Team');
    expect((await o.client.post(`/api/files/${team.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const ownerNc = await nextcloudLogin(o);
    const m = await nextcloudLogin(member);
    const before = [await ownerNc.etag(''), await ownerNc.etag('Team/'), await m.etag(''), await m.etag('Shared%20with%20me/')];
    expect((await m.files('PUT', 'Shared%20with%20me/Team/note.txt', { body: 'hi' })).status).toBe(201);
    const after = [await ownerNc.etag(''), await ownerNc.etag('Team/'), await m.etag(''), await m.etag('Shared%20with%20me/')];
    for (let i = 0; i < before.length; i++) expect(after[i]).not.toBe(before[i]!);
    const editorRows = await m.props('Shared%20with%20me/', '1');
    expect(editorRows[1]!.props.permissions).toBe('GCKS');
    // Shared with me has an oc:size as every folder does: the bytes below its shares.
    expect(editorRows.map((r) => r.props.size)).toEqual(['2', '2']);
  });

  test('a member’s role changed moves the member’s root, Shared with me and shared folder ETags, so that a client lists it again; and back', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const team = await folder(o.client, 'Team');
    await upload(o.client, 'plan.txt', 'plan', { parentId: team.id });
    expect((await o.client.post(`/api/files/${team.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const m = await nextcloudLogin(member);
    const tags = async () => [await m.etag(''), await m.etag('Shared%20with%20me/'), await m.etag('Shared%20with%20me/Team/')];
    const asEditor = await tags();
    const role = (r: string) => o.client.send('PATCH', `/api/files/${team.id}/members/${member.id}`, { role: r });
    expect((await role('viewer')).status).toBe(200);
    const asViewer = await tags();
    for (let i = 0; i < asEditor.length; i++) expect(asViewer[i]).not.toBe(asEditor[i]!);
    // The folder's ETag as listed in Shared with me is the one its own PROPFIND answers, and the file's did not change.
    const listed = await m.props('Shared%20with%20me/', '1');
    expect(listed[1]!.props.getetag).toBe(asViewer[2]!);
    expect(listed[1]!.props.permissions).toBe('GS');
    const inside = await m.props('Shared%20with%20me/Team/', '1');
    expect(inside[1]!.props.getetag).toBe(await (await nextcloudLogin(o)).etag('Team/plan.txt'));
    expect((await role('editor')).status).toBe(200);
    expect(await tags()).toEqual(asEditor);
  });
});

/** An item of the account by path, through the API. */
async function tItem(o: seed.SeededLogin, path: string): Promise<{ id: string } | undefined> {
  let parent: string | null = null;
  let found: { id: string } | undefined;
  for (const name of path.split('/')) {
    const page = await listAll(o.client, parent ? `/api/files?parentId=${parent}` : '/api/files');
    found = page.find((i: { name: string }) => i.name === name);
    if (!found) return undefined;
    parent = found.id;
  }
  return found;
}
