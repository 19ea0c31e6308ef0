import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir } from '../../helpers/server.ts';
import * as seed from '../../helpers/seed.ts';
import { upload } from '../../helpers/files.ts';
import { eventually } from '../../helpers/eventually.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

interface JobRow {
  id: string;
  status: string;
  runAt: number;
  updatedAt: number;
}

describe('deletions waiting for the replica during an outage', () => {
  test('are put back with a doubling wait (5 s, then 10 s), not every 5 s, and run as soon as the destination has their commit again', async () => {
    const dir = tempDir('coffer-replica-deletions-');
    dirs.push(dir);
    const pass = path.join(dir, 'passphrase');
    fs.writeFileSync(pass, 'a long replica passphrase\n', { mode: 0o600 });
    const dest = path.join(dir, 'replica');
    const t = await startTestServer({ env: { BACKUP_PASSPHRASE_FILE: pass, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
    try {
      const a = await seed.admin(t);
      const file = await upload(a.client, 'doomed.txt', 'bytes the replica must not lose');
      await eventually(() => expect(fs.existsSync(dest) && fs.readdirSync(dest).some((n) => n.endsWith('_snapshot'))).toBe(true));
      // The destination away (a share unmounted, a file where its directory was): writes to it fail.
      fs.renameSync(dest, `${dest}.away`);
      fs.writeFileSync(dest, 'the destination is away');
      expect((await a.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
      expect((await a.client.post('/api/files/trash/delete', { ids: [file.id] })).status).toBe(202);

      const sqlite = t.server.ctx.db.$client;
      const rows = () =>
        sqlite
          .query<JobRow, []>(
            `SELECT id, status, run_at AS runAt, updated_at AS updatedAt FROM jobs WHERE kind = 'storage.delete' ORDER BY created_at`,
          )
          .all();
      // Each time the deletion is put back: how long it is told to wait.
      const waits: number[] = [];
      let last = 0;
      const until = performance.now() + 20_000;
      while (waits.length < 2 && performance.now() < until) {
        const job = rows()[0];
        if (job && job.status === 'created' && job.updatedAt !== last && job.runAt > job.updatedAt) {
          last = job.updatedAt;
          waits.push(job.runAt - job.updatedAt);
        }
        await Bun.sleep(50);
      }
      expect(waits).toEqual([5000, 10000]);
      const deferredUntil = rows()[0]!.runAt;

      fs.rmSync(dest);
      fs.renameSync(`${dest}.away`, dest);
      // Back: the deletion runs once its commit has shipped, well before the 10 s it was told to wait.
      await eventually(() => expect(rows()[0]!.status).toBe('completed'), { timeoutMs: 8_000 });
      expect(rows()[0]!.updatedAt).toBeLessThan(deferredUntil - 2_000);
    } finally {
      await t.stop();
    }
  }, 60_000);
});
