import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { ManualClock } from '../../../src/clock.ts';
import { json } from '../../helpers/client.ts';
import { DavClient } from '../../helpers/dav.ts';
import { downloaded, listAll } from '../../helpers/files.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import * as seed from '../../helpers/seed.ts';
import { type TestServer, tempDir } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';

const NEXTCLOUDCMD = Bun.which('nextcloudcmd');
const NO_NEXTCLOUDCMD = skipWithout(
  NEXTCLOUDCMD ? null : 'the `nextcloudcmd` command is not installed (apt-get install nextcloud-desktop-cmd)',
  'the Nextcloud desktop client (nextcloudcmd) signing in with a login flow',
);

const DESKTOP_UA = 'Mozilla/5.0 (Linux) mirall/3.7.3 (Nextcloud, debian-6.1.0-13-amd64 ClientArchitecture: x86_64 OsArchitecture: x86_64)';
const WINDOWS_UA = 'Mozilla/5.0 (Windows) mirall/3.13.2 (Nextcloud, windows-10.0.19045 ClientArchitecture: x86_64 OsArchitecture: x86_64)';
const ANDROID_UA = 'Mozilla/5.0 (Android) Nextcloud-android/3.29.1';
// What the desktop client sends when it starts signing in: the computer's name and the platform.
const DESKTOP_SIGN_IN_UA = 'anna-laptop (Desktop Client - Linux)';

let t: TestServer;
let admin: seed.SeededLogin;
const clock = new ManualClock();

serverWithAdmin((s) => ({ t, admin } = s), { clock });

type Flow = { poll: { token: string; endpoint: string }; login: string };

async function startFlow(ua = DESKTOP_UA): Promise<Flow> {
  const res = await fetch(`${t.url}/index.php/login/v2`, { method: 'POST', headers: { 'user-agent': ua } });
  expect(res.status).toBe(200);
  return json(res);
}

/** Polls as the desktop client does: a form post of the token. */
const poll = (flow: Flow) =>
  fetch(flow.poll.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': DESKTOP_UA },
    body: `token=${encodeURIComponent(flow.poll.token)}`,
  });

const tokenOf = (flow: Flow) => new URL(flow.login).pathname.split('/').pop()!;

describe('Nextcloud login flow v2 (desktop)', () => {
  test('start, sign in and grant: the poll answers 404, then once the credentials, then 404; the app password is named after the client and works', async () => {
    const o = await seed.owner(t);
    const flow = await startFlow(DESKTOP_SIGN_IN_UA);
    expect(flow.poll.endpoint).toBe(`${t.url}/index.php/login/v2/poll`);
    expect(flow.login).toStartWith(`${t.url}/connect/`);
    expect(flow.poll.token).not.toBe(tokenOf(flow));
    expect((await poll(flow)).status).toBe(404);

    // The consent page opens in the web app (sign-in first) and asks about the client by name.
    const page = await fetch(flow.login, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const view = await o.client.get(`/api/login-flows/${tokenOf(flow)}`);
    expect(await json(view)).toEqual({ clientName: 'Nextcloud desktop on anna-laptop (Linux)', kind: 'v2' });
    expect((await o.client.fresh().get(`/api/login-flows/${tokenOf(flow)}`)).status).toBe(401);

    const grant = await o.client.post(`/api/login-flows/${tokenOf(flow)}/grant`);
    expect(grant.status).toBe(200);
    expect(await json(grant)).toEqual({ redirect: null });
    // Answered once: a second grant or a look at it finds nothing.
    expect((await o.client.post(`/api/login-flows/${tokenOf(flow)}/grant`)).status).toBe(404);

    const answered = await poll(flow);
    expect(answered.status).toBe(200);
    const credentials = await json(answered);
    expect(credentials).toEqual({
      server: t.url,
      loginName: o.email,
      appPassword: expect.stringMatching(/^[a-z2-9]{5}(-[a-z2-9]{5}){4}$/),
    });
    expect((await poll(flow)).status).toBe(404);

    const list = await json(await o.client.get('/api/user/app-passwords'));
    expect(list.appPasswords.map((p: { name: string }) => p.name)).toEqual(['Nextcloud desktop on anna-laptop (Linux)']);
    const dav = new DavClient(t.url, credentials.loginName, credentials.appPassword);
    expect((await dav.propfind('', '0')).status).toBe(207);
    const user = await fetch(`${t.url}/ocs/v2.php/cloud/user?format=json`, { headers: { authorization: dav.authorization } });
    expect((await json(user)).ocs.data.id).toBe(o.id);
  });

  test('poll accepts a JSON token too; an unknown or missing token is 404', async () => {
    const flow = await startFlow();
    const asJson = (body: unknown) =>
      fetch(flow.poll.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await asJson({ token: flow.poll.token })).status).toBe(404);
    expect((await asJson({ token: 'nope' })).status).toBe(404);
    expect((await asJson({})).status).toBe(404);
    expect((await fetch(flow.poll.endpoint, { method: 'POST' })).status).toBe(404);
    // The login token is not a poll token.
    expect((await asJson({ token: tokenOf(flow) })).status).toBe(404);
    await admin.client.post(`/api/login-flows/${tokenOf(flow)}/grant`);
    expect((await asJson({ token: flow.poll.token })).status).toBe(200);
  });

  test('Cancel ends the flow: no password is made and the client never gets one', async () => {
    const o = await seed.owner(t);
    const flow = await startFlow(WINDOWS_UA);
    expect((await json(await o.client.get(`/api/login-flows/${tokenOf(flow)}`))).clientName).toBe('Nextcloud desktop (Windows)');
    expect((await o.client.post(`/api/login-flows/${tokenOf(flow)}/cancel`)).status).toBe(200);
    expect((await o.client.post(`/api/login-flows/${tokenOf(flow)}/grant`)).status).toBe(404);
    expect((await poll(flow)).status).toBe(404);
    expect((await json(await o.client.get('/api/user/app-passwords'))).appPasswords).toEqual([]);
  });

  test('a flow expires after 20 minutes', async () => {
    const flow = await startFlow();
    clock.advance(20 * 60_000 + 1_000);
    expect((await admin.client.get(`/api/login-flows/${tokenOf(flow)}`)).status).toBe(404);
    expect((await admin.client.post(`/api/login-flows/${tokenOf(flow)}/grant`)).status).toBe(404);
    expect((await poll(flow)).status).toBe(404);
    const fresh = await startFlow();
    clock.advance(19 * 60_000);
    expect((await admin.client.get(`/api/login-flows/${tokenOf(fresh)}`)).status).toBe(200);
  });

  test('the grant refuses another site (cookie-authenticated change) and needs a signed-in login', async () => {
    const o = await seed.owner(t);
    const flow = await startFlow();
    const path = `/api/login-flows/${tokenOf(flow)}/grant`;
    expect((await o.client.post(path, undefined, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await o.client.post(path, undefined, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await o.client.fresh().post(path)).status).toBe(401);
    expect((await o.client.post(`/api/login-flows/${tokenOf(flow)}/cancel`, undefined, { origin: 'https://evil.example' })).status).toBe(
      403,
    );
    expect((await poll(flow)).status).toBe(404);
    expect((await json(await o.client.get('/api/user/app-passwords'))).appPasswords).toEqual([]);
  });

  test('a sub-user grants access for itself: the app password is its own, with its own permissions', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.download']);
    const flow = await startFlow(ANDROID_UA);
    await sub.client.post(`/api/login-flows/${tokenOf(flow)}/grant`);
    const credentials = await json(await poll(flow));
    expect(credentials.loginName).toBe(sub.email);
    const dav = new DavClient(t.url, sub.email, credentials.appPassword);
    expect((await dav.request('MKCOL', 'new-folder')).status).toBe(403);
    expect((await json(await sub.client.get('/api/user/app-passwords'))).appPasswords[0].name).toBe('Nextcloud Android');
    expect((await json(await o.client.get('/api/user/app-passwords'))).appPasswords).toEqual([]);
  });
});

describe('Nextcloud login flow v1 (mobile apps)', () => {
  test('opens the consent page with OCS-APIREQUEST, and granting answers the nc://login/ address with a working app password', async () => {
    const o = await seed.owner(t);
    const res = await fetch(`${t.url}/index.php/login/flow`, {
      headers: { 'ocs-apirequest': 'true', 'user-agent': ANDROID_UA },
      redirect: 'manual',
    });
    expect(res.status).toBe(302);
    const consent = res.headers.get('location')!;
    expect(consent).toStartWith(`${t.url}/connect/`);
    const token = new URL(consent).pathname.split('/').pop()!;
    expect(await json(await o.client.get(`/api/login-flows/${token}`))).toEqual({ clientName: 'Nextcloud Android', kind: 'v1' });
    const { redirect } = await json(await o.client.post(`/api/login-flows/${token}/grant`));
    const m = /^nc:\/\/login\/server:(.+)&user:(.+)&password:(.+)$/.exec(redirect)!;
    expect(m[1]).toBe(t.url);
    expect(decodeURIComponent(m[2]!)).toBe(o.email);
    const dav = new DavClient(t.url, o.email, decodeURIComponent(m[3]!));
    expect((await dav.propfind('', '0')).status).toBe(207);
  });

  test('without OCS-APIREQUEST it is a page saying to start from the app', async () => {
    const res = await fetch(`${t.url}/index.php/login/flow`, { redirect: 'manual', headers: { accept: 'text/html' } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain('Nextcloud mobile apps');
  });
});

describe('Nextcloud clients: sign-out, Admin → Clients, desktop-only access', () => {
  test('DELETE /ocs/v2.php/core/apppassword revokes the calling app password only; with the account password it is 403', async () => {
    const o = await seed.owner(t);
    const make = async (name: string) => (await json(await o.client.post('/api/user/app-passwords', { name }))).password as string;
    const [first, second] = [await make('phone'), await make('laptop')];
    const basic = (p: string) => `Basic ${Buffer.from(`${o.email}:${p}`).toString('base64')}`;
    const revoke = (p: string) =>
      fetch(`${t.url}/ocs/v2.php/core/apppassword?format=json`, {
        method: 'DELETE',
        headers: { authorization: basic(p), 'ocs-apirequest': 'true' },
      });
    // The revoked password's WebDAV lock goes with it.
    const lock = `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`;
    expect((await new DavClient(t.url, o.email, first).request('LOCK', 'locked.txt', { body: lock })).status).toBe(201);
    expect((await json(await o.client.get('/api/user/dav-locks'))).locks).toHaveLength(1);
    const res = await revoke(first);
    expect(res.status).toBe(200);
    expect((await json(await o.client.get('/api/user/dav-locks'))).locks).toEqual([]);
    expect((await json(res)).ocs.meta.statuscode).toBe(200);
    expect((await new DavClient(t.url, o.email, first).propfind('', '0')).status).toBe(401);
    expect((await new DavClient(t.url, o.email, second).propfind('', '0')).status).toBe(207);
    expect((await json(await o.client.get('/api/user/app-passwords'))).appPasswords.map((p: { name: string }) => p.name)).toEqual([
      'laptop',
    ]);
    const again = await revoke(first);
    expect(again.status).toBe(401);
    expect((await json(again)).ocs.meta.status).toBe('failure');
    // The account password (where WebDAV allows it) is not an app password: nothing to revoke.
    await admin.client.put('/api/user/webdav-account-password-config', { enabled: true });
    const withAccount = await revoke(o.password);
    expect(withAccount.status).toBe(403);
    expect((await json(withAccount)).ocs.meta.statuscode).toBe(403);
    await admin.client.put('/api/user/webdav-account-password-config', { enabled: false });
  });

  test('Admin → Clients lists each Nextcloud client with platform and version from its User-Agent; browsers and other WebDAV clients are not listed', async () => {
    const o = await seed.owner(t);
    const make = async (name: string) => (await json(await o.client.post('/api/user/app-passwords', { name }))).password as string;
    const [desktop, phone, finder] = [await make('desktop'), await make('phone'), await make('finder')];
    const call = (password: string, ua: string) =>
      fetch(`${t.url}/ocs/v2.php/cloud/user?format=json`, {
        headers: { authorization: `Basic ${Buffer.from(`${o.email}:${password}`).toString('base64')}`, 'user-agent': ua },
      });
    expect((await call(desktop, DESKTOP_UA)).status).toBe(200);
    expect((await call(phone, ANDROID_UA)).status).toBe(200);
    expect((await call(finder, 'WebDAVFS/3.0.0 (03008000) Darwin/22.1.0 (x86_64)')).status).toBe(200);
    const { clients } = await json(await admin.client.get('/api/user/active-clients'));
    const mine = clients.filter((c: { userId: string }) => c.userId === o.id);
    expect(mine.map((c: { platform: string; appVersion: string }) => [c.platform, c.appVersion]).sort()).toEqual([
      ['Android', '3.29.1'],
      ['Linux', '3.7.3'],
    ]);
    for (const c of mine) {
      expect(c.userEmail).toBe(o.email);
      expect(c.ipAddress).toBe('127.0.0.1');
      expect(Date.parse(c.lastSeenAt)).toBeGreaterThan(0);
    }
  });

  test('with desktop-only access on, the clients keep syncing and starting flows while a browser gets the 403', async () => {
    const o = await seed.owner(t);
    const password = (await json(await o.client.post('/api/user/app-passwords', { name: 'sync' }))).password as string;
    await admin.client.put('/api/user/desktop-only-access-config', { enabled: true }, { 'x-desktop-client': '1' });
    try {
      const dav = new DavClient(t.url, o.email, password);
      const propfind = await fetch(`${t.url}/remote.php/dav/files/${o.id}/`, {
        method: 'PROPFIND',
        headers: { authorization: dav.authorization, depth: '1', 'user-agent': DESKTOP_UA },
      });
      expect(propfind.status).toBe(207);
      const user = await fetch(`${t.url}/ocs/v1.php/cloud/user?format=json`, {
        headers: { authorization: dav.authorization, 'user-agent': DESKTOP_UA },
      });
      expect(user.status).toBe(200);
      expect((await fetch(`${t.url}/status.php`)).status).toBe(200);
      expect((await fetch(`${t.url}/index.php/login/v2`, { method: 'POST', headers: { 'user-agent': DESKTOP_UA } })).status).toBe(200);
      const browser = await o.client.get('/api/files', { accept: 'application/json' });
      expect(browser.status).toBe(403);
      expect((await json(browser)).error).toBe('DESKTOP_ONLY_ACCESS');
    } finally {
      await admin.client.put('/api/user/desktop-only-access-config', { enabled: false }, { 'x-desktop-client': '1' });
    }
  });
});

describe.skipIf(NO_NEXTCLOUDCMD)('the real Nextcloud desktop client (nextcloudcmd)', () => {
  test('syncs with the app password a login flow handed out, and Admin → Clients lists it as Linux with its version', async () => {
    const o = await seed.owner(t);
    const flow = await startFlow(DESKTOP_SIGN_IN_UA);
    await o.client.post(`/api/login-flows/${tokenOf(flow)}/grant`);
    const credentials = await json(await poll(flow));
    const local = tempDir('coffer-nextcloudcmd-login-');
    try {
      fs.writeFileSync(path.join(local, 'hello.txt'), 'from the laptop');
      // Spawned, not spawnSync: the server answers from this process's event loop.
      const proc = Bun.spawn(
        [NEXTCLOUDCMD!, '--non-interactive', '-u', credentials.loginName, '-p', credentials.appPassword, local, credentials.server],
        {
          stdout: 'pipe',
          stderr: 'pipe',
        },
      );
      const [stderr] = await Promise.all([new Response(proc.stderr).text(), new Response(proc.stdout).text()]);
      expect({ code: await proc.exited, stderr: stderr.slice(-2000) }).toMatchObject({ code: 0 });
      const item = (await listAll(o.client, '/api/files')).find((i) => i.name === 'hello.txt');
      expect((await downloaded(o.client, item.id)).toString()).toBe('from the laptop');
      const version = /version (\S+)/.exec(Bun.spawnSync([NEXTCLOUDCMD!, '--version']).stdout.toString())![1];
      const { clients } = await json(await admin.client.get('/api/user/active-clients'));
      const mine = clients.filter((c: { userId: string }) => c.userId === o.id);
      expect(mine.map((c: { platform: string; appVersion: string }) => [c.platform, c.appVersion])).toEqual([['Linux', version]]);
    } finally {
      fs.rmSync(local, { recursive: true, force: true });
    }
  });
});

describe('Nextcloud login flows: limits', () => {
  test('starting and polling are rate-limited per address', async () => {
    // Last in this file: it spends loopback's budget of flows.
    const flow = await startFlow();
    let status = 200;
    for (let i = 0; i < 40 && status === 200; i++) status = (await fetch(`${t.url}/index.php/login/v2`, { method: 'POST' })).status;
    expect(status).toBe(429);
    expect((await fetch(`${t.url}/index.php/login/flow`, { headers: { 'ocs-apirequest': 'true' }, redirect: 'manual' })).status).toBe(429);
    // Polls have their own, larger budget: a waiting client keeps polling.
    expect((await poll(flow)).status).toBe(404);
    let polled = 404;
    for (let i = 0; i < 1_000 && polled === 404; i++) polled = (await poll(flow)).status;
    expect(polled).toBe(429);
  });
});

describe('a lasting password needs more than a session cookie', () => {
  test('an app password or a client grant from a session signed in over 10 minutes ago asks for the password again; only the right one makes it', async () => {
    const o = await seed.owner(t);
    // Past the 10 minutes, and into a new window of the flow limits the test before used up.
    clock.advance(15 * 60_000);
    const names = async () => (await json(await o.client.get('/api/user/app-passwords'))).appPasswords.map((p: { name: string }) => p.name);

    const asked = await o.client.post('/api/user/app-passwords', { name: 'stolen cookie' });
    expect(asked.status).toBe(400);
    expect(await json(asked)).toMatchObject({ confirm: 'password', message: expect.stringContaining('Enter your password') });
    const wrong = await o.client.post('/api/user/app-passwords', { name: 'stolen cookie', password: 'not the password' });
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).message).toBe('Current password is incorrect');
    expect(await names()).toEqual([]);
    expect((await o.client.post('/api/user/app-passwords', { name: 'laptop', password: o.password })).status).toBe(201);

    const flow = await startFlow(DESKTOP_SIGN_IN_UA);
    const grant = (body?: unknown) => o.client.post(`/api/login-flows/${tokenOf(flow)}/grant`, body);
    const refused = await grant();
    expect(refused.status).toBe(400);
    expect(await json(refused)).toMatchObject({ confirm: 'password' });
    expect((await poll(flow)).status).toBe(404);
    expect((await grant({ password: o.password })).status).toBe(200);
    expect((await poll(flow)).status).toBe(200);
    expect(await names()).toEqual(expect.arrayContaining(['laptop', 'Nextcloud desktop on anna-laptop (Linux)']));
    expect((await names()).length).toBe(2);

    // A fresh sign-in is proof enough for a while: the web app asks for nothing more.
    const again = await seed.login(t, o.email);
    expect((await again.post('/api/user/app-passwords', { name: 'phone' })).status).toBe(201);
  });
});
