import { expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { upload } from '../helpers/files.ts';
import { startTestS3 } from '../helpers/s3.ts';
import { randomBytes } from 'node:crypto';

test('stalled destination', async () => {
  const s3 = await startTestS3();
  const dir = tempDir('stall-');
  const pass = path.join(dir, 'pass');
  fs.writeFileSync(pass, 'pass phrase here\n');
  const prefix = 'rep/';
  const e = s3.env(prefix);
  const env = { BACKUP_PASSPHRASE_FILE: pass, BACKUP_S3_ENDPOINT: e.S3_ENDPOINT!, BACKUP_S3_ACCESS_KEY_ID: e.S3_ACCESS_KEY_ID!, BACKUP_S3_SECRET_ACCESS_KEY: e.S3_SECRET_ACCESS_KEY!, COFFER_STORAGE: 'local', REPLICATE_TO: `s3://${s3.bucket}/${prefix}`, REPLICATE_INTERVAL_MS: '100' };
  const t = await startTestServer({ env });
  const a = await seed.admin(t);
  await upload(a.client, 'x.txt', 'x');
  await Bun.sleep(1000);
  s3.stall(600_000, (m) => m === 'PUT' || m === 'GET');
  const outbox = path.join(t.dataDir, 'replication', 'outbox');
  const t0 = Date.now();
  for (let i = 0; i < 40; i++) {
    await upload(a.client, `f-${i}.bin`, randomBytes(4096));
    await Bun.sleep(250);
    if (i % 5 === 0) {
      const m = await (await a.client.get('/metrics')).text();
      console.log(((Date.now() - t0) / 1000).toFixed(1), 'outbox', fs.readdirSync(outbox).length, 'wal', fs.statSync(path.join(t.dataDir, 'coffer.db-wal')).size, m.split('\n').filter((l) => l.startsWith('coffer_replication_')).join(' | '));
    }
  }
  const s0 = Date.now();
  await t.server.stop({ graceMs: 1000 });
  console.log('stop took', Date.now() - s0);
  await s3.stop();
}, 120000);
