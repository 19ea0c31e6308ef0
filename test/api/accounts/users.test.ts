import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';
import { blobFiles, folder, rowCount, SseReader, upload } from '../../helpers/files.ts';
import { DavClient } from '../../helpers/dav.ts';

let t: TestServer;
let adminLogin: seed.SeededLogin;
beforeAll(async () => {
  t = await startTestServer({ env: { COFFER_DEFAULT_STORAGE_LIMIT: '5G' } });
  adminLogin = await seed.admin(t);
});
afterAll(() => t.stop());

const CATALOG = [
  ['files.download', 'Download'],
  ['files.upload', 'Upload & create'],
  ['files.edit', 'Modify'],
  ['files.share', 'Share'],
  ['files.delete', 'Move to trash'],
  ['files.trash', 'Manage trash'],
];

describe('sub-users', () => {
  test('list publishes the full permission catalog in display order', async () => {
    const o = await seed.owner(t);
    const body = await json(await o.client.get('/api/user/sub-users'));
    expect(body.subUsers).toEqual([]);
    expect(body.availablePermissions.map((p: { key: string; label: string }) => [p.key, p.label])).toEqual(CATALOG);
    for (const p of body.availablePermissions) expect(p.description.length).toBeGreaterThan(10);
  });

  test("create → 201; the sub-user signs in with its own password and acts on the owner's storage", async () => {
    const o = await seed.owner(t);
    const email = seed.uniqueEmail('helper');
    const res = await o.client.post('/api/user/sub-users', {
      email,
      password: 'longenough',
      name: ' Helper ',
      permissions: ['files.upload', 'files.download'],
    });
    expect(res.status).toBe(201);
    const { subUser } = await json(res);
    expect(subUser).toMatchObject({ email, name: 'Helper', permissions: ['files.download', 'files.upload'], mfaEnabled: false });
    const sub = await seed.login(t, email, 'longenough');
    expect((await json(await sub.get('/api/profile'))).id).toBe(subUser.id);
    t.server.ctx.services.quota.adjust(o.id, 1234);
    expect(await json(await sub.get('/api/user/storage'))).toEqual(await json(await o.client.get('/api/user/storage')));
    expect((await json(await sub.get('/api/user/storage'))).used).toBe(1234);
  });

  test.each([
    [{ email: 'x@y.io', password: 'short', name: 'N', permissions: [] }, 'password'],
    [{ email: 'x@y.io', password: 'longenough', name: '   ', permissions: [] }, 'name'],
    [{ email: 'x@y.io', password: 'longenough', name: 'N', permissions: ['files.fly'] }, 'permissions.0'],
    [{ email: 'x@y.io', password: 'longenough', name: 'N' }, 'permissions'],
    [{ email: 'bad', password: 'longenough', name: 'N', permissions: [] }, 'email'],
  ])('invalid create %p → 422 naming %s', async (body, field) => {
    const o = await seed.owner(t);
    const res = await o.client.post('/api/user/sub-users', body);
    expect(res.status).toBe(422);
    expect((await json(res)).details.map((d: { field: string }) => d.field)).toContain(field);
  });

  test('an email in use anywhere on the instance → 409', async () => {
    const o = await seed.owner(t);
    const res = await o.client.post('/api/user/sub-users', {
      email: adminLogin.email.toUpperCase(),
      password: 'longenough',
      name: 'N',
      permissions: [],
    });
    expect(res.status).toBe(409);
    expect(await json(res)).toEqual(errors.emailInUse);
  });

  test('an account has at most 1,000 sub-users: the next one is 409 naming the way out, until one is deleted', async () => {
    const o = await seed.owner(t);
    const first = await seed.subUser(t, o, []);
    // 998 more written as copies of the first (creating each through the API hashes its password).
    const db = t.server.ctx.db.$client;
    const row = db.query('SELECT * FROM users WHERE id = ?').get(first.id) as Record<string, unknown>;
    const cols = Object.keys(row);
    const insert = db.query(`INSERT INTO users (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);
    const fresh: Record<string, (i: number) => unknown> = {
      id: (i) => `${first.id}-${i}`,
      email: (i) => `${i}-${first.email}`,
      email_key: (i) => `${i}-${first.email}`,
    };
    db.transaction(() => {
      for (let i = 0; i < 998; i++) insert.run(...(cols.map((c) => fresh[c]?.(i) ?? row[c]) as never[]));
    })();
    const create = () =>
      o.client.post('/api/user/sub-users', { email: seed.uniqueEmail('many'), password: 'longenough', name: 'N', permissions: [] });
    expect((await create()).status).toBe(201);
    const refused = await create();
    expect(refused.status).toBe(409);
    expect(await json(refused)).toEqual({ message: 'There are already 1,000 sub-users: delete one you no longer use first' });
    expect((await o.client.delete(`/api/user/sub-users/${first.id}`)).status).toBe(200);
    expect((await create()).status).toBe(201);
    expect((await json(await o.client.get('/api/user/sub-users'))).subUsers).toHaveLength(1000);
  });

  test("permission changes apply to the sub-user's next request without a new login", async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, []);
    const principalPerms = async () => {
      const token = sub.client.cookies.get('token')!;
      const { principal } = t.server.ctx.services.sessions.authenticate(token, { ip: '127.0.0.1' });
      return [...principal.permissions];
    };
    expect(await principalPerms()).toEqual([]);
    const res = await o.client.put(`/api/user/sub-users/${sub.id}`, { permissions: ['files.share', 'files.edit'] });
    expect((await json(res)).subUser.permissions).toEqual(['files.edit', 'files.share']);
    expect(await principalPerms()).toEqual(['files.edit', 'files.share']);
    expect((await o.client.put(`/api/user/sub-users/${sub.id}`, { permissions: ['nope'] })).status).toBe(422);
  });

  test("delete drops the sub-user's sessions and presence at once", async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.download']);
    await sub.client.post('/api/sessions/heartbeat');
    await sub.client.post('/api/user/client-heartbeat', { appVersion: '1.0.0' });
    expect(await json(await o.client.delete(`/api/user/sub-users/${sub.id}`))).toEqual({ message: expect.any(String) });
    expect((await sub.client.get('/api/profile')).status).toBe(401);
    expect(t.server.ctx.presence.live().filter(([, e]) => e.loginId === sub.id)).toHaveLength(0);
    const again = await o.client.delete(`/api/user/sub-users/${sub.id}`);
    expect(again.status).toBe(404);
    expect(await json(again)).toEqual({ message: 'Sub-user not found' });
  });

  test("another owner's sub-user is 404 for update and delete", async () => {
    const a = await seed.owner(t);
    const b = await seed.owner(t);
    const sub = await seed.subUser(t, a, []);
    expect((await b.client.put(`/api/user/sub-users/${sub.id}`, { permissions: [] })).status).toBe(404);
    expect((await b.client.delete(`/api/user/sub-users/${sub.id}`)).status).toBe(404);
    expect((await b.client.delete(`/api/user/sub-users/${a.id}`)).status).toBe(404);
    expect((await sub.client.get('/api/profile')).status).toBe(200);
  });

  test('a sub-user calling owner-only endpoints → 403 with the owner-only message', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.download', 'files.upload', 'files.edit', 'files.share', 'files.delete', 'files.trash']);
    for (const [method, path, body] of [
      ['GET', '/api/user/sub-users', undefined],
      ['POST', '/api/user/sub-users', { email: 'q@q.io', password: 'longenough', name: 'N', permissions: [] }],
      ['PUT', `/api/user/sub-users/${sub.id}`, { permissions: [] }],
      ['DELETE', `/api/user/sub-users/${sub.id}`, undefined],
    ] as const) {
      const res = await sub.client.send(method, path, body);
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual(errors.ownerOnly);
    }
  });
});

describe('admin: users and storage limits', () => {
  test('non-admins get 403 with the admin-only message', async () => {
    const o = await seed.owner(t);
    for (const [method, path, body] of [
      ['GET', '/api/user/all', undefined],
      ['PUT', '/api/user/storage-limit', { targetUserId: o.id, storageLimit: 10 }],
      ['GET', '/api/user/active-clients', undefined],
    ] as const) {
      const res = await o.client.send(method, path, body);
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual(errors.adminOnly);
    }
  });

  test('GET /api/user/all pages over owners, each followed by its sub-users, until nextCursor is null', async () => {
    const owners = [await seed.owner(t), await seed.owner(t), await seed.owner(t)];
    await seed.subUser(t, owners[1]!, ['files.download']);
    await seed.subUser(t, owners[1]!, []);
    const seen: Array<{ id: string; parentUserId: string | null; permissions: string[] | null; storageTotal: number | null }> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await adminLogin.client.get(`/api/user/all?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      const body: { users: typeof seen; nextCursor: string | null } = await json(res);
      expect(body.users.filter((u) => u.parentUserId === null).length).toBeLessThanOrEqual(2);
      seen.push(...body.users);
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThan(1);
    expect(new Set(seen.map((u) => u.id)).size).toBe(seen.length);
    const i = seen.findIndex((u) => u.id === owners[1]!.id);
    expect(seen[i + 1]!.parentUserId).toBe(owners[1]!.id);
    expect(seen[i + 2]!.parentUserId).toBe(owners[1]!.id);
    expect(seen[i + 1]!.permissions).toEqual(['files.download']);
    expect(seen[i]!.permissions).toBeNull();
    expect(seen[i]!.storageTotal).toBe(5 * 1024 ** 3);
    expect((await adminLogin.client.get('/api/user/all?limit=0')).status).toBe(422);
    expect((await adminLogin.client.get('/api/user/all?limit=101')).status).toBe(422);
    const bad = await adminLogin.client.get('/api/user/all?cursor=garbage!');
    expect(bad.status).toBe(400);
    expect(await json(bad)).toEqual(errors.invalidCursor);
  });

  test('storage limit: set, reflected in usage, reset to the instance default with null; sub-user targets → 400', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, []);
    expect(await json(await adminLogin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit: 1000 }))).toEqual({
      storageLimit: 1000,
    });
    t.server.ctx.services.quota.adjust(o.id, 300);
    expect(await json(await o.client.get('/api/user/storage'))).toEqual({ used: 300, total: 1000, free: 700, versions: 0 });
    expect(await json(await adminLogin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit: null }))).toEqual({
      storageLimit: null,
    });
    expect((await json(await o.client.get('/api/user/storage'))).total).toBe(5 * 1024 ** 3);
    expect((await adminLogin.client.put('/api/user/storage-limit', { targetUserId: sub.id, storageLimit: 5 })).status).toBe(400);
    expect((await adminLogin.client.put('/api/user/storage-limit', { targetUserId: 'missing-user-id-xxxx', storageLimit: 5 })).status).toBe(
      404,
    );
    expect((await adminLogin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit: -5 })).status).toBe(422);
    expect((await adminLogin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit: 1.5 })).status).toBe(422);
  });
});

describe('desktop clients', () => {
  test("heartbeat feeds the admin's active-clients list; clientId defaults to the session id", async () => {
    const o = await seed.owner(t);
    expect(
      await json(await o.client.post('/api/user/client-heartbeat', { appVersion: '2.1.0', platform: 'linux', clientId: 'laptop' })),
    ).toEqual({ ok: true });
    await o.client.post('/api/user/client-heartbeat', { appVersion: '2.1.0' });
    const { clients } = await json(await adminLogin.client.get('/api/user/active-clients'));
    const mine = clients.filter((c: { userId: string }) => c.userId === o.id);
    expect(mine).toHaveLength(2);
    const laptop = mine.find((c: { id: string }) => c.id === `${o.id}:laptop`);
    expect(laptop).toMatchObject({ userEmail: o.email, userName: 'Owner', appVersion: '2.1.0', platform: 'linux', ipAddress: '127.0.0.1' });
    expect(Number.isNaN(Date.parse(laptop.connectedSince))).toBe(false);
    const sessionId = (await json(await o.client.get('/api/sessions?refreshIp=true'))).sessions[0];
    expect(sessionId.is_online).toBe(true);
    expect((await o.client.post('/api/user/client-heartbeat', {})).status).toBe(422);
  });
});

describe('admin: disabling and deleting accounts', () => {
  let s: TestServer;
  let admin: seed.SeededLogin;
  beforeAll(async () => {
    s = await startTestServer({ startWorker: false });
    admin = await seed.admin(s);
  });
  afterAll(() => s.stop());

  const entry = async (id: string) => (await json(await admin.client.get('/api/user/all?limit=100'))).users.find((u: any) => u.id === id);

  test('a sub-user the owner was adding while the account was disabled is refused, not left able to sign in', async () => {
    const o = await seed.owner(s);
    const email = seed.uniqueEmail('late-sub');
    // The new sub-user's password is hashed first: the account is disabled meanwhile.
    const adding = o.client.post('/api/user/sub-users', { email, password: 'sub password', name: 'Late', permissions: ['files.download'] });
    await Bun.sleep(15);
    expect((await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled: true })).status).toBe(200);
    expect((await adding).status).toBe(401);
    const res = await s.client().post('/api/login', { email, password: 'sub password' });
    expect(res.status).toBe(401);
  });

  test('disable ends every session of the account at once and refuses sign-in; enable lets it back in', async () => {
    const o = await seed.owner(s);
    const sub = await seed.subUser(s, o, ['files.download']);
    const shared = await upload(o.client, 'public.txt', 'hello');
    const link = new URL((await json(await o.client.post('/api/files/share', { ids: [shared.id], shared: true }))).links[shared.id])
      .pathname;
    expect((await s.client().get(link)).status).toBe(200);
    const appPassword = (await json(await o.client.post('/api/user/app-passwords', { name: 'Laptop' }))).password;
    const dav = new DavClient(s.url, o.email, appPassword);
    expect((await dav.propfind('', '0')).status).toBe(207);
    const events = new SseReader(await sub.client.get('/api/files/events'));
    expect(await events.next()).toMatch(/^data: \{"type":"connected"\}\nid: \d+$/);
    let res = await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled: true });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ id: o.id, email: o.email, disabled: true });
    for (const c of [o.client, sub.client]) expect((await c.get('/api/profile')).status).toBe(401);
    // Its open event stream ends at once too.
    await expect(events.next()).rejects.toThrow('SSE stream ended');
    for (const who of [o, sub]) {
      res = await s.client().post('/api/login', { email: who.email, password: who.password });
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual({ message: 'This account is disabled: ask the administrator' });
      // A wrong password still says only that: a disabled account is not revealed to a guesser.
      expect(await json(await s.client().post('/api/login', { email: who.email, password: 'not the password' }))).toEqual(
        errors.invalidCredentials,
      );
    }
    expect(await entry(o.id)).toMatchObject({ disabled: true, deletionPending: false });
    // Its share links stop with it.
    expect((await s.client().get(link)).status).toBe(404);
    // So does WebDAV with its app passwords.
    const refused = await dav.propfind('', '0');
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('This account is disabled');
    expect(await entry(sub.id)).toMatchObject({ disabled: true });

    // The same state again changes nothing and records nothing.
    expect((await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled: true })).status).toBe(200);
    res = await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled: false });
    expect(await json(res)).toEqual({ id: o.id, email: o.email, disabled: false });
    expect((await seed.login(s, o.email)).cookies.size).toBe(1);
    expect((await s.client().get(link)).status).toBe(200);
    expect((await dav.propfind('', '0')).status).toBe(207);
    expect((await seed.login(s, sub.email)).cookies.size).toBe(1);
    await s.server.ctx.services.audit.flush();
    const actions = s.server.ctx.services.audit
      .list({ action: 'user' })
      .filter((e) => e.targetId === o.id)
      .map((e) => e.action);
    expect(actions.filter((a) => a === 'user.disable')).toHaveLength(1);
    expect(actions.filter((a) => a === 'user.enable')).toHaveLength(1);
  });

  test('delete: sessions end at once; a job trashes and purges every file, frees the objects, removes the logins and keeps the audit trail', async () => {
    const o = await seed.owner(s);
    const sub = await seed.subUser(s, o, ['files.download']);
    const dir = await folder(o.client, 'Photos');
    const inDir = await upload(o.client, 'a.jpg', 'a'.repeat(5000), { parentId: dir.id });
    await upload(o.client, 'b.txt', 'bbbb');
    const trashed = await upload(o.client, 'c.txt', 'c'.repeat(300));
    await o.client.post('/api/files/delete', { ids: [trashed.id] });
    const links = (await json(await o.client.post('/api/files/share', { ids: [inDir.id], shared: true }))).links;
    const shareUrl = new URL(links[inDir.id]).pathname;
    expect((await s.client().get(shareUrl)).status).toBe(200);
    const objectsBefore = blobFiles(s.dataDir).objects.length;
    expect(rowCount(s, 'account_id = ?', o.id)).toBe(4);

    const res = await admin.client.delete(`/api/user/${o.id}`);
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(body).toMatchObject({ message: `Deleting account ${o.email}`, queued: true });
    expect(typeof body.jobId).toBe('string');
    for (const c of [o.client, sub.client]) expect((await c.get('/api/profile')).status).toBe(401);
    expect((await s.client().post('/api/login', { email: o.email, password: o.password })).status).toBe(403);
    expect(await entry(o.id)).toMatchObject({ disabled: true, deletionPending: true });
    // Being deleted: it cannot be enabled meanwhile.
    expect((await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled: false })).status).toBe(409);

    await s.server.worker.drain();
    expect(s.server.ctx.services.accounts.findById(o.id)).toBeNull();
    expect(s.server.ctx.services.accounts.findById(sub.id)).toBeNull();
    expect(rowCount(s, 'account_id = ?', o.id)).toBe(0);
    expect(blobFiles(s.dataDir).objects.length).toBe(objectsBefore - 3);
    expect((await s.client().get(shareUrl)).status).toBe(404);
    expect(await entry(o.id)).toBeUndefined();
    await s.server.ctx.services.audit.flush();
    expect(s.server.ctx.services.audit.list({ user: o.id, limit: 1000 }).map((e) => e.action)).toContain('file.upload');
    const about = s.server.ctx.services.audit.list({ action: 'user' }).filter((e) => e.targetId === o.id);
    expect(about.map((e) => [e.action, e.actor])).toEqual([
      ['user.deleted', 'system'],
      ['user.delete', 'login'],
    ]);
    // The address is free again.
    expect((await s.server.ctx.services.accounts.createLogin({ email: o.email, password: 'another password', name: 'New' })).id).not.toBe(
      o.id,
    );
  });

  test('delete from a session signed in over 10 minutes ago needs the admin’s own password: a stolen cookie cannot wipe an account', async () => {
    const o = await seed.owner(s);
    const session = await seed.login(s, admin.email, admin.password);
    // Only this session ages: the suite's admin client stays a fresh sign-in.
    s.server.ctx.db.$client
      .query(
        'UPDATE sessions SET created_at = created_at - 3600000 WHERE id = (SELECT id FROM sessions WHERE user_id = ? ORDER BY created_at DESC LIMIT 1)',
      )
      .run(admin.id);
    const asked = await session.delete(`/api/user/${o.id}`);
    expect(asked.status).toBe(400);
    expect(await json(asked)).toMatchObject({
      confirm: 'password',
      message: expect.stringContaining('Enter your password to delete the account'),
    });
    const wrong = await session.send('DELETE', `/api/user/${o.id}`, { currentPassword: 'not the password' });
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).message).toBe('Current password is incorrect');
    expect(await entry(o.id)).toMatchObject({ disabled: false, deletionPending: false });
    expect((await o.client.get('/api/profile')).status).toBe(200);
    // An unknown id is still 404 before anything is asked.
    expect((await session.delete('/api/user/no-such-user')).status).toBe(404);

    const confirmed = await session.send('DELETE', `/api/user/${o.id}`, { currentPassword: admin.password });
    expect(confirmed.status).toBe(202);
    expect((await o.client.get('/api/profile')).status).toBe(401);
    await s.server.ctx.services.audit.flush();
    const failed = s.server.ctx.services.audit.list({ action: 'user' }).filter((e) => e.action === 'user.delete' && e.status === 'failure');
    expect(failed.map((e) => e.details?.reason)).toContain('wrong_password');
  });

  test("the first admin is untouchable; sub-user targets are the owner's business; unknown ids are 404; bad bodies 422", async () => {
    for (const res of [
      await admin.client.send('PATCH', `/api/user/${admin.id}`, { disabled: true }),
      await admin.client.delete(`/api/user/${admin.id}`),
    ]) {
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual({ message: 'The first admin cannot be disabled or deleted' });
    }
    expect(s.server.ctx.services.accounts.findById(admin.id)!.disabledAt).toBeNull();
    const o = await seed.owner(s);
    const sub = await seed.subUser(s, o, []);
    expect((await admin.client.send('PATCH', `/api/user/${sub.id}`, { disabled: true })).status).toBe(400);
    expect((await admin.client.delete(`/api/user/${sub.id}`)).status).toBe(400);
    expect((await admin.client.send('PATCH', '/api/user/no-such-user', { disabled: true })).status).toBe(404);
    expect((await admin.client.delete('/api/user/no-such-user')).status).toBe(404);
    const bad = await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled: 'yes' });
    expect(bad.status).toBe(422);
    expect((await json(bad)).details[0].field).toBe('disabled');
  });

  test("the list says whose address the admin chose or confirmed; confirming one from the web is the CLI's confirm-email", async () => {
    expect((await admin.client.post('/api/user/signup-toggle', { enabled: true })).status).toBe(200);
    const email = seed.uniqueEmail('self-signed');
    const signup = await s.client().post('/api/signup', { email, password: 'long enough', name: 'Self' });
    expect((await admin.client.post('/api/user/signup-toggle', { enabled: false })).status).toBe(200);
    const self: string = (await json(signup)).user.id;
    const made = await seed.owner(s);
    const sub = await seed.subUser(s, made, []);
    expect(await entry(self)).toMatchObject({ email, emailTrusted: false });
    expect(await entry(made.id)).toMatchObject({ emailTrusted: true });
    expect(await entry(sub.id)).toMatchObject({ emailTrusted: false });
    expect(await entry(admin.id)).toMatchObject({ emailTrusted: true });

    for (const [id, address] of [
      [self, email],
      [sub.id, sub.email],
    ] as const) {
      const res = await admin.client.post(`/api/user/${id}/confirm-email`);
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ id, email: address, changed: true });
      expect(await entry(id)).toMatchObject({ emailTrusted: true });
    }
    // Again, or one already trusted: nothing changes, nothing more is audited.
    expect(await json(await admin.client.post(`/api/user/${self}/confirm-email`))).toEqual({ id: self, email, changed: false });
    expect(await json(await admin.client.post(`/api/user/${made.id}/confirm-email`))).toMatchObject({ changed: false });
    await s.server.ctx.services.audit.flush();
    const audited = s.server.ctx.services.audit.list({ action: 'user.email_confirm', limit: 100 });
    expect(audited.map((e) => e.targetId).sort()).toEqual([self, sub.id].sort());
    expect(audited.every((e) => e.loginId === admin.id)).toBe(true);

    const unknown = await admin.client.post('/api/user/no-such-user/confirm-email');
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toEqual({ message: 'User not found' });
    for (const who of [made, sub]) {
      const res = await who.client.post(`/api/user/${self}/confirm-email`);
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual(errors.adminOnly);
    }
    const anonymous = await s.client().post(`/api/user/${self}/confirm-email`);
    expect(anonymous.status).toBe(401);
    expect(await json(anonymous)).toEqual(errors.noToken);
  });

  test('owners and sub-users get 403 for any id, existing or not; nothing changes', async () => {
    const o = await seed.owner(s);
    const other = await seed.owner(s);
    const sub = await seed.subUser(s, o, ['files.download', 'files.upload', 'files.edit', 'files.share', 'files.delete', 'files.trash']);
    for (const who of [o, sub]) {
      for (const target of [other.id, o.id, admin.id, 'no-such-user']) {
        for (const res of [
          await who.client.send('PATCH', `/api/user/${target}`, { disabled: true }),
          await who.client.delete(`/api/user/${target}`),
        ]) {
          expect(res.status).toBe(403);
          expect(await json(res)).toEqual(errors.adminOnly);
        }
      }
    }
    expect(s.server.ctx.services.accounts.findById(other.id)!.disabledAt).toBeNull();
    expect((await other.client.get('/api/profile')).status).toBe(200);
  });
});
