import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { ManualClock } from '../../../src/clock.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { rowCount, upload } from '../../helpers/files.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, tempDir } from '../../helpers/server.ts';

const DAY = 24 * 3_600_000;
const YEAR = 365 * DAY;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('a wall clock that jumps (a Raspberry Pi without a real-time clock, NTP)', () => {
  test('a year ahead and back while running: the daily backup and the other schedules keep their time of day, a waiting retry its delay', async () => {
    const root = tempDir('coffer-backups-');
    dirs.push(root);
    const passFile = path.join(root, 'passphrase');
    fs.writeFileSync(passFile, 'a long household passphrase\n', { mode: 0o600 });
    const env = { BACKUP_DIR: path.join(root, 'archives'), BACKUP_PASSPHRASE_FILE: passFile, BACKUP_SCHEDULE: 'daily 03:30' };
    const start = new Date(2030, 0, 10, 12, 0, 0).getTime();
    const clock = new ManualClock(start);
    const t = await startTestServer({ env, clock, startWorker: false });
    try {
      const admin = await seed.admin(t);
      // Signed in again at each reading: a year ahead ends the session.
      const backups = async () => json(await (await seed.login(t, admin.email)).get('/api/user/backups'));
      const nextBackup = async () => Date.parse((await backups()).nextRunAt);
      const due = new Date(2030, 0, 11, 3, 30, 0).getTime();
      expect(await nextBackup()).toBe(due);

      clock.jump(YEAR);
      await t.server.worker.drain();
      expect(await nextBackup()).toBe(due + YEAR);
      // The backup that ran a year ahead made one archive.
      expect(fs.readdirSync(env.BACKUP_DIR)).toHaveLength(1);
      const retry = t.server.ctx.queue.insert(Jobs.presenceSweep, null, { runAt: clock.now() + 60_000 });

      clock.jump(-YEAR);
      clock.advance(3_600_000);
      await t.server.worker.drain();
      expect(await nextBackup()).toBe(due);
      const purge = t.server.ctx.schedules.get('__trash.purge__')!;
      expect(purge.nextRunAt - clock.now()).toBeLessThanOrEqual(DAY);
      expect(purge.nextRunAt).toBeGreaterThan(clock.now());
      expect(t.server.ctx.queue.get(retry)!.runAt).toBe(clock.now() + 60_000);
      clock.advance(60_000);
      await t.server.worker.drain();
      expect(t.server.ctx.queue.get(retry)!.status).toBe('completed');

      clock.set(due + 1000);
      await t.server.worker.drain();
      expect((await backups()).lastRun).toMatchObject({ trigger: 'scheduled', status: 'succeeded' });
      expect(fs.readdirSync(env.BACKUP_DIR)).toHaveLength(2);
    } finally {
      await t.stop();
    }
  }, 60_000);

  test('a year ahead and back: the trash, the versions, a link with an expiry, sessions and the audit log are all still there, and retention goes on after', async () => {
    const clock = new ManualClock(Date.parse('2030-03-01T12:00:00Z'));
    const logger = memoryLogger();
    const t = await startTestServer({ clock, logger, startWorker: false });
    try {
      await seed.admin(t);
      const o = await seed.owner(t);
      const trashed = await upload(o.client, 'trashed.txt', 'in the trash');
      await o.client.post('/api/files/delete', { ids: [trashed.id] });
      const kept = await upload(o.client, 'kept.txt', 'first');
      const replace = async (content: string) => {
        const form = new FormData();
        form.append('file', new File([content], 'kept.txt'));
        expect((await o.client.request(`/api/files/${kept.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
      };
      await replace('second');
      const shared = await o.client.post('/api/files/share', { ids: [kept.id], shared: true });
      const token = /\/s\/([A-Za-z0-9_-]+)/.exec((await json(shared)).links[kept.id])![1]!;
      const versions = async (client: TestClient) => (await json(await client.get(`/api/files/${kept.id}/versions`))).versions.length;
      const auditEntries = () => {
        t.server.ctx.services.audit.flush();
        return t.server.ctx.services.audit.list({ limit: 10_000 }).length;
      };
      const entriesBefore = auditEntries();
      expect(await versions(o.client)).toBe(1);

      clock.jump(YEAR);
      await t.server.worker.drain();
      // A year ahead, every daily sweep has run; a replace thins the versions as it goes.
      const ahead = await seed.login(t, o.email);
      const form = new FormData();
      form.append('file', new File(['third'], 'kept.txt'));
      expect((await ahead.request(`/api/files/${kept.id}/replace`, { method: 'POST', body: form })).status).toBe(200);

      clock.jump(-YEAR);
      clock.advance(60_000);
      await t.server.worker.drain();
      expect(rowCount(t, 'id = ?', trashed.id)).toBe(1);
      expect(await versions(o.client)).toBe(2);
      expect((await fetch(`${t.url}/s/${token}`)).status).toBe(200);
      expect(auditEntries()).toBeGreaterThanOrEqual(entriesBefore);
      expect(logger.lines.some((l) => l.level === 'warn' && l.msg.startsWith('the clock jumped forward'))).toBe(true);

      // Real time passes: the trash's 30 days end and the daily purge takes it.
      clock.advance(31 * DAY);
      await t.server.worker.drain();
      expect(rowCount(t, 'id = ?', trashed.id)).toBe(0);
    } finally {
      await t.stop();
    }
  }, 60_000);

  test('a clock set right after a boot at 1970 (no real-time clock) is followed: the trash older than its retention is purged', async () => {
    const start = Date.parse('2030-03-01T12:00:00Z');
    const clock = new ManualClock(start);
    const t = await startTestServer({ clock, startWorker: false });
    try {
      await seed.admin(t);
      const o = await seed.owner(t);
      const trashed = await upload(o.client, 'trashed.txt', 'in the trash');
      await o.client.post('/api/files/delete', { ids: [trashed.id] });
      clock.advance(DAY);
      await t.server.worker.drain();
      clock.set(0);
      await t.restart();
      await t.server.worker.drain();
      expect(rowCount(t, 'id = ?', trashed.id)).toBe(1);
      clock.jump(start + 31 * DAY);
      await t.server.worker.drain();
      expect(rowCount(t, 'id = ?', trashed.id)).toBe(0);
    } finally {
      await t.stop();
    }
  }, 60_000);

  test('backups made while the clock was a year ahead do not push out the ones made after it came back (BACKUP_KEEP counts runs, not the times in their names)', async () => {
    const root = tempDir('coffer-backups-');
    dirs.push(root);
    const dir = path.join(root, 'archives');
    const clock = new ManualClock(Date.parse('2030-03-01T12:00:00Z'));
    const t = await startTestServer({ env: { BACKUP_DIR: dir, BACKUP_KEEP: '2' }, clock, startWorker: false });
    try {
      const admin = await seed.admin(t);
      const backUp = async () => {
        const client = await seed.login(t, admin.email);
        expect((await client.post('/api/user/backups/run', {})).status).toBe(202);
        await t.server.worker.drain();
        return (await json(await client.get('/api/user/backups'))).lastRun;
      };
      await backUp();
      clock.jump(YEAR);
      await backUp();
      clock.advance(DAY);
      await backUp();
      clock.jump(-YEAR);
      clock.advance(60_000);
      const last = await backUp();
      expect(last).toMatchObject({ status: 'succeeded' });
      expect(Date.parse(last.startedAt)).toBe(clock.now());
      // The newest archive and the one before it, whatever their names say.
      expect(fs.existsSync(last.archive)).toBe(true);
      expect(fs.readdirSync(dir)).toHaveLength(2);
      clock.advance(DAY);
      const next = await backUp();
      expect(fs.readdirSync(dir).sort()).toEqual([path.basename(last.archive), path.basename(next.archive)].sort());
    } finally {
      await t.stop();
    }
  }, 60_000);
});
