import { expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { upload } from '../helpers/files.ts';
import { randomBytes } from 'node:crypto';

test('restarts while the destination is away', async () => {
  const dir = tempDir('ob-');
  const pass = path.join(dir, 'pass');
  fs.writeFileSync(pass, 'pass phrase here\n');
  const env = { BACKUP_PASSPHRASE_FILE: pass };
  const dest = path.join(dir, 'replica');
  const dataDir = path.join(dir, 'data');
  const e = { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100', REPLICATE_MAX_LAG_BYTES: '1M' };
  const t = await startTestServer({ dataDir, env: e });
  const a = await seed.admin(t);
  // grow the db
  for (let i = 0; i < 200; i++) await a.client.post('/api/folders', { name: `folder-${i}-${randomBytes(200).toString('hex')}` });
  await Bun.sleep(500);
  fs.writeFileSync(dest + '.x', '');
  fs.renameSync(dest, dest + '.away');
  fs.writeFileSync(dest, 'away');
  const ob = () => fs.readdirSync(path.join(dataDir, 'replication', 'outbox')).map((n) => [n, fs.statSync(path.join(dataDir, 'replication', 'outbox', n)).size]);
  for (let r = 0; r < 6; r++) {
    await t.restart();
    await Bun.sleep(400);
    const o = ob();
    console.log(r, o.length, o.reduce((s, x) => s + (x[1] as number), 0), fs.statSync(path.join(dataDir,'coffer.db')).size);
  }
  console.log(ob());
  await t.stop();
}, 60000);
