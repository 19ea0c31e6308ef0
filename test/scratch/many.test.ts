import { expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { upload } from '../helpers/files.ts';
import { runCli, serveCli } from '../helpers/cli.ts';
import { objectName } from '../../src/services/maintenance/replica-format.ts';

function cpu(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

test('a replica with many segments', async () => {
  const dir = tempDir('many-');
  const pass = path.join(dir, 'pass');
  fs.writeFileSync(pass, 'pass phrase here\n');
  const env = { BACKUP_PASSPHRASE_FILE: pass };
  const dest = path.join(dir, 'replica');
  const t = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '1000', REPLICATE_RETENTION: '30d' } });
  const a = await seed.admin(t);
  await upload(a.client, 'x.txt', 'x');
  await Bun.sleep(2000);
  // a day of an older generation's segments: names only (listed, never read)
  const old = 'g20261101T000000000Z-00000000';
  const t0 = performance.now();
  for (let i = 1; i <= 86400; i++) fs.writeFileSync(path.join(dest, objectName.wal(old, i, 1793000000000 + i * 1000)), 'x');
  for (const k of ['descriptor', 'secrets', 'snapshot']) fs.writeFileSync(path.join(dest, `${old}_${k}`), 'x');
  console.log('made in', performance.now() - t0);
  const sb = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', path.join(dir, 'sb'), '--standby', dest], { env: { ...env, REPLICATE_INTERVAL_MS: '1000' } });
  const c0 = cpu(sb.proc.pid); const w0 = performance.now();
  await Bun.sleep(10000);
  console.log('standby cpu s per wall s', (cpu(sb.proc.pid) - c0) / ((performance.now() - w0) / 1000));
  console.log(await (await fetch(sb.url + '/health')).json());
  await sb.stop();
  const r0 = performance.now();
  const r = await runCli(['replica', 'list', dest], { env });
  console.log('list', r.code, performance.now() - r0);
  await t.stop();
}, 120000);
