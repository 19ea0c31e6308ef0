import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { json } from '../helpers/client.ts';
import { errors } from '../helpers/errors.ts';
import * as seed from '../helpers/seed.ts';

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

  test("permission changes apply to the sub-user's next request without a new login", async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, []);
    const principalPerms = async () => {
      const token = sub.client.cookies.get('token')!;
      const { principal } = await t.server.ctx.services.sessions.authenticate(token, { ip: '127.0.0.1' });
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
    expect(await json(await o.client.get('/api/user/storage'))).toEqual({ used: 300, total: 1000, free: 700 });
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
