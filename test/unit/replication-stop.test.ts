import { afterAll, expect, test } from 'bun:test';
import fs from 'node:fs';
import { Database } from 'bun:sqlite';
import { systemClock } from '../../src/clock.ts';
import { dataPaths } from '../../src/data-dir.ts';
import { createLogger } from '../../src/log.ts';
import { MetricsService } from '../../src/services/admin/metrics.ts';
import { ReplicationService } from '../../src/services/maintenance/replication.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('coffer-replication-stop-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a full disk SQLite reports first is named as a full disk, as ENOSPC is', async () => {
  const paths = dataPaths(dir);
  let calls = 0;
  const replication = new ReplicationService({
    config: { destination: { kind: 'dir', dir: `${dir}-replica` }, intervalMs: 60_000, retentionMs: 86_400_000, maxLagBytes: 1 << 30 },
    paths,
    clock: systemClock,
    retentionClock: systemClock,
    metrics: new MetricsService(),
    log: createLogger('silent'),
    // The start's own check passes; the generation's snapshot then meets SQLite's full disk.
    passphrase: () => {
      if (++calls === 1) return 'passphrase';
      const full = new Database(':memory:');
      try {
        full.run('PRAGMA max_page_count = 1');
        full.run('CREATE TABLE t (x)');
        full.run('INSERT INTO t SELECT randomblob(10000) FROM (SELECT 1 UNION SELECT 2)');
      } finally {
        full.close();
      }
      return 'passphrase';
    },
    stagingDir: dir,
    autoCheckpoint: () => {},
  });
  const life = replication.lifecycle();
  await life.start?.();
  await life.stop?.(0);
  expect(replication.status().warning).toBe(
    'Replication stopped: the disk is full; it starts again with a new generation once there is space',
  );
});
