import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import { generate } from 'otplib';
import { tempDir, type TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import { ManualClock } from '../../../src/clock.ts';
import { loadConfig } from '../../../src/config.ts';
import { openContext } from '../../../src/composition.ts';
import { createLogger } from '../../../src/log.ts';
import type { AuditEvent } from '../../../src/contract/admin.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';

let t: TestServer;
let admin: seed.SeededLogin;
const clock = new ManualClock(Date.now());
const code = (secret: string) => generate({ secret, epoch: Math.floor(clock.now() / 1000) });

serverWithAdmin((s) => ({ t, admin } = s), { clock, startWorker: false });

/** Audit events of one action written since `since`, oldest first. */
function events(action: string, filter: { user?: string } = {}): AuditEvent[] {
  t.server.ctx.services.audit.flush();
  return t.server.ctx.services.audit.list({ action, user: filter.user, limit: 1000 }).reverse();
}

describe('audit events for accounts and sessions', () => {
  test('sign-up, sign-in (success, wrong password, wrong MFA code), sign-out and sign-out everywhere', async () => {
    expect(events('auth.signup', { user: admin.id })).toMatchObject([
      { status: 'success', actor: 'login', email: admin.email, ip: '127.0.0.1', details: { admin: true } },
    ]);
    const o = await seed.owner(t);
    expect(events('auth.sign_in', { user: o.id })).toMatchObject([
      { status: 'success', email: o.email, accountId: o.id, targetType: 'session' },
    ]);

    const bad = await t.client().post('/api/login', { email: o.email, password: 'not it' });
    expect(bad.status).toBe(401);
    const unknown = await t.client().post('/api/login', { email: 'ghost@example.test', password: 'whatever' });
    expect(unknown.status).toBe(401);
    const failures = events('auth.sign_in').filter((e) => e.status === 'failure');
    expect(failures.find((e) => e.email === o.email)).toMatchObject({
      loginId: o.id,
      actor: 'anonymous',
      ip: '127.0.0.1',
      details: { reason: 'invalid_credentials' },
    });
    expect(failures.find((e) => e.email === 'ghost@example.test')).toMatchObject({
      loginId: null,
      details: { reason: 'invalid_credentials' },
    });

    await o.client.post('/api/logout');
    expect(events('auth.sign_out', { user: o.id })).toHaveLength(1);
    const again = await seed.login(t, o.email);
    await again.post('/api/logout-all');
    expect(events('auth.sign_out_all', { user: o.id })).toMatchObject([{ details: { sessions: 1 } }]);
  });

  test('session revocation, one and all others', async () => {
    const o = await seed.owner(t);
    const second = await seed.login(t, o.email);
    const { sessions } = await json(await o.client.get('/api/sessions'));
    const other = sessions.find((s: { isCurrent: boolean }) => !s.isCurrent);
    expect((await o.client.delete(`/api/sessions/${other.id}`)).status).toBe(200);
    expect(events('session.revoke', { user: o.id })).toMatchObject([{ targetType: 'session', targetId: other.id }]);
    await seed.login(t, o.email);
    await o.client.post('/api/sessions/revoke-others');
    expect(events('session.revoke_others', { user: o.id })).toMatchObject([{ details: { count: 1 } }]);
    expect(second).toBeDefined();
  });

  test('password change: success, wrong current password, and refused while disabled', async () => {
    const o = await seed.owner(t);
    expect((await o.client.post('/api/change-password', { oldPassword: 'wrong one', newPassword: 'new password 1' })).status).toBe(400);
    expect((await o.client.post('/api/change-password', { oldPassword: o.password, newPassword: 'new password 1' })).status).toBe(200);
    const o2 = await seed.owner(t);
    await admin.client.put('/api/user/password-change-config', { enabled: false });
    expect((await o2.client.post('/api/change-password', { oldPassword: o2.password, newPassword: 'new password 2' })).status).toBe(403);
    await admin.client.put('/api/user/password-change-config', { enabled: true });
    expect(events('auth.password_change', { user: o.id }).map((e) => [e.status, e.details?.reason])).toEqual([
      ['failure', 'wrong_current_password'],
      ['success', undefined],
    ]);
    expect(events('auth.password_change', { user: o2.id }).map((e) => e.status)).toEqual(['denied']);
  });

  test('MFA: enable (a wrong code, then the right one), regenerate backup codes, a failed sign-in code, disable', async () => {
    const o = await seed.owner(t);
    const { secret } = await json(await o.client.post('/api/mfa/setup'));
    expect((await o.client.post('/api/mfa/verify', { code: '000000' })).status).toBe(400);
    const { backupCodes } = await json(await o.client.post('/api/mfa/verify', { code: await code(secret) }));
    clock.advance(30_000);
    expect((await o.client.post('/api/mfa/backup-codes/regenerate')).status).toBe(200);
    expect((await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: '123456' })).status).toBe(401);
    expect((await o.client.post('/api/mfa/disable', { code: 'ZZZZ-ZZZZ' })).status).toBe(400);
    expect(backupCodes).toHaveLength(10);
    expect((await o.client.post('/api/mfa/disable', { code: await code(secret) })).status).toBe(200);
    expect(events('mfa.enable', { user: o.id }).map((e) => e.status)).toEqual(['failure', 'success']);
    expect(events('mfa.backup_codes_regenerate', { user: o.id })).toHaveLength(1);
    expect(events('mfa.disable', { user: o.id }).map((e) => e.status)).toEqual(['failure', 'success']);
    expect(events('auth.sign_in', { user: o.id }).filter((e) => e.status === 'failure')).toMatchObject([
      { details: { reason: 'invalid_mfa_code' } },
    ]);
  });
});

describe('audit events for sub-users, settings and limits', () => {
  test('sub-user created, permissions changed, deleted', async () => {
    const o = await seed.owner(t);
    const email = seed.uniqueEmail('helper');
    const { subUser } = await json(
      await o.client.post('/api/user/sub-users', { email, password: 'longenough', name: 'Helper', permissions: ['files.upload'] }),
    );
    await o.client.put(`/api/user/sub-users/${subUser.id}`, { permissions: ['files.download', 'files.share'] });
    await o.client.delete(`/api/user/sub-users/${subUser.id}`);
    const log = events('subuser', { user: o.id });
    expect(log.map((e) => [e.action, e.targetId])).toEqual([
      ['subuser.create', subUser.id],
      ['subuser.permissions_update', subUser.id],
      ['subuser.delete', subUser.id],
    ]);
    expect(log[0]!.details).toEqual({ email, permissions: ['files.upload'] });
    expect(log[1]!.details).toEqual({ permissions: ['files.download', 'files.share'] });
    expect(log[2]!.details).toEqual({ email });
  });

  test('every settings change names the setting and its new value, never the document server secret', async () => {
    const c = admin.client;
    await c.post('/api/user/signup-toggle', { enabled: true });
    await c.put('/api/user/hide-file-extensions-config', { hidden: true });
    await c.put('/api/user/desktop-only-access-config', { enabled: false });
    await c.put('/api/user/password-change-config', { enabled: true });
    await c.put('/api/user/max-upload-size-config', { maxBytes: 2097152 });
    await c.put('/api/user/share-base-url-config', { url: 'https://files.example.test' });
    await c.put('/api/user/docserver-config', { url: 'https://docs.example.test', jwtSecret: 'very-secret-value' });
    await c.put('/api/user/known-proxies-config', { knownProxies: ['10.0.0.1'] });
    await c.put('/api/user/known-proxies-config', { knownProxies: [] });
    const log = events('settings.update', { user: admin.id });
    const keys = new Set(log.map((e) => e.targetId));
    for (const k of [
      'signupEnabled',
      'hideFileExtensions',
      'desktopOnlyAccess',
      'allowPasswordChange',
      'maxUploadBytes',
      'shareBaseUrl',
      'docserver',
      'knownProxies',
    ]) {
      expect(keys.has(k)).toBe(true);
    }
    expect(log.find((e) => e.targetId === 'maxUploadBytes')!.details).toEqual({ value: 2097152 });
    expect(log.find((e) => e.targetId === 'docserver')!.details).toEqual({
      value: { url: 'https://docs.example.test', jwtSecretSet: true },
    });
    expect(JSON.stringify(t.server.ctx.services.audit.list({ limit: 10000 }))).not.toContain('very-secret-value');
    // A refused value changes nothing and is not recorded as a change.
    const before = log.length;
    expect((await c.put('/api/user/max-upload-size-config', { maxBytes: 5 })).status).toBe(422);
    expect(events('settings.update', { user: admin.id })).toHaveLength(before);
  });

  test('storage limit changes', async () => {
    const o = await seed.owner(t);
    await admin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit: 1234567 });
    expect(events('user.storage_limit', { user: admin.id }).at(-1)).toMatchObject({ targetId: o.id, details: { storageLimit: 1234567 } });
  });

  test('denied actions: a sub-user on an owner route, an owner on an admin route, a cross-origin change', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, []);
    expect((await sub.client.get('/api/user/sub-users')).status).toBe(403);
    expect((await o.client.get('/api/user/all')).status).toBe(403);
    expect((await o.client.post('/api/logout-all', undefined, { origin: 'https://evil.example' })).status).toBe(403);
    expect(events('access.denied', { user: sub.id })).toMatchObject([
      {
        status: 'denied',
        targetType: 'route',
        targetId: 'GET /api/user/sub-users',
        details: { reason: 'Only the account owner can perform this action.' },
      },
    ]);
    expect(events('access.denied', { user: o.id })).toMatchObject([
      { targetId: 'GET /api/user/all', details: { reason: 'Only the admin can perform this action.' } },
    ]);
    expect(events('access.denied').some((e) => e.targetId === 'POST /api/logout-all' && e.details?.origin === 'https://evil.example')).toBe(
      true,
    );
  });
});

describe('audit log processing and retention', () => {
  test('events wait in the queue until processed; the worker writes them in order', async () => {
    const sqlite = t.server.ctx.db.$client;
    t.server.ctx.services.audit.flush();
    await t.client().post('/api/login', { email: 'queued@example.test', password: 'x' });
    expect(
      sqlite.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM audit_queue WHERE status = 'pending'").get()!.n,
    ).toBeGreaterThanOrEqual(1);
    expect(t.server.ctx.services.audit.flush()).toBeGreaterThanOrEqual(1);
    expect(sqlite.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM audit_queue WHERE status = 'pending'").get()!.n).toBe(0);
    expect(events('auth.sign_in').at(-1)!.email).toBe('queued@example.test');
  });

  test('the daily audit.retention job removes events older than AUDIT_RETENTION_DAYS (default 90)', async () => {
    const sqlite = t.server.ctx.db.$client;
    expect(t.server.ctx.schedules.get('__audit.retention__')).toMatchObject({ kind: 'audit.retention', intervalMs: 24 * 3600_000 });
    const old = clock.now() - 91 * 24 * 3600_000;
    const recent = clock.now() - 89 * 24 * 3600_000;
    sqlite
      .query(
        "INSERT INTO audit_log (at, action, status, actor) VALUES (?, 'auth.sign_in', 'success', 'system'), (?, 'auth.sign_in', 'success', 'system')",
      )
      .run(old, recent);
    t.server.ctx.queue.enqueue(Jobs.auditRetention, null);
    await t.server.worker.drain();
    const ats = sqlite
      .query<{ at: number }, []>('SELECT at FROM audit_log')
      .all()
      .map((r) => r.at);
    expect(ats).not.toContain(old);
    expect(ats).toContain(recent);
  });

  test('recording never throws into the caller: a failing queue is counted, not raised', async () => {
    const dataDir = tempDir();
    try {
      const config = loadConfig({ dataDir }, {});
      const init = openContext(config, { mode: 'server', logger: createLogger('silent') });
      init.close();
      const ctx = openContext(config, { mode: 'cli', logger: createLogger('silent') });
      try {
        ctx.db.$client.run('DROP TABLE audit_queue');
        expect(() => ctx.services.audit.record({ action: 'auth.sign_in', status: 'failure', email: 'x@example.test' })).not.toThrow();
        expect(ctx.services.metrics.auditFailed.get({ reason: 'enqueue' })).toBe(1);
      } finally {
        ctx.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('audit events for file operations', () => {
  test('upload, replace, download, rename, move, copy, trash, restore and permanent delete are each recorded with the actor and target', async () => {
    const { upload, folder } = await import('../../helpers/files.ts');
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.upload', 'files.download', 'files.edit', 'files.delete', 'files.trash']);
    const dir = await folder(o.client, 'Reports');
    const file = await upload(sub.client, 'q3.txt', 'numbers');
    const of = (action: string) => events(action).filter((e) => e.accountId === o.id);

    expect(of('file.upload')).toMatchObject([
      { loginId: sub.id, accountId: o.id, ip: '127.0.0.1', targetType: 'file', targetId: file.id, details: { name: 'q3.txt' } },
    ]);
    await (await sub.client.get(`/api/files/${file.id}/download`)).arrayBuffer();
    await (await sub.client.get(`/api/files/${file.id}/download`, { range: 'bytes=3-4' })).arrayBuffer();
    expect(of('file.download')).toMatchObject([{ loginId: sub.id, targetId: file.id }]);
    await sub.client.post('/api/files/rename', { id: file.id, name: 'q3-final.txt' });
    expect(of('file.rename')).toMatchObject([{ targetId: file.id, details: { name: 'q3-final.txt', oldName: 'q3.txt' } }]);
    await sub.client.post('/api/files/move', { ids: [file.id], parentId: dir.id });
    expect(of('file.move')).toMatchObject([{ targetId: file.id, details: { parentId: dir.id } }]);
    const copy = await json(await sub.client.post('/api/files/copy', { ids: [file.id] }));
    await t.server.worker.drain();
    expect(copy.queued).toBe(true);
    expect(of('file.copy')).toHaveLength(1);
    expect(of('file.copy')[0]!.loginId).toBe(sub.id);
    await sub.client.post('/api/files/delete', { ids: [file.id] });
    expect(of('file.trash')).toMatchObject([{ targetId: file.id }]);
    await sub.client.post('/api/files/trash/restore', { ids: [file.id] });
    expect(of('file.restore')).toMatchObject([{ targetId: file.id }]);
    await sub.client.post('/api/files/delete', { ids: [file.id] });
    await sub.client.post('/api/files/trash/delete', { ids: [file.id] });
    await t.server.worker.drain();
    expect(of('file.delete_permanent')).toMatchObject([{ loginId: sub.id, targetId: file.id }]);
  });
});

describe('audit events for emptying the trash', () => {
  test("an empty by the API, by WebDAV and by an account's deletion is one row naming what went for good, bounded however large the trash", async () => {
    const { upload, folder } = await import('../../helpers/files.ts');
    const { davLogin, NextcloudApp } = await import('../../helpers/dav.ts');
    const o = await seed.owner(t);
    const of = (accountId: string) => events('file.trash_empty').filter((e) => e.accountId === accountId);
    const dir = await folder(o.client, 'Old');
    await upload(o.client, 'inner.txt', 'in', { parentId: dir.id });
    const loose = await upload(o.client, 'loose.txt', 'out');
    await o.client.post('/api/files/delete', { ids: [dir.id, loose.id] });
    expect((await o.client.post('/api/files/trash/empty')).status).toBe(202);
    await t.server.worker.drain();
    expect(of(o.id)).toMatchObject([
      { actor: 'login', loginId: o.id, status: 'success', targetType: 'trash', targetId: o.id, details: { count: 2, items: 3, more: 0 } },
    ]);
    const purged = of(o.id)[0]!.details!.purged as Array<{ id: string; name: string; type: string }>;
    expect(purged.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { id: loose.id, name: 'loose.txt', type: 'file' },
      { id: dir.id, name: 'Old', type: 'folder' },
    ]);

    // 120 trashed items: the count says all of them, the row names the first 100.
    const many = await seed.owner(t);
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) ids.push((await folder(many.client, `f${i}`)).id);
    expect((await many.client.post('/api/files/delete', { ids })).status).toBeLessThan(300);
    await t.server.worker.drain();
    const dav = await davLogin(t, many);
    const app = new NextcloudApp(dav, many.id);
    expect((await app.send('DELETE', `/remote.php/dav/trashbin/${many.id}/trash`)).status).toBe(204);
    const [row] = of(many.id);
    expect(row).toMatchObject({ actor: 'login', loginId: many.id, details: { count: 120, items: 120, more: 20 } });
    expect((row!.details!.purged as unknown[]).length).toBe(100);
    expect(of(many.id)).toHaveLength(1);

    const leaving = await seed.owner(t);
    const gone = await upload(leaving.client, 'gone.txt', 'bye');
    await leaving.client.post('/api/files/delete', { ids: [gone.id] });
    expect((await admin.client.delete(`/api/user/${leaving.id}`)).status).toBe(202);
    await t.server.worker.drain();
    const [deleted] = of(leaving.id);
    expect(deleted).toMatchObject({ actor: 'system', details: { count: 1, items: 1 } });
    expect(deleted!.details!.purged).toEqual([{ id: gone.id, name: 'gone.txt', type: 'file' }]);
  });
});

describe('GET /api/admin/audit: the log for Admin → Audit log', () => {
  type Page = { events: AuditEvent[]; nextCursor: string | null };
  const read = async (query: string): Promise<Page> => {
    const res = await admin.client.get(`/api/admin/audit?${query}`);
    expect(res.status).toBe(200);
    return json(res);
  };

  test('newest first and current (queued events included), narrowed by action or group, login, status and time', async () => {
    const o = await seed.owner(t);
    expect((await t.client().post('/api/login', { email: o.email, password: 'not it' })).status).toBe(401);
    const mine = await read(`user=${encodeURIComponent(o.email)}`);
    expect(mine.events.map((e) => [e.action, e.status])).toEqual([
      ['auth.sign_in', 'failure'],
      ['auth.sign_in', 'success'],
    ]);
    expect(mine.events[0]).toMatchObject({ email: o.email, loginId: o.id, ip: '127.0.0.1', details: { reason: 'invalid_credentials' } });
    expect(mine.nextCursor).toBeNull();
    expect((await read(`user=${o.id}`)).events).toEqual(mine.events);
    await o.client.post('/api/logout');
    expect((await read(`user=${o.id}&action=auth`)).events).toHaveLength(3);
    expect((await read(`user=${o.id}&action=auth.sign_in`)).events).toHaveLength(2);
    expect((await read(`user=${o.id}&action=auth.sign`)).events).toHaveLength(0);
    expect((await read(`user=${o.id}&action=file`)).events).toHaveLength(0);
    expect((await read(`user=${o.id}&status=failure`)).events.map((e) => e.action)).toEqual(['auth.sign_in']);
    const later = new Date(clock.now() + 60_000).toISOString();
    expect((await read(`user=${o.id}&since=${encodeURIComponent(later)}`)).events).toEqual([]);
    const earlier = new Date(clock.now() - 60_000).toISOString();
    expect((await read(`user=${o.id}&since=${encodeURIComponent(earlier)}`)).events).toHaveLength(3);
  });

  test('pages follow on without a gap or a repeat, events of the same millisecond included', async () => {
    const o = await seed.owner(t);
    for (let i = 0; i < 5; i++) await t.client().post('/api/login', { email: o.email, password: `wrong ${i}` });
    const all = (await read(`user=${o.id}&limit=200`)).events;
    expect(all).toHaveLength(6);
    const seen: AuditEvent[] = [];
    let cursor = '';
    do {
      const page = await read(`user=${o.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.events.length).toBeLessThanOrEqual(2);
      seen.push(...page.events);
      cursor = page.nextCursor ?? '';
    } while (cursor);
    expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
  });

  test('the admin alone: another owner and the admin account’s sub-user get 403, no session 401; bad queries 422 naming the field', async () => {
    const o = await seed.owner(t);
    expect((await o.client.get('/api/admin/audit')).status).toBe(403);
    const sub = await seed.subUser(t, admin, ['files.upload', 'files.download', 'files.edit', 'files.delete']);
    expect((await sub.client.get('/api/admin/audit')).status).toBe(403);
    expect((await t.client().get('/api/admin/audit')).status).toBe(401);
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['action=auth%20sign_in', 'action'],
      ['status=maybe', 'status'],
      ['since=yesterday', 'since'],
      ['cursor=not-a-cursor', 'cursor'],
      [`user=${'x'.repeat(321)}`, 'user'],
    ]) {
      const res = await admin.client.get(`/api/admin/audit?${query}`);
      expect(res.status).toBe(422);
      expect(JSON.stringify(await json(res))).toContain(field!);
    }
  });
});
