import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { ManualClock } from '../../../src/clock.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';
import { json } from '../../helpers/client.ts';
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

      clock.set(start + YEAR);
      await t.server.worker.drain();
      expect(await nextBackup()).toBe(due + YEAR);
      const retry = t.server.ctx.queue.insert(Jobs.presenceSweep, null, { runAt: clock.now() + 60_000 });

      clock.set(start + 3_600_000);
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
    } finally {
      await t.stop();
    }
  }, 60_000);
});
