import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';
import { ManualClock } from '../../../src/clock.ts';

let t: TestServer;
const clock = new ManualClock(Date.now());
beforeAll(async () => {
  t = await startTestServer({ clock, startWorker: false });
  await seed.admin(t);
});
afterAll(() => t.stop());

describe('GET /api/sessions', () => {
  test("lists the login's sessions with isCurrent; is_online only after a heartbeat within 3 minutes", async () => {
    const o = await seed.owner(t);
    const other = await seed.login(t, o.email);
    let { sessions } = await json(await o.client.get('/api/sessions'));
    expect(sessions).toHaveLength(2);
    expect(Object.keys(sessions[0]).sort()).toEqual(
      ['created_at', 'id', 'ip_address', 'isCurrent', 'is_online', 'last_activity', 'token_version', 'user_agent', 'user_id'].sort(),
    );
    expect(sessions.filter((s: { isCurrent: boolean }) => s.isCurrent)).toHaveLength(1);
    expect(sessions.every((s: { is_online: boolean }) => !s.is_online)).toBe(true);

    expect(await json(await other.post('/api/sessions/heartbeat'))).toEqual({ ok: true });
    ({ sessions } = await json(await o.client.get('/api/sessions?refreshIp=true')));
    expect(sessions.filter((s: { is_online: boolean }) => s.is_online)).toHaveLength(1);
    expect(sessions.find((s: { is_online: boolean }) => s.is_online).isCurrent).toBe(false);

    clock.advance(3 * 60_000 + 1000);
    ({ sessions } = await json(await o.client.get('/api/sessions?refreshIp=true')));
    expect(sessions.every((s: { is_online: boolean }) => !s.is_online)).toBe(true);

    await other.post('/api/sessions/heartbeat');
    expect(await json(await other.post('/api/sessions/offline'))).toEqual({ ok: true });
    ({ sessions } = await json(await o.client.get('/api/sessions?refreshIp=true')));
    expect(sessions.every((s: { is_online: boolean }) => !s.is_online)).toBe(true);
  });

  test('stored activity is cached for two minutes unless refreshIp=true; new sessions show at once', async () => {
    const o = await seed.owner(t);
    const other = await seed.login(t, o.email);
    const activityOf = async (query: string) =>
      (await json(await o.client.get(`/api/sessions${query}`))).sessions.find((s: { isCurrent: boolean }) => !s.isCurrent).last_activity;
    const before = await activityOf('');
    clock.advance(61_000);
    expect((await other.get('/api/profile')).status).toBe(200);
    expect(await activityOf('')).toBe(before);
    expect(await activityOf('?refreshIp=true')).not.toBe(before);
    await seed.login(t, o.email);
    expect((await json(await o.client.get('/api/sessions'))).sessions).toHaveLength(3);
  });
});

describe('sessions per login', () => {
  test('a login keeps the 1,000 sessions it used last: the list holds at most those, and a sign-in past them ends the one used longest ago', async () => {
    const o = await seed.owner(t);
    const first = await seed.login(t, o.email);
    const db = t.server.ctx.db.$client;
    const now = clock.now();
    // The second sign-in's session (its id is the token's `sid`) is the one used longest ago.
    const sid = JSON.parse(Buffer.from(first.cookies.get('token')!.split('.')[1]!, 'base64url').toString()).sid;
    db.run('UPDATE sessions SET last_activity_at = ? WHERE id = ?', [now - 1_000_000, sid]);
    const insert = db.query(
      "INSERT INTO sessions (id, user_id, token_version, user_agent, ip_address, created_at, last_activity_at) VALUES (?, ?, 0, 'a script', '127.0.0.1', ?, ?)",
    );
    db.transaction(() => {
      for (let i = 0; i < 999; i++) insert.run(`${o.id}-script-${i}`, o.id, now - 10_000, now - 10_000 + i);
    })();
    expect((await o.client.get('/api/profile')).status).toBe(200);
    const listed = (await json(await o.client.get('/api/sessions?refreshIp=true'))).sessions;
    // 1,001 stored: the one used longest ago (the second sign-in's) is not listed, the current one is.
    expect(listed).toHaveLength(1000);
    expect(listed.filter((s: { isCurrent: boolean }) => s.isCurrent)).toHaveLength(1);

    const third = await seed.login(t, o.email);
    const count = () => db.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?').get(o.id)!.n;
    expect(count()).toBe(1000);
    expect((await first.get('/api/profile')).status).toBe(401);
    expect((await o.client.get('/api/profile')).status).toBe(200);
    expect((await third.get('/api/profile')).status).toBe(200);
  });
});

describe('revoking sessions', () => {
  test("DELETE /api/sessions/:id revokes that session at once; another login's session id → 404", async () => {
    const o = await seed.owner(t);
    const other = await seed.login(t, o.email);
    const otherId = (await json(await other.get('/api/sessions'))).sessions.find((s: { isCurrent: boolean }) => s.isCurrent).id;
    const stranger = await seed.owner(t);
    const notMine = await stranger.client.delete(`/api/sessions/${otherId}`);
    expect(notMine.status).toBe(404);
    expect((await other.get('/api/profile')).status).toBe(200);

    await other.post('/api/sessions/heartbeat');
    expect(await json(await o.client.delete(`/api/sessions/${otherId}`))).toEqual({ message: expect.any(String) });
    const after = await other.get('/api/profile');
    expect(after.status).toBe(401);
    expect(await json(after)).toEqual(errors.sessionRevoked);
    expect(t.server.ctx.presence.get(otherId)).toBeUndefined();
  });

  test('revoke-others keeps the current session and reports how many went', async () => {
    const o = await seed.owner(t);
    const a = await seed.login(t, o.email);
    const b = await seed.login(t, o.email);
    await a.post('/api/sessions/heartbeat');
    const res = await json(await o.client.post('/api/sessions/revoke-others'));
    expect(res).toEqual({ message: expect.any(String), deletedCount: 2 });
    expect((await a.get('/api/profile')).status).toBe(401);
    expect((await b.get('/api/profile')).status).toBe(401);
    expect((await o.client.get('/api/profile')).status).toBe(200);
    expect(t.server.ctx.presence.live().filter(([, e]) => e.loginId === o.id)).toHaveLength(0);
  });

  test('the daily purge removes sessions unused for 30 days', async () => {
    const o = await seed.owner(t);
    clock.advance(31 * 24 * 3600_000);
    const removed = t.server.ctx.services.sessions.purgeOld();
    expect(removed).toBeGreaterThan(0);
    expect((await o.client.get('/api/profile')).status).toBe(401);
    expect(t.server.ctx.schedules.get('__sessions.purge__')!.kind).toBe('sessions.purge');
    clock.set(Date.now());
  });
});
