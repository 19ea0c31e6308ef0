import { expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { upload } from '../helpers/files.ts';
import { runCli, serveCli } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';

test('failed promotion', async () => {
  const dir = tempDir('pr-');
  const pass = path.join(dir, 'pass');
  fs.writeFileSync(pass, 'pass phrase here\n');
  const env = { BACKUP_PASSPHRASE_FILE: pass };
  const dest = path.join(dir, 'replica');
  const t = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
  const a = await seed.admin(t);
  await upload(a.client, 'one.txt', 'x');
  await Bun.sleep(500);
  const sb = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', path.join(dir, 'standby'), '--standby', dest], { env: { ...env, REPLICATE_INTERVAL_MS: '100' } });
  const health = async () => (await fetch(`${sb.url}/health`)).json();
  console.log(await health());
  fs.renameSync(dest, dest + '.away');
  fs.writeFileSync(dest, 'away');
  const p = await runCli(['promote', '--port', new URL(sb.url).port]);
  console.log(p);
  fs.rmSync(dest);
  fs.renameSync(dest + '.away', dest);
  for (let i = 0; i < 5; i++) { await upload(a.client, `after-${i}.txt`, 'x'); await Bun.sleep(300); }
  await Bun.sleep(1000);
  console.log(await health());
  console.log(fs.readdirSync(dest).filter(n=>n.includes('wal')).length);
  await sb.stop();
  await t.stop();
}, 60000);
