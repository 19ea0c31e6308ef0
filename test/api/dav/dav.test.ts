import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { generate } from 'otplib';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { Messages } from '../../../src/errors.ts';
import { DavClient, davLogin } from '../../helpers/dav.ts';
import { heldBody, listAll, SseReader, upload } from '../../helpers/files.ts';
import { parseXml } from '../../../src/lib/xml.ts';
import * as seed from '../../helpers/seed.ts';

let t: TestServer;
let adminLogin: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  adminLogin = await seed.admin(t);
});
afterAll(() => t.stop());

const auditOf = (action: string) => {
  t.server.ctx.services.audit.flush();
  return t.server.ctx.services.audit.list({ action, limit: 1000 });
};

async function enableMfa(login: seed.SeededLogin): Promise<void> {
  const setup = await json(await login.client.post('/api/mfa/setup'));
  const res = await login.client.post('/api/mfa/verify', { code: await generate({ secret: setup.secret }) });
  expect(res.status).toBe(200);
}

describe('WebDAV protocol basics', () => {
  test('OPTIONS answers without credentials with DAV: 1, 2; anything else without them is 401 with a Basic challenge', async () => {
    const res = await fetch(`${t.url}/dav/`, { method: 'OPTIONS' });
    expect(res.status).toBe(200);
    expect(res.headers.get('dav')).toBe('1, 2');
    expect(res.headers.get('allow')).toContain('PROPFIND');
    const anon = await fetch(`${t.url}/dav/`, { method: 'PROPFIND', headers: { depth: '1' } });
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toStartWith('Basic realm=');
    expect((await json(anon)).message).toContain('app password');
  });

  test("OPTIONS on the server's root (Windows and Office ask it whatever folder is mapped) answers MS-Author-Via: DAV", async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const probes: Record<string, string>[] = [{}, { authorization: dav.authorization }];
    for (const headers of probes) {
      const res = await fetch(`${t.url}/`, { method: 'OPTIONS', headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('ms-author-via')).toBe('DAV');
      expect(res.headers.get('dav')).toBe('1, 2');
      expect(res.headers.get('allow')).toBe('OPTIONS, GET, HEAD');
    }
    expect((await fetch(`${t.url}/dav/`, { method: 'OPTIONS' })).headers.get('ms-author-via')).toBe('DAV');
  });

  test('PUT, GET with Range and ETag, PROPFIND, MKCOL and a Unicode name round-trip through the same tree the API shows', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    expect((await dav.request('MKCOL', 'Fotos%20%C3%A9t%C3%A9')).status).toBe(201);
    const put = await dav.put('Fotos%20%C3%A9t%C3%A9/caf%C3%A9.txt', 'hello webdav');
    expect(put.status).toBe(201);
    const etag = put.headers.get('etag')!;
    const [dir] = await listAll(o.client, '/api/files');
    expect(dir.name).toBe('Fotos été');
    const [file] = await listAll(o.client, `/api/files?parentId=${dir.id}`);
    expect(file).toMatchObject({ name: 'café.txt', size: 12 });

    const got = await dav.request('GET', 'Fotos%20%C3%A9t%C3%A9/caf%C3%A9.txt');
    expect(await got.text()).toBe('hello webdav');
    expect(got.headers.get('etag')).toBe(etag);
    const ranged = await dav.request('GET', 'Fotos%20%C3%A9t%C3%A9/caf%C3%A9.txt', { headers: { range: 'bytes=6-' } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe('webdav');
    const cached = await dav.request('GET', 'Fotos%20%C3%A9t%C3%A9/caf%C3%A9.txt', { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    // If-None-Match compares weakly (RFC 9110 13.1.2): a weak tag of the same value, alone or in a list, is a 304 too.
    for (const header of [`W/${etag}`, `"other", W/${etag}`]) {
      const weak = await dav.request('GET', 'Fotos%20%C3%A9t%C3%A9/caf%C3%A9.txt', { headers: { 'if-none-match': header } });
      expect(weak.status).toBe(304);
    }
    // If-Match compares strongly: a weak tag never matches.
    const strong = await dav.request('GET', 'Fotos%20%C3%A9t%C3%A9/caf%C3%A9.txt', { headers: { 'if-match': `W/${etag}` } });
    expect(strong.status).toBe(412);
    const head = await dav.request('HEAD', 'Fotos%20%C3%A9t%C3%A9/caf%C3%A9.txt');
    expect(head.headers.get('content-length')).toBe('12');

    expect(await dav.list('Fotos%20%C3%A9t%C3%A9/')).toEqual(['/dav/Fotos été/', '/dav/Fotos été/café.txt']);
    const props = await (await dav.propfind('Fotos%20%C3%A9t%C3%A9/caf%C3%A9.txt', '0')).text();
    expect(props).toContain('<D:getcontentlength>12</D:getcontentlength>');
    expect(props).toContain(`<D:getetag>${etag.replaceAll('"', '&quot;')}</D:getetag>`);

    // A PUT over an existing file replaces its content; the item keeps its id.
    const replaced = await dav.put('Fotos%20%C3%A9t%C3%A9/caf%C3%A9.txt', 'second version');
    expect(replaced.status).toBe(204);
    expect(replaced.headers.get('etag')).not.toBe(etag);
    const [again] = await listAll(o.client, `/api/files?parentId=${dir.id}`);
    expect(again).toMatchObject({ id: file.id, size: 14 });
  });

  test('GET with Range and If-Range: the range while If-Range names the current ETag, else the whole file (a resumed download never splices old and new)', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const first = (await dav.put('resume.txt', 'hello world')).headers.get('etag')!;
    const ranged = (ifRange: string) => dav.request('GET', 'resume.txt', { headers: { range: 'bytes=6-', 'if-range': ifRange } });
    let res = await ranged(first);
    expect(res.status).toBe(206);
    expect(await res.text()).toBe('world');
    const second = (await dav.put('resume.txt', 'HELLO THERE, WORLD')).headers.get('etag')!;
    // The first ETag, a weak tag (If-Range compares strongly) and a date (a modified time clients set) all get the whole file.
    const lastModified = res.headers.get('last-modified')!;
    for (const stale of [first, `W/${second}`, lastModified]) {
      res = await ranged(stale);
      expect({ stale, status: res.status, range: res.headers.get('content-range') }).toEqual({ stale, status: 200, range: null });
      expect(await res.text()).toBe('HELLO THERE, WORLD');
    }
    res = await ranged(second);
    expect(res.status).toBe(206);
    expect(await res.text()).toBe('THERE, WORLD');
    // A range past the end under a stale If-Range is no 416: the whole file answers it.
    res = await dav.request('GET', 'resume.txt', { headers: { range: 'bytes=500-', 'if-range': first } });
    expect(res.status).toBe(200);
  });

  test('If-Unmodified-Since: a write or GET of a resource modified after the date is 412 and changes nothing; an unreadable date, a new path or an If-Match beside it ignore it', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('dated.txt', 'first', { 'x-oc-mtime': '1700000000' });
    const lastModified = (await dav.request('HEAD', 'dated.txt')).headers.get('last-modified')!;
    const before = new Date(Date.parse(lastModified) - 1000).toUTCString();
    const etag = (await dav.request('HEAD', 'dated.txt')).headers.get('etag')!;
    for (const [label, res] of [
      ['PUT', await dav.put('dated.txt', 'lost update', { 'if-unmodified-since': before })],
      ['DELETE', await dav.request('DELETE', 'dated.txt', { headers: { 'if-unmodified-since': before } })],
      ['GET', await dav.request('GET', 'dated.txt', { headers: { 'if-unmodified-since': before } })],
    ] as const) {
      expect({ label, status: res.status }).toEqual({ label, status: 412 });
      if (label === 'PUT') expect((await json(res)).message).toContain('If-Unmodified-Since');
    }
    expect(await (await dav.request('GET', 'dated.txt')).text()).toBe('first');
    expect((await dav.put('dated.txt', 'second', { 'if-unmodified-since': 'not a date' })).status).toBe(204);
    expect((await dav.put('fresh.txt', 'new', { 'if-unmodified-since': before })).status).toBe(201);
    const now = (await dav.request('HEAD', 'dated.txt')).headers;
    expect((await dav.put('dated.txt', 'third', { 'if-unmodified-since': now.get('last-modified')! })).status).toBe(204);
    const current = (await dav.request('HEAD', 'dated.txt')).headers.get('etag')!;
    expect(current).not.toBe(etag);
    expect((await dav.put('dated.txt', 'fourth', { 'if-match': current, 'if-unmodified-since': before })).status).toBe(204);
  });

  test('PROPFIND Depth: infinity is 403 with propfind-finite-depth; a malformed body is 400', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const res = await dav.propfind('', 'infinity');
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<D:propfind-finite-depth/>');
    expect((await dav.propfind('', '1', '<D:propfind xmlns:D="DAV:"><D:prop>')).status).toBe(400);
    expect((await dav.propfind('', '1', '<!DOCTYPE x [<!ENTITY a "b">]><x/>')).status).toBe(400);
  });

  test('a dead property or lock owner with xml:lang inside comes back with it, in an answer strict parsers (expat) accept', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('lang.txt', 'x');
    const value = '<Z:t xml:lang="fr">Bonjour <Z:b xml:space="preserve"> à </Z:b>tous</Z:t>';
    const patch = await dav.request('PROPPATCH', 'lang.txt', {
      body: `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:title>${value}</Z:title></D:prop></D:set></D:propertyupdate>`,
    });
    expect(patch.status).toBe(207);
    const owner = '<D:owner><D:href xml:lang="en">mailto:me@example.com</D:href></D:owner>';
    const lockBody = `<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype>${owner}</D:lockinfo>`;
    expect((await dav.request('LOCK', 'lang.txt', { body: lockBody })).status).toBe(200);
    for (const body of [
      undefined,
      '<D:propfind xmlns:D="DAV:"><D:prop><Z:title xmlns:Z="urn:z"/><D:lockdiscovery/></D:prop></D:propfind>',
    ]) {
      const answer = await (await dav.propfind('lang.txt', '0', body)).text();
      // Binding any prefix but xml to the XML namespace makes the whole answer unreadable to expat (davfs2, cadaver).
      expect(() => parseXml(answer)).not.toThrow();
      expect(answer).toContain('<t xmlns="urn:z" xml:lang="fr">Bonjour <b xml:space="preserve"> à </b>tous</t>');
      expect(answer).toContain('<href xmlns="DAV:" xml:lang="en">mailto:me@example.com</href>');
    }
    // A body binding a prefix to the XML namespace is refused as expat refuses it.
    const bound = await dav.request('PROPPATCH', 'lang.txt', {
      body: '<D:propertyupdate xmlns:D="DAV:" xmlns:l="http://www.w3.org/XML/1998/namespace"><D:set><D:prop><l:lang/></D:prop></D:set></D:propertyupdate>',
    });
    expect(bound.status).toBe(400);
    expect((await json(bound)).message).toContain('reserved namespace or prefix in xmlns:l');
  });

  test("a dead property's xml:lang, on its element or in scope above it, comes back with it, through COPY too (RFC 4918 §4.3)", async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('langs.txt', 'x');
    const props = '<Z:author xml:lang="en">Ann</Z:author><Z:titel>Hallo</Z:titel><Z:plain xml:lang="">p</Z:plain>';
    const patch = await dav.request('PROPPATCH', 'langs.txt', {
      body: `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set xml:lang="de"><D:prop>${props}</D:prop></D:set></D:propertyupdate>`,
    });
    expect(patch.status).toBe(207);
    expect((await dav.request('COPY', 'langs.txt', { headers: { destination: `${t.url}/dav/langs-copy.txt` } })).status).toBe(201);
    const named = '<D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:prop><Z:author/><Z:titel/><Z:plain/></D:prop></D:propfind>';
    for (const [path, body] of [
      ['langs.txt', undefined],
      ['langs.txt', named],
      ['langs-copy.txt', named],
    ] as const) {
      const answer = await (await dav.propfind(path, '0', body)).text();
      expect(() => parseXml(answer)).not.toThrow();
      expect(answer).toContain('<x:author xmlns:x="urn:z" xml:lang="en">Ann</x:author>');
      expect(answer).toContain('<x:titel xmlns:x="urn:z" xml:lang="de">Hallo</x:titel>');
      expect(answer).toContain('<x:plain xmlns:x="urn:z">p</x:plain>');
    }
    // Set again without one, the property has none.
    await dav.request('PROPPATCH', 'langs.txt', {
      body: '<D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:author>Ann</Z:author></D:prop></D:set></D:propertyupdate>',
    });
    expect(await (await dav.propfind('langs.txt', '0', named)).text()).toContain('<x:author xmlns:x="urn:z">Ann</x:author>');
  });

  test('dead properties an earlier version stored with the XML namespace bound to another prefix are rewritten once at start (migration 0045) and come back as strict parsers accept them', async () => {
    const s = await startTestServer({ startWorker: false });
    try {
      await seed.admin(s);
      const o = await seed.owner(s);
      await (await davLogin(s, o)).put('former.txt', 'x');
      const [file] = (await listAll(o.client, '/api/files')).filter((i) => i.name === 'former.txt');
      const XML = 'http://www.w3.org/XML/1998/namespace';
      // Exactly as serializeNodes wrote values before the XML namespace kept its own prefix; the last one is current.
      const former = [
        ['title', `<t xmlns="urn:z" xmlns:a0="${XML}" a0:lang="fr">Bonjour <b xmlns:a0="${XML}" a0:space="preserve"> à </b>tous</t>`],
        ['note', `<note xmlns="${XML}"><i xmlns="">n</i></note>`],
        ['kept', '<k xml:lang="de">Hallo</k>'],
      ];
      // The database as an earlier Coffer left it: these values, and migration 0045 not applied.
      const sqlite = s.server.ctx.db.$client;
      for (const [name, value] of former)
        sqlite.query('INSERT INTO dav_properties (item_id, ns, name, value) VALUES (?, ?, ?, ?)').run(file!.id, 'urn:z', name!, value!);
      sqlite.run("DELETE FROM coffer_migrations WHERE tag = '0045_dav_property_xml_prefix'");
      await s.restart();

      const stored = s.server.ctx.db.$client
        .query<{ name: string; value: string }, []>('SELECT name, value FROM dav_properties ORDER BY name')
        .all();
      expect(stored).toEqual([
        { name: 'kept', value: '<k xml:lang="de">Hallo</k>' },
        { name: 'note', value: '<xml:note><i>n</i></xml:note>' },
        { name: 'title', value: '<t xmlns="urn:z" xml:lang="fr">Bonjour <b xml:space="preserve"> à </b>tous</t>' },
      ]);
      const dav = await davLogin(s, { ...o, client: await seed.login(s, o.email) });
      for (const body of [undefined, '<D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:prop><Z:title/><Z:note/></D:prop></D:propfind>']) {
        const answer = await (await dav.propfind('former.txt', '0', body)).text();
        expect(() => parseXml(answer)).not.toThrow();
        expect(answer).toContain(
          '<x:title xmlns:x="urn:z"><t xmlns="urn:z" xml:lang="fr">Bonjour <b xml:space="preserve"> à </b>tous</t></x:title>',
        );
        expect(answer).toContain('<x:note xmlns:x="urn:z"><xml:note><i>n</i></xml:note></x:note>');
      }
    } finally {
      await s.stop();
    }
  });

  test('allprop with include answers an included property the resource lacks in a 404 propstat, as prop does (RFC 4918 §9.1)', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('include.txt', 'x');
    const body =
      '<D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:allprop/><D:include><D:quota-used-bytes/><Z:nothing/></D:include></D:propfind>';
    const answer = await (await dav.propfind('include.txt', '0', body)).text();
    const ok = /<D:propstat><D:prop>(.*?)<\/D:prop><D:status>HTTP\/1.1 200 OK/.exec(answer)?.[1] ?? '';
    expect(ok).toContain('<D:displayname>include.txt</D:displayname>');
    expect(ok).toContain('<D:quota-used-bytes>');
    expect(ok).not.toContain('nothing');
    expect(answer).toContain(
      '<D:propstat><D:prop><x:nothing xmlns:x="urn:z"/></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>',
    );
  });

  test('quota properties (RFC 4331) report the account usage and what is left', async () => {
    const o = await seed.owner(t);
    t.server.ctx.services.users.setStorageLimit(o.id, 1000);
    const dav = await davLogin(t, o);
    await dav.put('a.bin', 'x'.repeat(100));
    const body = '<D:propfind xmlns:D="DAV:"><D:prop><D:quota-used-bytes/><D:quota-available-bytes/></D:prop></D:propfind>';
    const text = await (await dav.propfind('', '0', body)).text();
    expect(text).toContain('<D:quota-used-bytes>100</D:quota-used-bytes>');
    expect(text).toContain('<D:quota-available-bytes>900</D:quota-available-bytes>');
  });

  test('DELETE moves to the trash, restorable through the API; never a permanent delete', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.request('MKCOL', 'keep');
    await dav.put('keep/a.txt', 'aaa');
    expect((await dav.request('DELETE', 'keep/')).status).toBe(204);
    expect((await dav.propfind('keep/', '0')).status).toBe(404);
    const trash = await listAll(o.client, '/api/files/trash');
    expect(trash.map((i: { name: string }) => i.name)).toEqual(['keep']);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(3);
  });

  test('names the API refuses are 400 with the reason; a missing parent is 409; MKCOL over an item is 405', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const bad = await dav.put('a%3Ab.txt', 'x');
    expect(bad.status).toBe(400);
    expect((await json(bad)).message).toContain('must not contain');
    expect((await dav.put('missing/a.txt', 'x')).status).toBe(409);
    await dav.request('MKCOL', 'dir');
    expect((await dav.request('MKCOL', 'dir')).status).toBe(405);
    expect((await dav.request('MKCOL', 'dir2', { body: 'x' })).status).toBe(415);
  });

  test('COPY and MOVE honour Overwrite, refuse a folder into itself and another host', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.request('MKCOL', 'src');
    await dav.put('src/one.txt', '1');
    const dest = (p: string) => ({ destination: `${t.url}/dav/${p}` });
    expect((await dav.request('COPY', 'src/', { headers: dest('copy/') })).status).toBe(201);
    expect(await dav.list('copy/')).toEqual(['/dav/copy/', '/dav/copy/one.txt']);
    expect((await dav.request('COPY', 'src/', { headers: { ...dest('copy/'), overwrite: 'F' } })).status).toBe(412);
    expect((await dav.request('MOVE', 'src/', { headers: dest('src/inner/') })).status).toBe(403);
    expect((await dav.request('MOVE', 'src/', { headers: { destination: 'http://elsewhere.example/dav/x' } })).status).toBe(502);
    expect((await dav.request('MOVE', 'copy/one.txt', { headers: dest('src/one.txt') })).status).toBe(204);
    expect(await dav.list('src/')).toEqual(['/dav/src/', '/dav/src/one.txt']);
    expect(await dav.list('copy/')).toEqual(['/dav/copy/']);
  });

  test('COPY or MOVE with Overwrite onto a folder that then fails (over the storage limit, the source gone) leaves the folder as it was', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const dest = (p: string) => ({ destination: `${t.url}/dav/${p}` });
    await dav.request('MKCOL', 'big');
    await dav.put('big/blob.bin', randomBytes(60_000));
    await dav.request('MKCOL', 'kept');
    await dav.put('kept/mine.txt', 'mine');
    expect((await adminLogin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit: 100_000 })).status).toBe(200);
    expect((await dav.request('COPY', 'big/', { headers: dest('kept/') })).status).toBe(507);
    expect(await dav.list('kept/')).toEqual(['/dav/kept/', '/dav/kept/mine.txt']);
    expect(await listAll(o.client, '/api/files/trash')).toEqual([]);
    // The source deleted for good while the destination was being replaced: 404, and the destination stays.
    const service = t.server.ctx.services.dav;
    const transfer = service.transfer.bind(service);
    service.transfer = async (principal, op, source, to, opts) => {
      t.server.ctx.db.$client.query('DELETE FROM items WHERE id = ?').run(source.item.id);
      return transfer(principal, op, source, to, opts);
    };
    try {
      expect((await dav.request('MOVE', 'big/blob.bin', { headers: dest('kept/') })).status).toBe(404);
    } finally {
      service.transfer = transfer;
    }
    expect(await dav.list('kept/')).toEqual(['/dav/kept/', '/dav/kept/mine.txt']);
    expect(await listAll(o.client, '/api/files/trash')).toEqual([]);
  });

  test('COPY or MOVE with Overwrite onto a folder that holds the source is 403 saying so; nothing goes to the trash', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const dest = (p: string) => ({ destination: `${t.url}/dav/${p}`, overwrite: 'T' });
    await dav.request('MKCOL', 'outer');
    await dav.request('MKCOL', 'outer/inner');
    await dav.put('outer/inner/deep.txt', 'deep');
    for (const [method, from, onto] of [
      ['MOVE', 'outer/inner/', 'outer/'],
      ['COPY', 'outer/inner/', 'outer/'],
      ['MOVE', 'outer/inner/deep.txt', 'outer/'],
      ['COPY', 'outer/inner/deep.txt', 'outer/inner/'],
    ] as const) {
      const res = await dav.request(method, from, { headers: dest(onto) });
      expect({ method, from, status: res.status }).toEqual({ method, from, status: 403 });
      expect((await json(res)).message).toBe(`The destination is a folder holding the source: it cannot be replaced by what is inside it`);
    }
    expect(await dav.list('outer/inner/')).toEqual(['/dav/outer/inner/', '/dav/outer/inner/deep.txt']);
    expect(await listAll(o.client, '/api/files/trash')).toEqual([]);
  });

  test('a PUT whose account is disabled, or deleted with its deletion job run, while the bytes arrive is 404 and stores nothing', async () => {
    for (const how of ['disable', 'delete'] as const) {
      const o = await seed.owner(t);
      const sub = await seed.subUser(t, o, ['files.upload']);
      const dav = await davLogin(t, sub);
      const { body, release: more } = heldBody();
      const put = dav.put('late.bin', body, { 'content-length': '2000' });
      await new Promise((r) => setTimeout(r, 50));
      if (how === 'disable') expect((await adminLogin.client.send('PATCH', `/api/user/${o.id}`, { disabled: true })).status).toBe(200);
      else {
        expect((await adminLogin.client.delete(`/api/user/${o.id}`)).status).toBe(202);
        await t.server.worker.drain();
      }
      more();
      const res = await put;
      expect(res.status, how).toBe(404);
      const rows = t.server.ctx.db.$client
        .query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM items WHERE account_id = ?')
        .get(o.id)!.n;
      expect(rows, how).toBe(0);
    }
  });

  test('every change publishes the API file events: a file dropped over WebDAV appears on the event stream', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const res = await o.client.get('/api/files/events');
    const reader = new SseReader(res);
    expect(await reader.nextData()).toEqual({ type: 'connected' });
    await dav.put('dropped.txt', 'hi');
    const event = await reader.nextData();
    expect(event).toMatchObject({ type: 'file.uploaded', data: { name: 'dropped.txt', userId: o.id, size: 2 } });
    await dav.request('MOVE', 'dropped.txt', { headers: { destination: `${t.url}/dav/renamed.txt` } });
    expect(await reader.nextData()).toMatchObject({ type: 'file.renamed', data: { name: 'renamed.txt', oldName: 'dropped.txt' } });
    await dav.request('DELETE', 'renamed.txt');
    expect(await reader.nextData()).toMatchObject({ type: 'file.deleted', data: { name: 'renamed.txt' } });
    await reader.close();
    const uploads = auditOf('file.upload').filter((e) => e.details?.name === 'dropped.txt');
    expect(uploads).toHaveLength(1);
  });

  test('a PUT hands its body on a chunk at a time, each freed once the next is asked for (as uploads and tus read theirs)', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const service = t.server.ctx.services.dav;
    const put = service.put.bind(service);
    const seen: Uint8Array[] = [];
    let heldPastNext = 0;
    service.put = (principal, path, input) => {
      async function* watched(): AsyncGenerator<Uint8Array> {
        for await (const chunk of input.body) {
          // The chunk before this one was the request's own buffer: by now it has been handed back.
          if (seen.length > 0 && seen.at(-1)!.byteLength > 0) heldPastNext++;
          seen.push(chunk);
          yield chunk;
        }
      }
      return put(principal, path, { ...input, body: watched() });
    };
    try {
      const body = randomBytes(8 * 1024 * 1024);
      expect((await dav.put('chunks.bin', body)).status).toBe(201);
      expect(seen.length).toBeGreaterThan(4);
      expect(heldPastNext).toBe(0);
      expect(Buffer.from(await (await dav.request('GET', 'chunks.bin')).arrayBuffer()).equals(body)).toBe(true);
    } finally {
      service.put = put;
    }
  });

  test('a PUT over the storage limit is 507 Insufficient Storage; nothing is stored and usage is unchanged', async () => {
    const o = await seed.owner(t);
    t.server.ctx.services.users.setStorageLimit(o.id, 1000);
    const dav = await davLogin(t, o);
    expect((await dav.put('small.bin', new Uint8Array(600))).status).toBe(201);
    const res = await dav.put('big.bin', new Uint8Array(600));
    expect(res.status).toBe(507);
    expect((await json(res)).message).toContain('Storage limit exceeded');
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(600);
    expect(await dav.list('')).toEqual(['/dav/', '/dav/small.bin']);
    // Replacing content counts only the growth.
    expect((await dav.put('small.bin', new Uint8Array(900))).status).toBe(204);
    expect((await dav.put('small.bin', new Uint8Array(1100))).status).toBe(507);
  });
});

describe('locks', () => {
  test('an exclusive lock refuses writes without its token (423), accepts them with it, and conflicts with another lock', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const other = await davLogin(t, await seed.subUser(t, o, ['files.upload', 'files.edit']));
    await dav.put('doc.txt', 'v1');
    const lockBody =
      '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>me</D:owner></D:lockinfo>';
    const locked = await dav.request('LOCK', 'doc.txt', { body: lockBody, headers: { timeout: 'Second-60' } });
    expect(locked.status).toBe(200);
    const token = locked.headers.get('lock-token')!.slice(1, -1);
    expect(await locked.text()).toContain(token);
    expect((await dav.put('doc.txt', 'v2')).status).toBe(423);
    expect((await dav.request('DELETE', 'doc.txt')).status).toBe(423);
    expect((await dav.request('LOCK', 'doc.txt', { body: lockBody })).status).toBe(423);
    expect((await dav.put('doc.txt', 'v2', { if: '(<urn:uuid:00000000-0000-0000-0000-000000000000>)' })).status).toBe(412);
    expect((await dav.put('doc.txt', 'v2', { if: `(<${token}>)` })).status).toBe(204);
    // The token proves the lock only for the login that took it.
    expect((await other.put('doc.txt', 'v3', { if: `(<${token}>)` })).status).toBe(423);
    expect((await dav.propfind('doc.txt', '0').then((r) => r.text())).includes(token)).toBe(true);
    expect((await dav.request('UNLOCK', 'doc.txt', { headers: { 'lock-token': '<urn:uuid:nope>' } })).status).toBe(409);
    expect((await dav.request('UNLOCK', 'doc.txt', { headers: { 'lock-token': `<${token}>` } })).status).toBe(204);
    expect((await dav.put('doc.txt', 'v4')).status).toBe(204);
  });

  test('a depth-infinity lock on a folder covers its members; LOCK of an unmapped path makes an empty file (201)', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.request('MKCOL', 'dir');
    const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    const res = await dav.request('LOCK', 'dir/', { body: lockBody });
    const token = res.headers.get('lock-token')!.slice(1, -1);
    expect((await dav.put('dir/new.txt', 'x')).status).toBe(423);
    expect((await dav.put('dir/new.txt', 'x', { if: `(<${token}>)` })).status).toBe(201);
    // Shared locks share.
    expect((await dav.request('LOCK', 'dir/', { body: lockBody })).status).toBe(200);
    const unmapped = await dav.request('LOCK', 'fresh.txt', { body: lockBody.replace('shared', 'exclusive') });
    expect(unmapped.status).toBe(201);
    const [file] = (await listAll(o.client, '/api/files')).filter((i: { name: string }) => i.name === 'fresh.txt');
    expect(file.size).toBe(0);
  });

  test("a depth-0 lock on a folder guards its members' names: adding, deleting or moving one out or in needs its token (423), replacing a file's content does not", async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const other = await davLogin(t, o, 'second device');
    await dav.request('MKCOL', 'guarded');
    await dav.request('MKCOL', 'elsewhere');
    await dav.put('guarded/in.txt', 'in');
    await dav.put('elsewhere/out.txt', 'out');
    const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    const taken = await other.request('LOCK', 'guarded/', { body: lockBody, headers: { depth: '0' } });
    expect(taken.status).toBe(200);
    const token = taken.headers.get('lock-token')!.slice(1, -1);
    const dest = (p: string) => ({ destination: `${t.url}/dav/${p}` });
    const refused = {
      'PUT new': await dav.put('guarded/new.txt', 'x'),
      MKCOL: await dav.request('MKCOL', 'guarded/sub'),
      DELETE: await dav.request('DELETE', 'guarded/in.txt'),
      'MOVE out': await dav.request('MOVE', 'guarded/in.txt', { headers: dest('elsewhere/in.txt') }),
      'MOVE in': await dav.request('MOVE', 'elsewhere/out.txt', { headers: dest('guarded/out.txt') }),
      'COPY in': await dav.request('COPY', 'elsewhere/out.txt', { headers: dest('guarded/out.txt') }),
      'LOCK unmapped': await dav.request('LOCK', 'guarded/fresh.txt', { body: lockBody }),
    };
    expect(Object.fromEntries(Object.entries(refused).map(([k, r]) => [k, r.status]))).toEqual(
      Object.fromEntries(Object.keys(refused).map((k) => [k, 423])),
    );
    expect((await dav.put('guarded/in.txt', 'new content')).status).toBe(204);
    const proof = { if: `<${t.url}/dav/guarded/> (<${token}>)` };
    expect((await other.put('guarded/new.txt', 'x', proof)).status).toBe(201);
    expect((await other.request('DELETE', 'guarded/new.txt', { headers: proof })).status).toBe(204);
    expect((await other.request('UNLOCK', 'guarded/', { headers: { 'lock-token': `<${token}>` } })).status).toBe(204);
    expect(await dav.list('guarded/')).toEqual(['/dav/guarded/', '/dav/guarded/in.txt']);
    expect(await dav.list('elsewhere/')).toEqual(['/dav/elsewhere/', '/dav/elsewhere/out.txt']);
  });
});

describe('app passwords', () => {
  test('lifecycle: shown once, listed without the secret with last use and address, stored hashed, revoked at the next request', async () => {
    const o = await seed.owner(t);
    const created = await o.client.post('/api/user/app-passwords', { name: 'Laptop Finder' });
    expect(created.status).toBe(201);
    const body = await json(created);
    expect(body).toEqual({
      id: expect.any(String),
      name: 'Laptop Finder',
      password: expect.stringMatching(/^[a-z2-9]{5}(-[a-z2-9]{5}){4}$/),
      createdAt: expect.any(String),
      lastUsedAt: null,
      lastIp: null,
    });
    const dav = new DavClient(t.url, o.email, body.password);
    expect((await dav.propfind('', '0')).status).toBe(207);
    const listed = await json(await o.client.get('/api/user/app-passwords'));
    expect(listed.appPasswords).toEqual([
      { id: body.id, name: 'Laptop Finder', createdAt: body.createdAt, lastUsedAt: expect.any(String), lastIp: '127.0.0.1' },
    ]);
    expect(JSON.stringify(listed)).not.toContain(body.password);
    const stored = t.server.ctx.db.$client.query<{ secret_hash: string }, []>('SELECT secret_hash FROM app_passwords').all();
    expect(stored.map((r) => r.secret_hash).join()).not.toContain(body.password);
    expect(auditOf('app_password.create').some((e) => e.targetId === body.id)).toBe(true);

    // Usable only for WebDAV: not as an API token.
    expect((await fetch(`${t.url}/api/profile`, { headers: { authorization: `Bearer ${body.password}` } })).status).toBe(401);
    expect((await fetch(`${t.url}/api/profile`, { headers: { authorization: dav.authorization } })).status).toBe(401);

    expect((await o.client.delete(`/api/user/app-passwords/${body.id}`)).status).toBe(200);
    expect((await dav.propfind('', '0')).status).toBe(401);
    expect((await o.client.delete(`/api/user/app-passwords/${body.id}`)).status).toBe(404);
  });

  test("another login cannot list or revoke my app passwords (404), and a password works only with its own login's email", async () => {
    const o = await seed.owner(t);
    const stranger = await seed.owner(t);
    const dav = await davLogin(t, o);
    expect((await stranger.client.delete(`/api/user/app-passwords/${dav.id}`)).status).toBe(404);
    expect((await json(await stranger.client.get('/api/user/app-passwords'))).appPasswords).toEqual([]);
    expect((await new DavClient(t.url, stranger.email, dav.password).propfind('', '0')).status).toBe(401);
    expect((await dav.propfind('', '0')).status).toBe(207);
  });

  test('failures are audited and rate-limited like sign-in per address and email (429 after 25)', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const statuses: number[] = [];
    // Each a new guess: the same wrong secret again is not counted twice (test/api/accounts/signin-limits.test.ts).
    for (let i = 0; i < 26; i++) statuses.push((await new DavClient(t.url, o.email, `not-the-password-${i}`).propfind('', '0')).status);
    // The same counter as sign-in: the seed's own sign-in and the app password's making (its password asked again) were the first two of the 25.
    expect(statuses).toEqual([...Array(23).fill(401), 429, 429, 429]);
    const failures = auditOf('auth.sign_in').filter((e) => e.status === 'failure' && e.email === o.email);
    expect(failures.length).toBe(23);
    expect(failures[0]!.details).toEqual({ reason: 'invalid_credentials', via: 'webdav' });
    // Even the right password waits until the window ends.
    expect((await dav.propfind('', '0')).status).toBe(429);
    t.server.ctx.services.audit.flush();
  });

  test('the account password works for WebDAV only when the admin allows it and the login has no MFA; app passwords work with MFA', async () => {
    const o = await seed.owner(t);
    const withPassword = new DavClient(t.url, o.email, o.password);
    expect((await withPassword.propfind('', '0')).status).toBe(401);
    expect((await adminLogin.client.put('/api/user/webdav-account-password-config', { enabled: true })).status).toBe(200);
    try {
      expect((await withPassword.propfind('', '0')).status).toBe(207);
      await enableMfa(o);
      const refused = await withPassword.propfind('', '0');
      expect(refused.status).toBe(401);
      expect((await json(refused)).message).toBe('Wrong email or app password. Make an app password in Settings → App passwords.');
      const dav = await davLogin(t, o);
      expect((await dav.propfind('', '0')).status).toBe(207);
    } finally {
      await adminLogin.client.put('/api/user/webdav-account-password-config', { enabled: false });
    }
    expect((await o.client.put('/api/user/webdav-account-password-config', { enabled: true })).status).toBe(403);
  });

  test('requests confirmed together below the limit of 50 end with at most 50 app passwords: the rest get 409', async () => {
    const o = await seed.owner(t);
    // A password never checked before (test/setup.ts answers known checks from memory): a real argon2 check, an await
    // the other requests pass their count during.
    const password = 'a password checked for real';
    const hash = await Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: 19456, timeCost: 4 });
    t.server.ctx.db.$client.query('UPDATE users SET password_hash = ? WHERE id = ?').run(hash, o.id);
    for (let i = 0; i < 47; i++) {
      const row = { id: `seeded-${o.id}-${i}`, userId: o.id, name: `Seeded ${i}`, secretHash: `${o.id}-${i}` };
      t.server.ctx.repos.appPasswords.insert({ ...row, createdAt: Date.now(), lastUsedAt: null, lastIp: null }, 50);
    }
    const results = await Promise.all(
      Array.from({ length: 5 }, () => o.client.post('/api/user/app-passwords', { name: 'Racing', password })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 409, 409]);
    for (const r of results.filter((r) => r.status === 409))
      expect((await json(r)).message).toBe('You have 50 app passwords; revoke one you no longer use first');
    expect(t.server.ctx.repos.appPasswords.count(o.id)).toBe(50);
  });

  test('a sub-user deleted by its owner while it makes an app password: 404 or 401 saying why, never a 500; nothing is left behind', async () => {
    const owner = await seed.owner(t);
    for (let i = 0; i < 6; i++) {
      const sub = await seed.subUser(t, owner, ['files.download']);
      // A password never checked before, so its check is a real argon2 one (test/setup.ts answers known ones from memory).
      const password = `a password checked for real ${i}`;
      const hash = await Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: 19456, timeCost: 4 });
      t.server.ctx.db.$client.query('UPDATE users SET password_hash = ? WHERE id = ?').run(hash, sub.id);
      // The password asked again, and the owner's delete, sent together: the delete lands during or after the check.
      const [added, deleted] = await Promise.all([
        sub.client.post('/api/user/app-passwords', { name: 'Racing', password }),
        owner.client.delete(`/api/user/sub-users/${sub.id}`),
      ]);
      expect(deleted.status).toBe(200);
      expect([201, 401, 404]).toContain(added.status);
      if (added.status === 404) expect((await json(added)).message).toBe(Messages.loginGone);
      expect(t.server.ctx.repos.appPasswords.list(sub.id)).toEqual([]);
    }
  });

  test('password change and logout-all keep app passwords unless asked to revoke them', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    expect((await o.client.post('/api/logout-all', {})).status).toBe(200);
    expect((await dav.propfind('', '0')).status).toBe(207);
    const again = await seed.login(t, o.email);
    expect(
      (
        await again.post('/api/change-password', {
          oldPassword: o.password,
          newPassword: 'another long password',
          revokeAppPasswords: true,
        })
      ).status,
    ).toBe(200);
    expect((await dav.propfind('', '0')).status).toBe(401);
    const third = await seed.login(t, o.email, 'another long password');
    const dav2 = await davLogin(t, { ...o, client: third, password: 'another long password' });
    expect((await third.post('/api/logout-all', { revokeAppPasswords: true })).status).toBe(200);
    expect((await dav2.propfind('', '0')).status).toBe(401);
  });
});

describe('accounts and permissions over WebDAV', () => {
  test("another account's items are unreachable: its paths are 404 and its tree never shows", async () => {
    const a = await seed.owner(t);
    const b = await seed.owner(t);
    const davA = await davLogin(t, a);
    const davB = await davLogin(t, b);
    await davA.request('MKCOL', 'private');
    await davA.put('private/secret.txt', 'secret');
    expect(await davB.list('')).toEqual(['/dav/']);
    for (const method of ['GET', 'PROPFIND', 'DELETE', 'PROPPATCH']) {
      expect((await davB.request(method, 'private/secret.txt', { headers: { depth: '0' } })).status).toBeOneOf([400, 404]);
    }
    expect((await davB.request('MOVE', 'private/secret.txt', { headers: { destination: `${t.url}/dav/mine.txt` } })).status).toBe(404);
    expect((await davB.request('COPY', 'private/', { headers: { destination: `${t.url}/dav/mine/` } })).status).toBe(404);
    expect(await (await davA.request('GET', 'private/secret.txt')).text()).toBe('secret');
  });

  test("a sub-user's /dav/ is its owner's tree, limited by its permissions as the API limits it (403)", async () => {
    const o = await seed.owner(t);
    const ownerDav = await davLogin(t, o);
    await ownerDav.request('MKCOL', 'shared');
    await ownerDav.put('shared/a.txt', 'owner file');
    const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';

    const reader = await seed.subUser(t, o, []);
    const r = await davLogin(t, reader);
    expect(await r.list('shared/')).toEqual(['/dav/shared/', '/dav/shared/a.txt']);
    const dest = { destination: `${t.url}/dav/shared/b.txt` };
    const denied: Array<[string, Response]> = [
      ['GET', await r.request('GET', 'shared/a.txt')],
      ['PUT', await r.put('shared/new.txt', 'x')],
      ['PUT over', await r.put('shared/a.txt', 'x')],
      ['MKCOL', await r.request('MKCOL', 'shared/sub')],
      ['COPY', await r.request('COPY', 'shared/a.txt', { headers: dest })],
      ['MOVE', await r.request('MOVE', 'shared/a.txt', { headers: dest })],
      ['DELETE', await r.request('DELETE', 'shared/a.txt')],
      ['LOCK', await r.request('LOCK', 'shared/a.txt', { body: lockBody })],
      [
        'PROPPATCH',
        await r.request('PROPPATCH', 'shared/a.txt', {
          body: '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x:a xmlns:x="urn:x">1</x:a></D:prop></D:set></D:propertyupdate>',
        }),
      ],
    ];
    expect(denied.map(([m, res]) => `${m} ${res.status}`)).toEqual(denied.map(([m]) => `${m} 403`));
    expect((await json(denied[1]![1])).message).toContain('Upload & create');

    const uploader = await seed.subUser(t, o, ['files.upload', 'files.download']);
    const u = await davLogin(t, uploader);
    expect((await u.put('shared/from-sub.txt', 'sub')).status).toBe(201);
    expect((await u.request('COPY', 'shared/a.txt', { headers: dest })).status).toBe(201);
    expect(await (await u.request('GET', 'shared/a.txt')).text()).toBe('owner file');
    expect((await u.request('DELETE', 'shared/from-sub.txt')).status).toBe(403);
    expect((await u.put('shared/a.txt', 'replace')).status).toBe(403);
    expect(await ownerDav.list('shared/')).toEqual(['/dav/shared/', '/dav/shared/a.txt', '/dav/shared/b.txt', '/dav/shared/from-sub.txt']);

    const deniedAudit = auditOf('access.denied').filter((e) => e.loginId === reader.id);
    expect(deniedAudit.length).toBeGreaterThan(0);
  });
});

describe('a Destination with an unencoded # or ?', () => {
  test('is 400 and changes nothing: cut at the # or ?, a MOVE or COPY replaced the item of the shorter name', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.request('MKCOL', 'Report/');
    await dav.put('Report/inside.txt', 'kept');
    await dav.put('draft.txt', 'draft');
    for (const [method, destination] of [
      ['MOVE', `${t.url}/dav/Report#2.txt`],
      ['COPY', `${t.url}/dav/Report?.txt`],
      ['MOVE', '/dav/Report#'],
    ] as const) {
      const res = await dav.request(method, 'draft.txt', { headers: { Destination: destination } });
      expect(res.status).toBe(400);
      expect((await json(res)).message).toBe(
        'The Destination header must not contain a query (?) or a fragment (#); a # in a name is sent as %23',
      );
    }
    expect(await (await dav.request('GET', 'Report/inside.txt')).text()).toBe('kept');
    expect(await (await dav.request('GET', 'draft.txt')).text()).toBe('draft');
    const encoded = await dav.request('MOVE', 'draft.txt', { headers: { Destination: `${t.url}/dav/Report%232.txt` } });
    expect(encoded.status).toBe(201);
    expect(await (await dav.request('GET', 'Report%232.txt')).text()).toBe('draft');
  });
});

describe('a COPY of a folder that fails part way', () => {
  test('leaves no half-copied folder: an upload filling the storage limit meanwhile is 507 and the destination stays free', async () => {
    const o = await seed.owner(t);
    t.server.ctx.services.users.setStorageLimit(o.id, 1024 * 1024);
    const dav = await davLogin(t, o);
    await dav.request('MKCOL', 'Src/');
    for (const name of ['a', 'b', 'c']) expect((await dav.put(`Src/${name}.bin`, 'x'.repeat(100_000))).status).toBe(201);
    const storage = t.server.ctx.storage;
    const realCopy = storage.copy.bind(storage);
    let copies = 0;
    // The second file's bytes are copied after another device's upload took the room left.
    storage.copy = async (...args: Parameters<typeof realCopy>) => {
      if (++copies === 2) await upload(o.client, 'filler.bin', 'f'.repeat(600_000));
      return realCopy(...args);
    };
    try {
      const res = await dav.request('COPY', 'Src/', { headers: { Destination: `${t.url}/dav/Dest/` } });
      expect(res.status).toBe(507);
    } finally {
      storage.copy = realCopy;
    }
    expect((await dav.propfind('Dest/', '0')).status).toBe(404);
    expect((await dav.list('')).sort()).toEqual(['/dav/', '/dav/Src/', '/dav/filler.bin']);
    // With room again, the same COPY succeeds whole.
    t.server.ctx.services.users.setStorageLimit(o.id, null);
    expect((await dav.request('COPY', 'Src/', { headers: { Destination: `${t.url}/dav/Dest/` } })).status).toBe(201);
    expect((await dav.list('Dest/')).length).toBe(4);
  });
});
