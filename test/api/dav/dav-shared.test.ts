import { describe, expect, test } from 'bun:test';
import { runCli } from '../../helpers/cli.ts';
import { json } from '../../helpers/client.ts';
import { newGroup } from '../../helpers/groups.ts';
import { davLogin } from '../../helpers/dav.ts';
import { rawRequest } from '../../helpers/raw-http.ts';
import { downloaded, folder, listAll, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';

let t: TestServer;
let admin: seed.SeededLogin;

serverWithAdmin((s) => ({ t, admin } = s));

const SHARED = 'Shared%20with%20me';

async function share(owner: seed.SeededLogin, itemId: string, email: string, role: 'viewer' | 'editor') {
  const res = await owner.client.post(`/api/files/${itemId}/members`, { email, role });
  expect(res.status).toBe(201);
}

describe('WebDAV: Shared with me', () => {
  test('a PUT (new file or replacement) still arriving when the owner removes the member is 404 and writes nothing', async () => {
    for (const name of ['new.txt', 'kept.txt']) {
      const owner = await seed.owner(t);
      const member = await seed.owner(t);
      const root = await folder(owner.client, 'Family');
      const kept = await upload(owner.client, 'kept.txt', 'owner bytes', { parentId: root.id });
      await share(owner, root.id, member.email, 'editor');
      const dav = await davLogin(t, member);
      let release!: () => void;
      const body = new ReadableStream<Uint8Array>({
        async start(c) {
          c.enqueue(new TextEncoder().encode('member '));
          await new Promise<void>((r) => (release = r));
          c.enqueue(new TextEncoder().encode('bytes'));
          c.close();
        },
      });
      const put = dav.put(`${SHARED}/Family/${name}`, body, { 'content-length': '12' });
      await new Promise((r) => setTimeout(r, 50));
      expect((await owner.client.delete(`/api/files/${root.id}/members/${member.id}`)).status).toBe(200);
      release();
      expect({ name, status: (await put).status }).toEqual({ name, status: 404 });
      expect((await listAll(owner.client, `/api/files?parentId=${root.id}`)).map((i) => i.name)).toEqual(['kept.txt']);
      expect((await downloaded(owner.client, kept.id)).toString()).toBe('owner bytes');
    }
  });

  test('shares appear under /dav/Shared with me/<name>/ (two with one name get the owner\u2019s name); editors write inside, into the owner\u2019s tree', async () => {
    const member = await seed.owner(t);
    const a = await seed.owner(t);
    const bEmail = seed.uniqueEmail('bea');
    const bRow = await t.server.ctx.services.accounts.createLogin({ email: bEmail, password: 'correct horse battery', name: 'Bea' });
    const b = { id: bRow.id, email: bEmail, password: 'correct horse battery', client: await seed.login(t, bEmail) };
    const aRoot = await folder(a.client, 'Photos');
    await upload(a.client, 'beach.txt', 'sand', { parentId: aRoot.id });
    const bRoot = await folder(b.client, 'Photos');
    await share(a, aRoot.id, member.email, 'editor');
    await share(b, bRoot.id, member.email, 'viewer');
    const dav = await davLogin(t, member);

    expect(await dav.list('')).toContain(`/dav/Shared with me/`);
    const shares = await dav.list(`${SHARED}/`);
    expect(shares[0]).toBe('/dav/Shared with me/');
    expect(shares.slice(1).sort()).toEqual(['/dav/Shared with me/Photos (Bea)/', '/dav/Shared with me/Photos (Owner)/'].sort());

    const inA = `${SHARED}/Photos%20(Owner)`;
    // Each mount's displayname is its WebDAV name, as clients that show displaynames (KDE's) would tell them apart.
    const displaynames = async (path: string, depth: '0' | '1') =>
      [...(await (await dav.propfind(path, depth)).text()).matchAll(/<D:displayname>([^<]*)<\/D:displayname>/g)].map((m) => m[1]);
    expect((await displaynames(`${SHARED}/`, '1')).sort()).toEqual(['Photos (Bea)', 'Photos (Owner)', 'Shared with me']);
    expect(await displaynames(`${inA}/`, '0')).toEqual(['Photos (Owner)']);
    expect(await dav.list(`${inA}/`)).toEqual([`/dav/Shared with me/Photos (Owner)/`, `/dav/Shared with me/Photos (Owner)/beach.txt`]);
    let res = await dav.request('GET', `${inA}/beach.txt`);
    expect(await res.text()).toBe('sand');
    expect((await dav.put(`${inA}/new.txt`, 'written by a member')).status).toBe(201);
    expect((await dav.request('MKCOL', `${inA}/Sub`)).status).toBe(201);
    res = await dav.request('MOVE', `${inA}/new.txt`, { headers: { destination: `${t.url}/dav/${inA}/Sub/new.txt` } });
    expect(res.status).toBe(201);
    const sub = (await listAll(a.client, `/api/files?parentId=${aRoot.id}`)).find((i) => i.name === 'Sub');
    const moved = (await listAll(a.client, `/api/files?parentId=${sub.id}`))[0];
    expect((await downloaded(a.client, moved.id)).toString()).toBe('written by a member');
    expect((await dav.request('DELETE', `${inA}/Sub`)).status).toBe(204);
    expect((await listAll(a.client, '/api/files/trash')).map((i) => i.name)).toContain('Sub');
  });

  test('two shares of one name from one owner each get a path of their own: the older keeps the owner\u2019s name, the newer is numbered', async () => {
    const member = await seed.owner(t);
    const ana = await seed.owner(t, seed.uniqueEmail('ana'), 'Ana');
    const older = await folder(ana.client, 'Photos', (await folder(ana.client, '2024')).id);
    const newer = await folder(ana.client, 'Photos', (await folder(ana.client, '2025')).id);
    await upload(ana.client, 'old.txt', 'from 2024', { parentId: older.id });
    await upload(ana.client, 'new.txt', 'from 2025', { parentId: newer.id });
    await share(ana, older.id, member.email, 'viewer');
    await share(ana, newer.id, member.email, 'viewer');
    const dav = await davLogin(t, member);

    expect((await dav.list(`${SHARED}/`)).slice(1).sort()).toEqual([
      '/dav/Shared with me/Photos (Ana) (1)/',
      '/dav/Shared with me/Photos (Ana)/',
    ]);
    expect(await dav.list(`${SHARED}/Photos%20(Ana)/`)).toEqual([
      '/dav/Shared with me/Photos (Ana)/',
      '/dav/Shared with me/Photos (Ana)/old.txt',
    ]);
    expect(await (await dav.request('GET', `${SHARED}/Photos%20(Ana)%20(1)/new.txt`)).text()).toBe('from 2025');
  });

  test('a viewer reads only; the share itself, a Destination outside the share, and a removed member are refused', async () => {
    const member = await seed.owner(t);
    const o = await seed.owner(t);
    const root = await folder(o.client, 'Family');
    await upload(o.client, 'photo.txt', 'photo', { parentId: root.id });
    const outside = await folder(o.client, 'Private');
    await upload(o.client, 'secret.txt', 'secret', { parentId: outside.id });
    await share(o, root.id, member.email, 'viewer');
    await upload(member.client, 'mine.txt', 'mine');
    const dav = await davLogin(t, member);
    const inF = `${SHARED}/Family`;

    expect(await (await dav.request('GET', `${inF}/photo.txt`)).text()).toBe('photo');
    // The folder's page links its files under the mount, not under the owner's path.
    expect(await (await dav.request('GET', `${inF}/`)).text()).toContain(`<a href="/dav/${inF}/photo.txt">photo.txt</a>`);
    for (const res of [
      await dav.put(`${inF}/new.txt`, 'x'),
      await dav.request('MKCOL', `${inF}/New`),
      await dav.request('DELETE', `${inF}/photo.txt`),
      await dav.request('MOVE', `${inF}/photo.txt`, { headers: { destination: `${t.url}/dav/${inF}/p.txt` } }),
    ])
      expect(res.status).toBe(403);
    // Other people's folders beside the shared one are not reachable by name, nor the root's siblings by '..'.
    expect((await dav.request('GET', `${SHARED}/Private/secret.txt`)).status).toBe(404);
    // fetch resolves a literal '..' before sending: the request names Shared with me/Private, which is no share.
    expect((await dav.request('GET', `${inF}/../Private/secret.txt`)).status).toBe(404);
    // Sent as is, a '..' segment (plain or escaped) never climbs out of the share: refused, or resolved to no share.
    for (const dots of ['..', '%2E%2E']) {
      const head = `GET /dav/${inF}/${dots}/Private/secret.txt HTTP/1.1\r\nHost: ${new URL(t.url).host}\r\nAuthorization: ${dav.authorization}\r\nConnection: close\r\n\r\n`;
      const res = await rawRequest(t.url, head);
      expect([400, 404]).toContain(res.status);
      expect(res.body.toString()).not.toContain('secret');
    }

    // A viewer copies out into its own files (the copy is its own, as the API's copy out is), but not in.
    expect((await dav.request('COPY', `${inF}/photo.txt`, { headers: { destination: `${t.url}/dav/viewed.txt` } })).status).toBe(201);
    expect(await (await dav.request('GET', 'viewed.txt')).text()).toBe('photo');
    expect((await dav.request('COPY', 'mine.txt', { headers: { destination: `${t.url}/dav/${inF}/mine.txt` } })).status).toBe(403);

    await o.client.send('PATCH', `/api/files/${root.id}/members/${member.id}`, { role: 'editor' });
    // Destination in the member's own tree (either way) or on the shared item itself: refused.
    let res = await dav.request('MOVE', `${inF}/photo.txt`, { headers: { destination: `${t.url}/dav/photo.txt` } });
    expect(res.status).toBe(403);
    res = await dav.request('MOVE', 'mine.txt', { headers: { destination: `${t.url}/dav/${inF}/mine.txt` } });
    expect(res.status).toBe(403);
    // A COPY either way is a copy across accounts, as the API's: out it becomes the member's, in the owner's.
    res = await dav.request('COPY', `${inF}/photo.txt`, { headers: { destination: `${t.url}/dav/copied.txt` } });
    expect(res.status).toBe(201);
    res = await dav.request('COPY', 'mine.txt', { headers: { destination: `${t.url}/dav/${inF}/mine.txt` } });
    expect(res.status).toBe(201);
    expect((await listAll(member.client, '/api/files')).map((i) => i.name).sort()).toEqual(['copied.txt', 'mine.txt', 'viewed.txt']);
    expect((await listAll(o.client, `/api/files?parentId=${root.id}`)).map((i) => i.name).sort()).toEqual(['mine.txt', 'photo.txt']);
    expect((await json(await member.client.get('/api/user/storage'))).used).toBe('mine'.length + 2 * 'photo'.length);
    // Onto the shared item itself it stays refused.
    res = await dav.request('COPY', 'mine.txt', { headers: { destination: `${t.url}/dav/${inF}` } });
    expect(res.status).toBe(403);
    expect((await dav.request('DELETE', inF)).status).toBe(403);
    expect((await dav.request('MOVE', inF, { headers: { destination: `${t.url}/dav/${SHARED}/Other` } })).status).toBe(403);
    expect((await dav.put(SHARED, 'x')).status).toBe(403);

    await o.client.delete(`/api/files/${root.id}/members/${member.id}`);
    expect((await dav.request('GET', `${inF}/photo.txt`)).status).toBe(404);
    expect((await dav.propfind(`${inF}/`)).status).toBe(404);
  });

  test('an editor cannot lock the shared item itself; the locks they take inside go when they are removed, made viewer or disabled', async () => {
    const member = await seed.owner(t);
    const o = await seed.owner(t);
    const root = await folder(o.client, 'Family');
    const trips = await folder(o.client, 'Trips', root.id);
    await share(o, root.id, member.email, 'editor');
    const dav = await davLogin(t, member);
    const owner = await davLogin(t, o);
    const inF = `${SHARED}/Family`;
    const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    const lockTrips = async () => {
      const res = await dav.request('LOCK', `${inF}/Trips/`, { body: lockBody, headers: { depth: 'infinity', timeout: 'Second-604800' } });
      expect(res.status).toBe(200);
    };

    for (const depth of ['infinity', '0']) {
      const res = await dav.request('LOCK', `${inF}/`, { body: lockBody, headers: { depth, timeout: 'Second-604800' } });
      expect(res.status).toBe(403);
    }
    expect((await owner.put('Family/mine.txt', 'x')).status).toBe(201);

    const removals: Array<() => Promise<unknown>> = [
      () => o.client.delete(`/api/files/${root.id}/members/${member.id}`),
      () => o.client.send('PATCH', `/api/files/${root.id}/members/${member.id}`, { role: 'viewer' }),
      () => admin.client.send('PATCH', `/api/user/${member.id}`, { disabled: true }),
    ];
    for (const [i, remove] of removals.entries()) {
      await lockTrips();
      expect((await owner.put(`Family/Trips/${i}.txt`, 'x')).status).toBe(423);
      await remove();
      expect((await owner.put(`Family/Trips/${i}.txt`, 'x')).status).toBe(201);
      if (i === 0) await share(o, root.id, member.email, 'editor');
      if (i === 1) await o.client.send('PATCH', `/api/files/${root.id}/members/${member.id}`, { role: 'editor' });
    }
    expect((await listAll(o.client, `/api/files?parentId=${trips.id}`)).map((i) => i.name).sort()).toEqual(['0.txt', '1.txt', '2.txt']);
  });

  test('with nothing shared, no door makes an item named Shared with me at the root (the next share would hide it): 403 that says why', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'a.txt', 'a');
    const dav = await davLogin(t, o);
    const nc = (method: string, url: string, headers: Record<string, string> = {}, body?: string) =>
      fetch(`${t.url}/remote.php/dav/${url}`, { method, headers: { authorization: dav.authorization, ...headers }, body });
    // A chunked upload's final MOVE there (the desktop client sends large files so).
    expect((await nc('MKCOL', `uploads/${o.id}/up`)).status).toBe(201);
    expect((await nc('PUT', `uploads/${o.id}/up/1`, {}, 'x')).status).toBe(201);
    const refused = [
      await dav.request('MKCOL', `${SHARED}/`),
      await dav.put(SHARED, 'file'),
      await dav.request('MOVE', 'a.txt', { headers: { destination: `${t.url}/dav/shared%20with%20me` } }),
      await dav.request('COPY', 'a.txt', { headers: { destination: `${t.url}/dav/${SHARED}` } }),
      await nc('MKCOL', `files/${o.id}/${SHARED}`),
      await nc('MOVE', `uploads/${o.id}/up/.file`, { destination: `${t.url}/remote.php/dav/files/${o.id}/${SHARED}` }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('is where what other accounts share with you appears: choose another name');
    }
    expect((await listAll(o.client, '/api/files')).map((i) => i.name)).toEqual(['a.txt']);
  });

  test('nothing new is made directly inside Shared with me, shared or not, by any method or door: 403 that says why (not 404 or 409)', async () => {
    for (const shared of [true, false]) {
      const member = await seed.owner(t);
      const o = await seed.owner(t);
      const root = await folder(o.client, 'Family');
      if (shared) await share(o, root.id, member.email, 'editor');
      await upload(member.client, 'mine.txt', 'mine');
      await folder(member.client, 'Mine');
      const dav = await davLogin(t, member);
      const nc = (method: string, url: string, headers: Record<string, string> = {}, body?: string) =>
        fetch(`${t.url}/remote.php/dav/${url}`, { method, headers: { authorization: dav.authorization, ...headers }, body });
      const files = `${t.url}/remote.php/dav/files/${member.id}`;
      expect((await nc('MKCOL', `uploads/${member.id}/up`)).status).toBe(201);
      expect((await nc('PUT', `uploads/${member.id}/up/1`, {}, 'x')).status).toBe(201);
      const lockBody =
        '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
      const refused: Array<[string, Response]> = [
        ['PUT', await dav.put(`${SHARED}/new.txt`, 'x')],
        ['MKCOL', await dav.request('MKCOL', `${SHARED}/New`)],
        ['COPY', await dav.request('COPY', 'mine.txt', { headers: { destination: `${t.url}/dav/${SHARED}/copy.txt` } })],
        ['MOVE', await dav.request('MOVE', 'mine.txt', { headers: { destination: `${t.url}/dav/${SHARED}/moved.txt` } })],
        ['MOVE folder', await dav.request('MOVE', 'Mine', { headers: { destination: `${t.url}/dav/${SHARED}/Mine` } })],
        ['LOCK', await dav.request('LOCK', `${SHARED}/locked.txt`, { headers: { 'content-type': 'application/xml' }, body: lockBody })],
        ['NC PUT', await nc('PUT', `files/${member.id}/${SHARED}/new.txt`, {}, 'x')],
        ['NC MKCOL', await nc('MKCOL', `files/${member.id}/${SHARED}/New`)],
        ['NC COPY', await nc('COPY', `files/${member.id}/mine.txt`, { destination: `${files}/${SHARED}/copy.txt` })],
        ['NC MOVE', await nc('MOVE', `files/${member.id}/mine.txt`, { destination: `${files}/${SHARED}/moved.txt` })],
        ['NC chunked MOVE', await nc('MOVE', `uploads/${member.id}/up/.file`, { destination: `${files}/${SHARED}/big.bin` })],
      ];
      for (const [what, res] of refused) {
        expect({ shared, what, status: res.status }).toEqual({ shared, what, status: 403 });
        expect(await res.text()).toContain('lists what other accounts share with you and holds nothing of its own');
      }
      expect((await listAll(member.client, '/api/files')).map((i) => i.name).sort()).toEqual(['Mine', 'mine.txt']);
      expect(await listAll(o.client, `/api/files?parentId=${root.id}`)).toEqual([]);
      // A share's own folder stays writable inside.
      if (shared) expect((await dav.put(`${SHARED}/Family/in.txt`, 'in')).status).toBe(201);
    }
  });

  test('an own item named Shared with me is under a numbered name (past the names at the root), shared or not, and every read and write there acts on it', async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const own = await folder(o.client, 'Shared with me');
    await upload(o.client, 'mine.txt', 'my own', { parentId: own.id });
    await folder(o.client, 'Shared with me (1)');
    const dav = await davLogin(t, o);
    const ALIAS = 'Shared%20with%20me%20(2)';
    const nc = (method: string, url: string, headers: Record<string, string> = {}, body?: string) =>
      fetch(`${t.url}/remote.php/dav/files/${o.id}/${url}`, { method, headers: { authorization: dav.authorization, ...headers }, body });

    // Nothing shared yet: the own folder is already at the path it keeps once something is.
    expect((await dav.list('')).sort()).toEqual(['/dav/', '/dav/Shared with me (1)/', '/dav/Shared with me (2)/']);
    expect((await dav.propfind(SHARED, '0')).status).toBe(404);
    const theirs = await folder(other.client, 'Holiday');
    await share(other, theirs.id, o.email, 'viewer');
    expect((await dav.list('')).sort()).toEqual(
      ['/dav/', '/dav/Shared with me/', '/dav/Shared with me (1)/', '/dav/Shared with me (2)/'].sort(),
    );
    expect(await dav.list(`${SHARED}/`)).toEqual(['/dav/Shared with me/', '/dav/Shared with me/Holiday/']);
    const answer = await (await dav.propfind(`${ALIAS}/`, '1')).text();
    expect(answer).toContain('<D:displayname>Shared with me (2)</D:displayname>');
    expect(await dav.list(`${ALIAS}/`)).toEqual(['/dav/Shared with me (2)/', '/dav/Shared with me (2)/mine.txt']);
    expect(await (await dav.request('GET', `${ALIAS}/mine.txt`)).text()).toBe('my own');
    expect(await (await nc('GET', `${ALIAS}/mine.txt`)).text()).toBe('my own');
    expect((await nc('GET', `shared%20with%20me%20(2)/mine.txt`)).status).toBe(404);

    expect((await dav.put(`${ALIAS}/new.txt`, 'put there')).status).toBe(201);
    expect((await dav.request('MKCOL', `${ALIAS}/Sub`)).status).toBe(201);
    const moved = await dav.request('MOVE', `${ALIAS}/new.txt`, { headers: { destination: `${t.url}/dav/${ALIAS}/Sub/new.txt` } });
    expect(moved.status).toBe(201);
    const names = async (parentId: string) => (await listAll(o.client, `/api/files?parentId=${parentId}`)).map((i) => i.name).sort();
    expect(await names(own.id)).toEqual(['Sub', 'mine.txt']);
    const sub = (await listAll(o.client, `/api/files?parentId=${own.id}`)).find((i) => i.name === 'Sub');
    expect(await names(sub.id)).toEqual(['new.txt']);
    // A sync-collection REPORT of the root names it at that path too, in a first sync and in the changes after it.
    const sync = async (token: string) => {
      const res = await dav.request('REPORT', '', {
        headers: { depth: '0', 'content-type': 'application/xml' },
        body: `<D:sync-collection xmlns:D="DAV:"><D:sync-token>${token}</D:sync-token><D:sync-level>infinite</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>`,
      });
      expect(res.status).toBe(207);
      const text = decodeURIComponent(await res.text());
      return { hrefs: [...text.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]!), token: /<D:sync-token>([^<]*)</.exec(text)![1]! };
    };
    const first = await sync('');
    expect(first.hrefs).toContain('/dav/Shared with me (2)/Sub/new.txt');
    expect(first.hrefs).not.toContain('/dav/Shared with me/mine.txt');
    expect((await dav.request('DELETE', `${ALIAS}/mine.txt`)).status).toBe(204);
    expect(await names(own.id)).toEqual(['Sub']);
    expect((await dav.put(`${ALIAS}/Sub/later.txt`, 'later')).status).toBe(201);
    expect((await sync(first.token)).hrefs.sort()).toEqual(['/dav/Shared with me (2)/Sub/later.txt', '/dav/Shared with me (2)/mine.txt']);

    // Renamed away and back through WebDAV, it stays the account's own folder.
    let res = await dav.request('MOVE', `${ALIAS}/`, { headers: { destination: `${t.url}/dav/Mine/` } });
    expect(res.status).toBe(201);
    expect((await listAll(o.client, '/api/files')).map((i) => i.name).sort()).toEqual(['Mine', 'Shared with me (1)']);
    res = await dav.request('MOVE', 'Mine/', { headers: { destination: `${t.url}/dav/${SHARED}/` } });
    expect(res.status).toBe(403);
    expect(await names(own.id)).toEqual(['Sub']);
  });

  test('an If header tagged with a path inside a share (a lock token or an ETag, as davfs2 and the desktop client send it) is checked on the item there', async () => {
    const member = await seed.owner(t);
    const o = await seed.owner(t);
    const root = await folder(o.client, 'Family');
    await upload(o.client, 'list.txt', 'first', { parentId: root.id });
    await share(o, root.id, member.email, 'editor');
    const dav = await davLogin(t, member);
    const rel = `${SHARED}/Family/list.txt`;
    const tagged = (condition: string) => ({ if: `<${t.url}/dav/${rel}> (${condition})` });
    const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    const locked = await dav.request('LOCK', rel, { body: lockBody, headers: { timeout: 'Second-600' } });
    expect(locked.status).toBe(200);
    const token = /<([^>]+)>/.exec(locked.headers.get('lock-token')!)![1]!;

    expect((await dav.put(rel, 'second', tagged('<urn:uuid:00000000-0000-0000-0000-000000000000>'))).status).toBe(412);
    expect((await dav.put(rel, 'second', tagged(`<${token}>`))).status).toBe(204);
    const etag = (await dav.request('HEAD', rel)).headers.get('etag')!;
    expect((await dav.put(rel, 'third', tagged(`<${token}> ["stale"]`))).status).toBe(412);
    expect((await dav.put(rel, 'third', tagged(`<${token}> [${etag}]`))).status).toBe(204);
    const [file] = (await listAll(o.client, `/api/files?parentId=${root.id}`)).filter((i) => i.name === 'list.txt');
    expect((await downloaded(o.client, file.id)).toString()).toBe('third');
  });

  test('a lock token in a tagged If header (<href> (<token>), as davfs2 and cadaver send it) proves the lock inside a share and a team folder', async () => {
    const member = await seed.owner(t);
    const o = await seed.owner(t);
    const root = await folder(o.client, 'Family');
    await upload(o.client, 'notes.txt', 'v1', { parentId: root.id });
    await share(o, root.id, member.email, 'editor');
    const group = await newGroup(admin, 'Tagged lock crew', member);
    const team = await admin.client.post('/api/admin/team-folders', {
      name: 'Crew',
      quota: null,
      groups: [{ groupId: group, role: 'editor' }],
    });
    expect(team.status).toBe(201);
    const dav = await davLogin(t, member);
    expect((await dav.put('Crew/notes.txt', 'v1')).status).toBe(201);
    const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    for (const at of [`${SHARED}/Family/notes.txt`, 'Crew/notes.txt']) {
      const taken = await dav.request('LOCK', at, { body: lockBody, headers: { timeout: 'Second-600' } });
      expect(taken.status).toBe(200);
      const token = taken.headers.get('lock-token')!.slice(1, -1);
      const href = `${t.url}/dav/${at}`;
      expect((await dav.put(at, 'no token')).status).toBe(423);
      const put = await dav.put(at, 'v2', { if: `<${href}> (<${token}>)` });
      expect({ at, status: put.status }).toEqual({ at, status: 204 });
      // A tagged ETag names the resource's current one; a refresh names its lock the same way.
      const etag = put.headers.get('etag')!;
      expect((await dav.put(at, 'v3', { if: `<${href}> (<${token}> [${etag}])` })).status).toBe(204);
      expect((await dav.put(at, 'v4', { if: `<${href}> (<${token}> [${etag}])` })).status).toBe(412);
      const refreshed = await dav.request('LOCK', at, { headers: { if: `<${href}> (<${token}>)`, timeout: 'Second-300' } });
      expect(refreshed.status).toBe(200);
      expect(await dav.request('GET', at).then((r) => r.text())).toBe('v3');
    }
  });

  // Three runs of the command line, each a process of its own: longer than the default timeout on a loaded machine.
  test('a lock an editor took inside no longer holds the owner out once its access ended elsewhere: sharing turned off, or the member disabled or removed by the command line', async () => {
    const member = await seed.owner(t);
    const o = await seed.owner(t);
    const root = await folder(o.client, 'Cabin');
    await folder(o.client, 'Notes', root.id);
    await share(o, root.id, member.email, 'editor');
    const dav = await davLogin(t, member);
    const owner = await davLogin(t, o);
    const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    const lockNotes = async () => {
      const res = await dav.request('LOCK', `${SHARED}/Cabin/Notes/`, {
        body: lockBody,
        headers: { depth: 'infinity', timeout: 'Second-604800' },
      });
      expect(res.status).toBe(200);
    };
    const cli = async (...args: string[]) => expect((await runCli([...args, '--data-dir', t.dataDir])).code).toBe(0);
    const ends: Array<[() => Promise<unknown>, () => Promise<unknown>]> = [
      [
        () => admin.client.put('/api/user/people-sharing-config', { enabled: false }),
        () => admin.client.put('/api/user/people-sharing-config', { enabled: true }),
      ],
      [() => cli('users', 'disable', member.email), () => cli('users', 'enable', member.email)],
      [
        async () => {
          await o.client.delete(`/api/files/${root.id}/members/${member.id}`);
          const group = await newGroup(admin, 'Cabin group', member);
          expect((await o.client.post(`/api/files/${root.id}/members`, { groupId: group, role: 'editor' })).status).toBe(201);
          await lockNotes();
          expect((await owner.put('Cabin/Notes/group.txt', 'x')).status).toBe(423);
          const { name } = await json(await admin.client.get(`/api/admin/groups/${group}`));
          await cli('groups', 'remove', name, member.email);
        },
        async () => {},
      ],
    ];
    for (const [i, [end, undo]] of ends.entries()) {
      await lockNotes();
      expect((await owner.put(`Cabin/Notes/${i}.txt`, 'x')).status).toBe(423);
      await end();
      expect((await owner.put(`Cabin/Notes/${i}.txt`, 'x')).status, `end ${i}`).toBe(201);
      await undo();
    }
  }, 60_000);

  test("a member's sub-user without the permission is 403; the sharing owner disabled or deleted ends the share", async () => {
    const member = await seed.owner(t);
    const o = await seed.owner(t);
    const root = await folder(o.client, 'Family');
    await upload(o.client, 'photo.txt', 'photo', { parentId: root.id });
    await share(o, root.id, member.email, 'editor');
    const inF = `${SHARED}/Family`;

    const reader = await davLogin(t, await seed.subUser(t, member, ['files.download']));
    expect(await (await reader.request('GET', `${inF}/photo.txt`)).text()).toBe('photo');
    expect((await reader.put(`${inF}/new.txt`, 'x')).status).toBe(403);
    const blind = await davLogin(t, await seed.subUser(t, member, []));
    expect((await blind.request('GET', `${inF}/photo.txt`)).status).toBe(403);

    const dav = await davLogin(t, member);
    expect((await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled: true })).status).toBe(200);
    expect((await dav.request('GET', `${inF}/photo.txt`)).status).toBe(404);
    // The share is gone, so its folder is a missing parent: WebDAV's 409 for a PUT below it.
    expect((await dav.put(`${inF}/new.txt`, 'x')).status).toBe(409);
    expect(await dav.list('')).not.toContain('/dav/Shared with me/');
    expect((await admin.client.delete(`/api/user/${o.id}`)).status).toBeLessThan(300);
    expect((await dav.propfind(`${inF}/`)).status).toBe(404);
  });
});
