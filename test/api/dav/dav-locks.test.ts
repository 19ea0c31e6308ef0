import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { type DavClient, davLogin } from '../../helpers/dav.ts';
import { listAll } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { MAX_LOCK_OWNER_BYTES, MAX_LOCKS_PER_PATH } from '../../../src/services/dav/dav-locks.ts';

let t: TestServer;
let adminLogin: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  adminLogin = await seed.admin(t);
});
afterAll(() => t.stop());

const lockBody = (scope: 'exclusive' | 'shared', owner = 'me') =>
  `<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:${scope}/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>${owner}</D:owner></D:lockinfo>`;

/** LOCK `path`, expecting a new lock; its token. */
async function lock(dav: DavClient, path: string, scope: 'exclusive' | 'shared', headers: Record<string, string> = {}): Promise<string> {
  const res = await dav.request('LOCK', path, { body: lockBody(scope), headers: { timeout: 'Second-600', ...headers } });
  expect(res.status).toBeOneOf([200, 201]);
  return res.headers.get('lock-token')!.slice(1, -1);
}

/** The lock tokens `lockdiscovery` shows on `path`. */
async function tokensOn(dav: DavClient, path: string): Promise<string[]> {
  const res = await dav.propfind(path, '0', '<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>');
  return [...(await res.text()).matchAll(/<D:locktoken><D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]!);
}

const refresh = (dav: DavClient, path: string, token: string, timeout?: string) =>
  dav.request('LOCK', path, { headers: { if: `(<${token}>)`, ...(timeout ? { timeout } : {}) } });

/** The seconds a lock answer or lockdiscovery gives the (first) lock. */
const secondsIn = (xml: string) => Number(/<D:timeout>Second-(\d+)</.exec(xml)![1]);

describe('refreshing a lock (RFC 4918 §9.10.2)', () => {
  test("without a Timeout header keeps the lock's own timeout; a lock taken without one has the one-hour default", async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('short.txt', 'a');
    const token = await lock(dav, 'short.txt', 'exclusive', { timeout: 'Second-120' });
    const refreshed = await refresh(dav, 'short.txt', token);
    expect(refreshed.status).toBe(200);
    expect(secondsIn(await refreshed.text())).toBeWithin(60, 121);
    expect(secondsIn(await dav.propfind('short.txt', '0').then((r) => r.text()))).toBeWithin(60, 121);
    // An unreadable Timeout is no timeout: the lock's own again.
    expect(secondsIn(await refresh(dav, 'short.txt', token, 'Hours-3').then((r) => r.text()))).toBeWithin(60, 121);
    // One that names a timeout sets it, and a later refresh without one keeps that.
    expect(secondsIn(await refresh(dav, 'short.txt', token, 'Second-900').then((r) => r.text()))).toBeWithin(800, 901);
    expect(secondsIn(await refresh(dav, 'short.txt', token).then((r) => r.text()))).toBeWithin(800, 901);
    await dav.put('plain.txt', 'a');
    const taken = await dav.request('LOCK', 'plain.txt', { body: lockBody('exclusive') });
    expect(taken.status).toBe(200);
    expect(secondsIn(await taken.text())).toBeWithin(3500, 3601);
  });
});

describe('COPY and MOVE onto a locked destination', () => {
  test("a folder onto a locked file is 423 naming the file's own href; onto the root it is 403 whatever the locks", async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('locked.txt', 'x');
    await dav.request('MKCOL', 'Folder/');
    await lock(dav, 'locked.txt', 'exclusive');
    const onto = await dav.request('COPY', 'Folder/', { headers: { Destination: `${t.url}/dav/locked.txt` } });
    expect(onto.status).toBe(423);
    expect(await onto.text()).toContain('<D:lock-token-submitted><D:href>/dav/locked.txt</D:href>');
    for (const method of ['COPY', 'MOVE']) {
      const root = await dav.request(method, 'Folder/', { headers: { Destination: `${t.url}/dav/` } });
      expect(root.status).toBe(403);
      expect((await json(root)).message).toBe('The root folder cannot be replaced');
    }
  });
});

describe('COPY and MOVE with Overwrite: F onto a locked destination', () => {
  test('is 412 (the destination exists, whatever the lock), the destination unchanged; with Overwrite: T it is 423', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('src.txt', 'source');
    await dav.put('dest.txt', 'kept');
    expect((await dav.request('MKCOL', 'box')).status).toBe(201);
    await lock(dav, 'dest.txt', 'exclusive');
    await lock(dav, 'box/', 'exclusive');
    const destination = (path: string) => `${t.url}/dav/${path}`;
    for (const method of ['COPY', 'MOVE'])
      for (const target of ['dest.txt', 'box']) {
        const refused = await dav.request(method, 'src.txt', { headers: { destination: destination(target), overwrite: 'F' } });
        expect(refused.status).toBe(412);
        expect(await refused.text()).toContain('Overwrite is F');
        const locked = await dav.request(method, 'src.txt', { headers: { destination: destination(target), overwrite: 'T' } });
        expect(locked.status).toBe(423);
      }
    expect(await (await dav.request('GET', 'dest.txt')).text()).toBe('kept');
    expect(await (await dav.request('GET', 'src.txt')).text()).toBe('source');
    // A destination not there is no precondition failure: the lock on its folder is what refuses it.
    const inside = await dav.request('COPY', 'src.txt', { headers: { destination: destination('box/new.txt'), overwrite: 'F' } });
    expect(inside.status).toBe(423);
  });
});

describe('lock limits', () => {
  test('an owner element over the limit is 400; a path takes at most MAX_LOCKS_PER_PATH shared locks, then 423', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('doc.txt', 'v1');
    const big = await dav.request('LOCK', 'doc.txt', { body: lockBody('shared', 'x'.repeat(MAX_LOCK_OWNER_BYTES + 1)) });
    expect(big.status).toBe(400);
    expect((await json(big)).message).toContain('owner element');
    for (let i = 0; i < MAX_LOCKS_PER_PATH; i++) await lock(dav, 'doc.txt', 'shared');
    const refused = await dav.request('LOCK', 'doc.txt', { body: lockBody('shared') });
    expect(refused.status).toBe(423);
    expect(await refused.text()).toContain(`${MAX_LOCKS_PER_PATH} locks`);
    expect((await tokensOn(dav, 'doc.txt')).length).toBe(MAX_LOCKS_PER_PATH);
  });
});

describe('what a 423 names (RFC 4918 §16)', () => {
  test("a LOCK in conflict with another is no-conflicting-lock naming that lock's root; a write without the token names the locked resource", async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    expect((await dav.request('MKCOL', 'held')).status).toBe(201);
    expect((await dav.put('held/a.txt', 'a')).status).toBe(201);
    await lock(dav, 'held/', 'exclusive');
    for (const [path, scope] of [
      ['held/', 'exclusive'],
      ['held/', 'shared'],
      ['held/a.txt', 'exclusive'],
    ] as const) {
      const res = await dav.request('LOCK', path, { body: lockBody(scope) });
      expect(res.status).toBe(423);
      const text = await res.text();
      expect(text).toContain('<D:no-conflicting-lock><D:href>/dav/held/</D:href></D:no-conflicting-lock>');
      expect(text).not.toContain('lock token in the If header');
    }
    const put = await dav.put('held/a.txt', 'b');
    expect(put.status).toBe(423);
    expect(await put.text()).toContain('<D:lock-token-submitted><D:href>/dav/held/a.txt</D:href></D:lock-token-submitted>');
  });

  test('a DELETE, MOVE or COPY of a folder refused for a lock on a member names that member, not the folder', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const other = await davLogin(t, o, 'other device');
    expect((await dav.request('MKCOL', 'Kept')).status).toBe(201);
    expect((await dav.request('MKCOL', 'Kept/Deep')).status).toBe(201);
    expect((await dav.put('Kept/Deep/Open%20File.txt', 'a')).status).toBe(201);
    expect((await dav.request('MKCOL', 'Other')).status).toBe(201);
    await lock(other, 'Kept/Deep/Open%20File.txt', 'exclusive');
    const member = '<D:lock-token-submitted><D:href>/dav/kept/Deep/Open%20File.txt</D:href></D:lock-token-submitted>';
    expect(await (await dav.request('DELETE', 'kept/')).text()).toContain(member);
    expect(await (await dav.request('MOVE', 'kept/', { headers: { destination: `${t.url}/dav/Moved/` } })).text()).toContain(member);
    const onto = await dav.request('COPY', 'Other/', { headers: { destination: `${t.url}/dav/Kept/` } });
    expect(onto.status).toBe(423);
    expect(await onto.text()).toContain('<D:href>/dav/Kept/Deep/Open%20File.txt</D:href>');
    // A Destination under another door is named under that door, not the request's.
    const door = await dav.request('MOVE', 'Other/', { headers: { destination: `${t.url}/remote.php/webdav/Kept/` } });
    expect(door.status).toBe(423);
    expect(await door.text()).toContain('<D:href>/remote.php/webdav/Kept/Deep/Open%20File.txt</D:href>');
    // A lock on the folder itself (or above) names the resource asked for, as before.
    await lock(other, 'Other/', 'exclusive');
    expect(await (await dav.request('DELETE', 'Other/')).text()).toContain('<D:href>/dav/Other/</D:href>');
  });
});

describe("a lock's owner", () => {
  test('keeps the xml:lang it was sent in, on the owner element or around it, in the LOCK answer and in lockdiscovery', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const bodies = {
      'around.txt':
        '<D:lockinfo xmlns:D="DAV:" xml:lang="en"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>me</D:owner></D:lockinfo>',
      'on.txt':
        '<D:lockinfo xmlns:D="DAV:" xml:lang="en"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner xml:lang="fr">moi</D:owner></D:lockinfo>',
    };
    const owners = { 'around.txt': '<D:owner xml:lang="en">me</D:owner>', 'on.txt': '<D:owner xml:lang="fr">moi</D:owner>' };
    for (const [path, body] of Object.entries(bodies)) {
      expect((await dav.put(path, 'x')).status).toBe(201);
      const res = await dav.request('LOCK', path, { body });
      expect(res.status).toBe(200);
      const expected = owners[path as keyof typeof owners];
      expect(await res.text()).toContain(expected);
      const found = await dav.propfind(path, '0', '<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>');
      expect(await found.text()).toContain(expected);
    }
  });
});

describe('who may refresh and remove a lock', () => {
  test("only the login that took a lock refreshes it: another login's refresh is 403 and changes nothing", async () => {
    const o = await seed.owner(t);
    const ownerDav = await davLogin(t, o);
    await ownerDav.put('doc.txt', 'owner');
    const token = await lock(ownerDav, 'doc.txt', 'exclusive');
    const nobody = await davLogin(t, await seed.subUser(t, o, []));
    const editor = await davLogin(t, await seed.subUser(t, o, ['files.edit', 'files.upload']));
    // Both read the token from lockdiscovery, as any login of the account can.
    expect(await tokensOn(nobody, 'doc.txt')).toEqual([token]);
    expect((await refresh(nobody, 'doc.txt', token, 'Infinite')).status).toBe(403);
    expect((await refresh(editor, 'doc.txt', token, 'Second-1')).status).toBe(403);
    const discovery = await ownerDav.propfind('doc.txt', '0').then((r) => r.text());
    expect(Number(/<D:timeout>Second-(\d+)</.exec(discovery)![1])).toBeWithin(590, 601);
    expect((await editor.put('doc.txt', 'overwritten')).status).toBe(423);
    expect(await (await ownerDav.request('GET', 'doc.txt')).text()).toBe('owner');
    const own = await refresh(ownerDav, 'doc.txt', token, 'Second-300');
    expect(own.status).toBe(200);
    expect(await own.text()).toMatch(/<D:timeout>Second-(29\d|300)<\/D:timeout>/);
  });

  test("the owner removes a sub-user's lock with UNLOCK; another sub-user cannot remove the owner's", async () => {
    const o = await seed.owner(t);
    const ownerDav = await davLogin(t, o);
    await ownerDav.put('doc.txt', 'owner');
    const sub = await davLogin(t, await seed.subUser(t, o, ['files.edit']));
    const whole = await lock(sub, '', 'exclusive', { depth: 'infinity', timeout: 'Infinite' });
    expect((await ownerDav.put('doc.txt', 'v2')).status).toBe(423);
    expect((await ownerDav.request('UNLOCK', '', { headers: { 'lock-token': `<${whole}>` } })).status).toBe(204);
    expect((await ownerDav.put('doc.txt', 'v2')).status).toBe(204);
    const owners = await lock(ownerDav, 'doc.txt', 'exclusive');
    expect((await sub.request('UNLOCK', 'doc.txt', { headers: { 'lock-token': `<${owners}>` } })).status).toBe(403);
    expect(await tokensOn(ownerDav, 'doc.txt')).toEqual([owners]);
  });

  test("a member cannot remove the sharing owner's lock inside the share (403); only the owner's logins can", async () => {
    const o = await seed.owner(t);
    const ownerDav = await davLogin(t, o);
    expect((await ownerDav.request('MKCOL', 'Team')).status).toBe(201);
    await ownerDav.put('Team/doc.txt', 'owner');
    const team = (await listAll(o.client, '/api/files')).find((i) => i.name === 'Team');
    const member = await seed.owner(t);
    expect((await o.client.post(`/api/files/${team.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const memberDav = await davLogin(t, member);
    const owners = await lock(ownerDav, 'Team/doc.txt', 'exclusive');
    const inShare = 'Shared%20with%20me/Team/doc.txt';
    expect(await tokensOn(memberDav, inShare)).toEqual([owners]);
    expect((await memberDav.request('UNLOCK', inShare, { headers: { 'lock-token': `<${owners}>` } })).status).toBe(403);
    expect(await tokensOn(ownerDav, 'Team/doc.txt')).toEqual([owners]);
    expect((await ownerDav.request('UNLOCK', 'Team/doc.txt', { headers: { 'lock-token': `<${owners}>` } })).status).toBe(204);
  });

  test('deleting a sub-user, taking a permission away, revoking an app password or disabling the account drops the locks', async () => {
    const o = await seed.owner(t);
    const ownerDav = await davLogin(t, o);
    for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']) await ownerDav.put(name, name);
    const held = async () => (await json(await o.client.get('/api/user/dav-locks'))).locks.map((l: { path: string }) => l.path).sort();

    const doomed = await seed.subUser(t, o, ['files.edit']);
    await lock(await davLogin(t, doomed), 'a.txt', 'exclusive');
    const demoted = await seed.subUser(t, o, ['files.edit', 'files.download']);
    await lock(await davLogin(t, demoted), 'b.txt', 'exclusive');
    const revoked = await seed.subUser(t, o, ['files.edit']);
    const laptop = await davLogin(t, revoked, 'laptop');
    const phone = await davLogin(t, revoked, 'phone');
    await lock(laptop, 'c.txt', 'exclusive');
    await lock(phone, 'd.txt', 'exclusive');
    await lock(ownerDav, 'e.txt', 'exclusive');
    expect(await held()).toEqual(['/a.txt', '/b.txt', '/c.txt', '/d.txt', '/e.txt']);

    expect((await o.client.delete(`/api/user/sub-users/${doomed.id}`)).status).toBe(200);
    // Adding a permission keeps them; taking one away drops them.
    expect(
      (await o.client.put(`/api/user/sub-users/${demoted.id}`, { permissions: ['files.edit', 'files.download', 'files.share'] })).status,
    ).toBe(200);
    expect(await held()).toEqual(['/b.txt', '/c.txt', '/d.txt', '/e.txt']);
    expect((await o.client.put(`/api/user/sub-users/${demoted.id}`, { permissions: ['files.edit'] })).status).toBe(200);
    expect((await revoked.client.delete(`/api/user/app-passwords/${laptop.id}`)).status).toBe(200);
    expect(await held()).toEqual(['/d.txt', '/e.txt']);
    expect((await ownerDav.put('a.txt', 'free')).status).toBe(204);

    expect((await adminLogin.client.send('PATCH', `/api/user/${o.id}`, { disabled: true })).status).toBe(200);
    expect((await adminLogin.client.send('PATCH', `/api/user/${o.id}`, { disabled: false })).status).toBe(200);
    const again = await seed.login(t, o.email);
    expect((await json(await again.get('/api/user/dav-locks'))).locks).toEqual([]);
  });
});

describe('GET and DELETE /api/user/dav-locks', () => {
  test("the owner lists every lock of the account with its login and removes one; sub-users 403, another account's token 404", async () => {
    const o = await seed.owner(t);
    const ownerDav = await davLogin(t, o);
    await ownerDav.request('MKCOL', 'Folder');
    await ownerDav.put('Folder/Report%20A.txt', 'x');
    const sub = await seed.subUser(t, o, ['files.edit']);
    const subToken = await lock(await davLogin(t, sub), 'Folder/Report%20A.txt', 'exclusive');
    const res = await o.client.get('/api/user/dav-locks');
    expect(res.status).toBe(200);
    const { locks } = await json(res);
    expect(locks).toEqual([
      {
        token: subToken,
        path: '/Folder/Report A.txt',
        login: { id: sub.id, name: 'Sub', email: sub.email },
        scope: 'exclusive',
        depth: 'infinity',
        expiresAt: expect.any(String),
      },
    ]);
    expect(Date.parse(locks[0].expiresAt) - Date.now()).toBeGreaterThan(590_000);

    expect((await sub.client.get('/api/user/dav-locks')).status).toBe(403);
    expect((await sub.client.delete(`/api/user/dav-locks/${encodeURIComponent(subToken)}`)).status).toBe(403);
    const stranger = await seed.owner(t);
    const strange = await stranger.client.delete(`/api/user/dav-locks/${encodeURIComponent(subToken)}`);
    expect(strange.status).toBe(404);
    expect((await json(strange)).message).toBe('Lock not found');

    expect((await o.client.delete(`/api/user/dav-locks/${encodeURIComponent(subToken)}`)).status).toBe(200);
    expect((await o.client.delete(`/api/user/dav-locks/${encodeURIComponent(subToken)}`)).status).toBe(404);
    expect((await ownerDav.put('Folder/Report%20A.txt', 'y')).status).toBe(204);
  });
});

describe('parallel PUTs to one new path', () => {
  test('one creates the file, the others replace it: one name, and each answer names the content its client wrote', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.request('MKCOL', 'race');
    // Each body has its own length, which the ETag carries.
    const bodies = Array.from({ length: 8 }, (_, i) => `${i}`.repeat(i + 1));
    const answers = await Promise.all(bodies.map((body) => dav.put('race/same.txt', body)));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 204, 204, 204, 204, 204, 204, 204]);
    const etags = answers.map((r) => r.headers.get('etag')!);
    expect(new Set(etags).size).toBe(8);
    expect(etags.map((e, i) => e.endsWith(`-${bodies[i]!.length}"`))).toEqual(bodies.map(() => true));
    const folder = (await listAll(o.client, '/api/files')).find((i: { name: string }) => i.name === 'race');
    const files = await listAll(o.client, `/api/files?parentId=${folder.id}`);
    expect(files.map((i: { name: string }) => i.name)).toEqual(['same.txt']);
    expect(etags.filter((e) => !e.startsWith(`"${files[0].id}-`))).toEqual([]);
    const current = await dav.request('GET', 'race/same.txt');
    const content = await current.text();
    expect(etags[bodies.indexOf(content)]).toBe(current.headers.get('etag')!);
  });
});

describe('shared locks (RFC 4918 §6.2)', () => {
  test("a holder of one of a resource's shared locks writes with its own token alone; without one it is 423", async () => {
    const o = await seed.owner(t);
    const mac = await davLogin(t, o);
    const phone = await davLogin(t, await seed.subUser(t, o, ['files.edit', 'files.upload', 'files.delete']));
    await mac.put('shared.txt', 'v1');
    const mine = await lock(mac, 'shared.txt', 'shared');
    const theirs = await lock(phone, 'shared.txt', 'shared');
    const second = await lock(mac, 'shared.txt', 'shared');
    expect((await mac.request('PUT', 'shared.txt', { body: 'v2', headers: { if: `(<${mine}>)` } })).status).toBe(204);
    expect((await phone.request('PUT', 'shared.txt', { body: 'v3', headers: { if: `(<${theirs}>)` } })).status).toBe(204);
    expect(await (await mac.request('GET', 'shared.txt')).text()).toBe('v3');
    // Another login's token proves nothing, and no token at all is still refused.
    expect((await phone.request('PUT', 'shared.txt', { body: 'x', headers: { if: `(<${second}>)` } })).status).toBe(423);
    expect((await phone.put('shared.txt', 'x')).status).toBe(423);
    // A DELETE of a folder needs a token for each locked resource below it, not for every lock.
    await mac.request('MKCOL', 'F/');
    await mac.put('F/a.txt', 'a');
    await mac.put('F/b.txt', 'b');
    const a = await lock(mac, 'F/a.txt', 'shared');
    await lock(phone, 'F/a.txt', 'shared');
    const b = await lock(mac, 'F/b.txt', 'shared');
    const tagged = (path: string, token: string) => `<${t.url}/dav/${path}> (<${token}>)`;
    expect((await mac.request('DELETE', 'F/', { headers: { if: tagged('F/a.txt', a) } })).status).toBe(423);
    const both = await mac.request('DELETE', 'F/', { headers: { if: `${tagged('F/a.txt', a)} ${tagged('F/b.txt', b)}` } });
    expect(both.status).toBe(204);
  });
});
