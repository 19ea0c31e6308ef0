import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { ManualClock } from '../../../src/clock.ts';
import { loadConfig, parseBackupSchedule } from '../../../src/config.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';
import { nextOccurrence } from '../../../src/services/maintenance/scheduled-backups.ts';
import { startTestServer, tempDir, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import { upload } from '../../helpers/files.ts';
import { storeFile } from '../../helpers/stored-files.ts';
import { parseExposition, sample } from '../../helpers/prometheus.ts';
import { startTestS3 } from '../../helpers/s3.ts';
import { eventually } from '../../helpers/eventually.ts';
import { runCli } from '../../helpers/cli.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function backupEnv(extra: Record<string, string> = {}): { env: Record<string, string>; dir: string; passFile: string } {
  const root = tempDir('coffer-backups-');
  dirs.push(root);
  const passFile = path.join(root, 'passphrase');
  fs.writeFileSync(passFile, 'a long household passphrase\n', { mode: 0o600 });
  const dir = path.join(root, 'archives');
  return { env: { BACKUP_DIR: dir, BACKUP_PASSPHRASE_FILE: passFile, ...extra }, dir, passFile };
}

const metrics = async (t: TestServer) => parseExposition(await (await fetch(`${t.url}/metrics`)).text());
const status = async (client: seed.SeededLogin) => json(await client.client.get('/api/user/backups'));

describe('Admin → Backups (GET /api/user/backups, POST /api/user/backups/run)', () => {
  test('only the admin: an owner and a sub-user get 403, no session 401', async () => {
    const t = await startTestServer();
    try {
      await seed.admin(t);
      const owner = await seed.owner(t);
      const sub = await seed.subUser(t, owner, ['files.upload']);
      for (const login of [owner, sub]) {
        expect((await login.client.get('/api/user/backups')).status).toBe(403);
        expect((await login.client.post('/api/user/backups/run', {})).status).toBe(403);
      }
      expect((await t.client().get('/api/user/backups')).status).toBe(401);
      expect((await t.client().post('/api/user/backups/run', {})).status).toBe(401);
      expect(t.server.ctx.queue.countByStatus().created).toBe(0);
    } finally {
      await t.stop();
    }
  });

  test('metrics exist from start-up at 0; "Back up now" writes an encrypted archive, and rotation keeps BACKUP_KEEP after success only', async () => {
    const { env, dir } = backupEnv({ BACKUP_KEEP: '2' });
    const t = await startTestServer({ env, startWorker: false });
    try {
      let m = await metrics(t);
      expect(sample(m, 'coffer_backup_last_success_timestamp_seconds')).toBe(0);
      expect(sample(m, 'coffer_backup_duration_seconds')).toBe(0);
      expect(sample(m, 'coffer_backup_failures_total')).toBe(0);

      const admin = await seed.admin(t);
      await upload(admin.client, 'family-photos.zip', 'zip bytes');
      let s = await status(admin);
      expect(s).toMatchObject({
        schedule: 'off',
        destination: dir,
        encrypted: true,
        keep: 2,
        running: false,
        lastRun: null,
        nextRunAt: null,
        warning: null,
      });

      for (let i = 0; i < 3; i++) {
        const res = await admin.client.post('/api/user/backups/run', {});
        expect(res.status).toBe(202);
        expect((await json(res)).jobId).toBeString();
        // A second click while the first waits in the queue is refused.
        expect((await admin.client.post('/api/user/backups/run', {})).status).toBe(409);
        await t.server.worker.drain();
        // Archive names carry the time to the millisecond: apart, so each run has its own.
        await Bun.sleep(5);
      }
      s = await status(admin);
      expect(s.lastRun).toMatchObject({ trigger: 'manual', status: 'succeeded', error: null });
      expect(s.lastRun.bytes).toBeGreaterThan(1000);
      expect(s.lastRun.durationSeconds).toBeGreaterThanOrEqual(0);
      expect(s.lastSuccessAt).toBe(s.lastRun.finishedAt);
      const archives = fs.readdirSync(dir).sort();
      expect(archives).toHaveLength(2);
      expect(archives.every((n) => /^coffer-backup-\d{8}T\d{9}Z\.tar\.enc$/.test(n))).toBe(true);
      expect(path.join(dir, archives[1]!)).toBe(s.lastRun.archive);
      const bytes = fs.readFileSync(s.lastRun.archive);
      expect(bytes.subarray(0, 8).toString()).toBe('COFFERBK');
      expect(bytes.includes(Buffer.from('family-photos.zip'))).toBe(false);
      expect(bytes.includes(Buffer.from(admin.email))).toBe(false);

      m = await metrics(t);
      expect(sample(m, 'coffer_backup_last_success_timestamp_seconds')).toBe(Math.floor(Date.parse(s.lastSuccessAt) / 1000));
      expect(sample(m, 'coffer_backup_failures_total')).toBe(0);

      // A failed run keeps every archive, and says why.
      fs.rmSync(dir, { recursive: true });
      fs.writeFileSync(dir, 'a file where the directory should be');
      await admin.client.post('/api/user/backups/run', {});
      await t.server.worker.drain();
      s = await status(admin);
      expect(s.lastRun.status).toBe('failed');
      expect(s.lastFailure.error).toContain('EEXIST');
      expect(s.lastSuccessAt).not.toBeNull();
      expect(sample(await metrics(t), 'coffer_backup_failures_total')).toBe(1);
    } finally {
      await t.stop();
    }
  }, 120_000);

  test('a schedule enqueues the run at its time (server-local), a failed scheduled run raises the warning, and a restart mid-run starts over', async () => {
    const { env, dir } = backupEnv({ BACKUP_SCHEDULE: 'daily 03:30' });
    const start = new Date(2030, 0, 10, 12, 0, 0).getTime();
    const clock = new ManualClock(start);
    const t = await startTestServer({ env, clock, startWorker: false });
    try {
      const admin = await seed.admin(t);
      let s = await status(admin);
      expect(s.schedule).toBe('every day at 03:30');
      const due = new Date(2030, 0, 11, 3, 30, 0).getTime();
      expect(Date.parse(s.nextRunAt)).toBe(due);
      clock.set(due - 1000);
      await t.server.worker.drain();
      expect(fs.existsSync(dir)).toBe(false);
      clock.set(due + 1000);
      await t.server.worker.drain();
      s = await status(admin);
      expect(s.lastRun).toMatchObject({ trigger: 'scheduled', status: 'succeeded' });
      expect(Date.parse(s.nextRunAt)).toBe(due + 24 * 3_600_000);
      expect(s.warning).toBeNull();
      expect(fs.readdirSync(dir)).toHaveLength(1);

      // Three days without a success: older than twice the interval.
      clock.set(due + 3 * 24 * 3_600_000 - 1000);
      expect((await status(admin)).warning).toContain('more than twice');

      // Interrupted: a run marked running, its job active and a partial archive, as a kill -9 leaves them.
      clock.set(due + 24 * 3_600_000 - 60_000);
      const ctx = t.server.ctx;
      ctx.queue.insert(Jobs.backupRun, { trigger: 'scheduled' });
      expect(ctx.queue.claim()?.kind).toBe('backup.run');
      ctx.repos.backupRuns.start({ id: 'interrupted', trigger: 'scheduled', startedAt: clock.now() });
      fs.writeFileSync(path.join(dir, 'coffer-backup-20300113T033000000Z.tar.enc.partial-99999'), 'half');
      // And the database snapshot that run was reading from, named with the pid of a process now gone.
      const staleSnapshot = path.join(t.dataDir, '.backup-snapshot-99999999-0.db');
      fs.writeFileSync(staleSnapshot, 'snapshot');
      await t.restart({ samePort: true });
      expect(fs.readdirSync(dir).some((n) => n.includes('.partial-'))).toBe(false);
      expect(fs.existsSync(staleSnapshot)).toBe(false);
      s = await status(admin);
      expect(s.lastRun).toMatchObject({ status: 'failed', error: 'interrupted by a restart; the backup started over' });
      expect(s.warning).toContain('The last scheduled backup failed');
      await t.server.worker.drain();
      s = await status(admin);
      expect(s.lastRun).toMatchObject({ trigger: 'scheduled', status: 'succeeded' });
      expect(s.warning).toBeNull();
      expect(fs.readdirSync(dir)).toHaveLength(2);
    } finally {
      await t.stop();
    }
  }, 120_000);

  test('a server shutdown stops a running backup: no partial archive is left, and its job runs again after the restart', async () => {
    const { env, dir } = backupEnv();
    const t = await startTestServer({ env, startWorker: false });
    try {
      const admin = await seed.admin(t);
      // Enough that the backup is still writing when the server stops (8 × 32 MiB).
      for (let i = 0; i < 8; i++) await storeFile(t.server.ctx, admin.id, { size: 32 * 1024 * 1024 });
      expect((await admin.client.post('/api/user/backups/run', {})).status).toBe(202);
      const draining = t.server.worker.drain();
      await eventually(() => fs.existsSync(dir) && fs.readdirSync(dir).some((n) => n.includes('.partial-')), { timeoutMs: 30_000 });
      await t.restart({ samePort: true });
      await draining;
      expect(fs.readdirSync(dir)).toEqual([]);
      let s = await status(admin);
      expect(s.lastRun).toMatchObject({ status: 'failed', error: 'stopped by a server shutdown; it starts over when the server is back' });
      await t.server.worker.drain();
      s = await status(admin);
      expect(s.lastRun).toMatchObject({ trigger: 'manual', status: 'succeeded' });
      expect(fs.readdirSync(dir)).toHaveLength(1);
    } finally {
      await t.stop();
    }
  }, 120_000);

  test('to a bucket: encrypted, rotated there; start-up refuses a bucket without BACKUP_PASSPHRASE_FILE', async () => {
    const s3 = await startTestS3();
    const prefix = `backups-${Date.now()}/`;
    const bucketEnv = Object.fromEntries(
      Object.entries(s3.env('unused/'))
        .filter(([k]) => k.startsWith('S3_'))
        .map(([k, v]) => [`BACKUP_${k}`, v]),
    );
    bucketEnv.BACKUP_S3_PREFIX = prefix;
    expect(() => loadConfig({}, bucketEnv)).toThrow('BACKUP_PASSPHRASE_FILE is required when BACKUP_S3_BUCKET is set');
    const { BACKUP_S3_ACCESS_KEY_ID: _, ...noKey } = bucketEnv;
    expect(() => loadConfig({}, { ...noKey, BACKUP_PASSPHRASE_FILE: '/dev/null' })).toThrow(
      'BACKUP_S3_ACCESS_KEY_ID is required when BACKUP_S3_BUCKET is set',
    );
    const { env } = backupEnv({ ...bucketEnv, BACKUP_KEEP: '1' });
    const t = await startTestServer({ env, startWorker: false });
    try {
      const admin = await seed.admin(t);
      for (let i = 0; i < 2; i++) {
        expect((await admin.client.post('/api/user/backups/run', {})).status).toBe(202);
        await t.server.worker.drain();
        await Bun.sleep(5);
      }
      const s = await status(admin);
      expect(s.lastRun.status).toBe('succeeded');
      expect(s.destination).toBe(`s3://${s3.bucket}/${prefix}`);
      const keys = s3.objectKeys(prefix);
      expect(keys).toHaveLength(1);
      expect(s.lastRun.archive).toBe(`s3://${s3.bucket}/${keys[0]}`);
      const stored = fs.readFileSync(s3.objectFile(keys[0]!));
      expect(stored.subarray(0, 8).toString()).toBe('COFFERBK');
      expect(stored.includes(Buffer.from(admin.email))).toBe(false);
      // Downloaded from the bucket, it restores with the passphrase.
      const copy = path.join(path.dirname(env.BACKUP_PASSPHRASE_FILE!), 'from-bucket.tar.enc');
      fs.writeFileSync(copy, stored);
      const r = await runCli(['restore', copy, '--data-dir', path.join(path.dirname(copy), 'restored')], {
        env: { BACKUP_PASSPHRASE_FILE: env.BACKUP_PASSPHRASE_FILE! },
        timeoutMs: 60_000,
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    } finally {
      await t.stop();
      await s3.stop();
    }
  }, 120_000);
});

describe('BACKUP_SCHEDULE', () => {
  test('off, hourly, daily and weekly parse; anything else is refused with the forms it takes', () => {
    expect(parseBackupSchedule(undefined)).toEqual({ kind: 'off' });
    expect(parseBackupSchedule('Hourly')).toEqual({ kind: 'hourly' });
    expect(parseBackupSchedule('daily 3:05')).toEqual({ kind: 'daily', hour: 3, minute: 5 });
    expect(parseBackupSchedule('weekly Saturday 23:59')).toEqual({ kind: 'weekly', day: 6, hour: 23, minute: 59 });
    for (const bad of ['daily', 'daily 24:00', 'weekly funday 03:00', 'every day', 'daily 03:60']) {
      expect(() => parseBackupSchedule(bad)).toThrow('BACKUP_SCHEDULE must be off, hourly, "daily HH:MM" or "weekly DAY HH:MM"');
    }
  });
});

describe('nextOccurrence', () => {
  test('hourly, daily and weekly in server-local time', () => {
    const at = new Date(2030, 4, 15, 10, 20).getTime(); // a Wednesday
    expect(nextOccurrence({ kind: 'hourly' }, at)).toBe(new Date(2030, 4, 15, 11, 0).getTime());
    expect(nextOccurrence({ kind: 'daily', hour: 10, minute: 20 }, at)).toBe(new Date(2030, 4, 16, 10, 20).getTime());
    expect(nextOccurrence({ kind: 'daily', hour: 23, minute: 0 }, at)).toBe(new Date(2030, 4, 15, 23, 0).getTime());
    expect(nextOccurrence({ kind: 'weekly', day: 0, hour: 3, minute: 0 }, at)).toBe(new Date(2030, 4, 19, 3, 0).getTime());
    expect(nextOccurrence({ kind: 'weekly', day: 3, hour: 9, minute: 0 }, at)).toBe(new Date(2030, 4, 22, 9, 0).getTime());
    expect(nextOccurrence({ kind: 'off' }, at)).toBeNull();
  });
});
