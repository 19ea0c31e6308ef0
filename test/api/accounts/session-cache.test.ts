import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';

// Every request here is authenticated at least once before the change, so the session is in the sessions' cache.
let t: TestServer;
let admin: seed.SeededLogin;
beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  admin = await seed.admin(t);
});
afterAll(() => t.stop());

async function signedIn(client: TestClient): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await client.get('/api/profile')).status).toBe(200);
}

async function refused(client: TestClient, body: unknown = errors.sessionRevoked): Promise<void> {
  const res = await client.get('/api/profile');
  expect(res.status).toBe(401);
  expect(await json(res)).toEqual(body);
}

describe('a cached session stops working at once', () => {
  test('sign-out', async () => {
    const o = await seed.owner(t);
    const other = await seed.login(t, o.email);
    await signedIn(o.client);
    await signedIn(other);
    const token = o.client.cookies.get('token')!;
    expect((await o.client.post('/api/logout')).status).toBe(200);
    // The client dropped its cookie: the token itself, as a script that kept it would send it.
    const kept = t.client();
    kept.headers = { authorization: `Bearer ${token}` };
    await refused(kept);
    await signedIn(other);
  });

  test('a password change signs out every other session', async () => {
    const o = await seed.owner(t);
    const other = await seed.login(t, o.email);
    await signedIn(other);
    expect((await o.client.post('/api/change-password', { oldPassword: o.password, newPassword: 'a brand new password' })).status).toBe(
      200,
    );
    await refused(other, errors.sessionExpired);
  });

  test('revoking one session, and revoking the others', async () => {
    const o = await seed.owner(t);
    const a = await seed.login(t, o.email);
    const b = await seed.login(t, o.email);
    await signedIn(a);
    await signedIn(b);
    const { sessions } = await json(await a.get('/api/sessions'));
    const aId = sessions.find((s: { isCurrent: boolean }) => s.isCurrent).id;
    expect((await o.client.delete(`/api/sessions/${aId}`)).status).toBe(200);
    await refused(a);
    await signedIn(b);
    expect((await o.client.post('/api/sessions/revoke-others')).status).toBe(200);
    await refused(b);
    await signedIn(o.client);
  });

  test('the admin disables the account', async () => {
    const o = await seed.owner(t);
    await signedIn(o.client);
    expect((await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled: true })).status).toBe(200);
    await refused(o.client, errors.sessionExpired);
  });

  test("a sub-user's changed permissions apply to its next request", async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.download']);
    await signedIn(sub.client);
    expect((await o.client.put(`/api/user/sub-users/${sub.id}`, { permissions: ['files.download', 'files.upload'] })).status).toBe(200);
    expect((await json(await sub.client.get('/api/profile'))).permissions).toEqual(['files.download', 'files.upload']);
  });

  test('another process (the CLI beside the server) removes the session or disables the login', async () => {
    const o = await seed.owner(t);
    const other = await seed.login(t, o.email);
    await signedIn(o.client);
    await signedIn(other);
    const db = new Database(path.join(t.dataDir, 'coffer.db'));
    try {
      db.run('PRAGMA busy_timeout = 5000');
      const { sessions } = await json(await o.client.get('/api/sessions'));
      const current = sessions.find((s: { isCurrent: boolean }) => s.isCurrent).id;
      db.query('DELETE FROM sessions WHERE id = ?').run(current);
      await refused(o.client);
      await signedIn(other);
      db.query('UPDATE users SET disabled_at = ? WHERE id = ?').run(Date.now(), o.id);
      await refused(other);
    } finally {
      db.close();
    }
  });
});
