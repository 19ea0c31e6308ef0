import { expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { seedRows } from '../helpers/files.ts';
import { MAIN } from '../helpers/cli.ts';
import { randomBytes } from 'node:crypto';

test('standby killed mid-build', async () => {
  const dir = tempDir('sbk-');
  const pass = path.join(dir, 'pass');
  fs.writeFileSync(pass, 'pass phrase here\n');
  const env = { BACKUP_PASSPHRASE_FILE: pass };
  const dest = path.join(dir, 'replica');
  const t = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
  const a = await seed.admin(t);
  seedRows(t, a.id, null, 40000, (i) => ({ name: `row-${i}-${randomBytes(100).toString('hex')}`, type: 'folder' }));
  await t.restart();
  await Bun.sleep(3000);
  await t.stop();
  const sbDir = path.join(dir, 'sb');
  for (let k = 0; k < 3; k++) {
    const proc = Bun.spawn([process.execPath, MAIN, 'serve', '--port', '0', '--data-dir', sbDir, '--standby', dest], { env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', ...env }, stdout: 'ignore', stderr: 'ignore' });
    for (let i = 0; i < 5000; i++) { if (fs.existsSync(sbDir) && fs.readdirSync(sbDir).some((n) => /^\.standby-\d+\.db$/.test(n))) break; Bun.sleepSync(2); }
    proc.kill('SIGKILL'); await proc.exited;
    console.log(fs.readdirSync(sbDir).map((n) => `${n}:${fs.statSync(path.join(sbDir, n)).size}`).join(' '));
  }
}, 120000);
