import { expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { seedRows } from '../helpers/files.ts';
import { runCli, serveCli } from '../helpers/cli.ts';
import { mountSmallDisk } from '../helpers/small-disk.ts';
import { randomBytes } from 'node:crypto';

test('restore onto a small disk', async () => {
  const dir = tempDir('small-');
  const pass = path.join(dir, 'pass');
  fs.writeFileSync(pass, 'pass phrase here\n');
  const env = { BACKUP_PASSPHRASE_FILE: pass };
  const dest = path.join(dir, 'replica');
  const t = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
  const a = await seed.admin(t);
  seedRows(t, a.id, null, 3000, (i) => ({ name: `row-${i}-${randomBytes(100).toString('hex')}`, type: 'folder' }));
  await Bun.sleep(1000);
  await t.stop();
  const disk = mountSmallDisk(3);
  if (typeof disk === 'string') throw new Error(disk);
  try {
    const out = path.join(disk.dir, 'data');
    const r = await runCli(['restore', '--from-replica', dest, '--data-dir', out, '--json'], { env });
    console.log(r.code, r.stdout, r.stderr);
    console.log(fs.readdirSync(disk.dir));
    const sb = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', path.join(disk.dir, 'sb'), '--standby', dest], { env }).catch((e) => { console.log('standby', String(e)); return null; });
    if (sb) { console.log(await (await fetch(sb.url + '/health')).json()); await sb.stop(); }
    console.log(fs.readdirSync(disk.dir), fs.existsSync(path.join(disk.dir, 'sb')) && fs.readdirSync(path.join(disk.dir, 'sb')));
  } finally { disk.unmount(); }
}, 60000);
