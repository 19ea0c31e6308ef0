import { test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { upload } from '../helpers/files.ts';
import { runCli } from '../helpers/cli.ts';

test('doctor text', async () => {
  const dir = tempDir('doc-');
  const pass = path.join(dir, 'pass');
  fs.writeFileSync(pass, 'pass phrase here\n');
  const dest = path.join(dir, 'replica');
  const env = { BACKUP_PASSPHRASE_FILE: pass, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' };
  const dataDir = path.join(dir, 'd');
  const t = await startTestServer({ dataDir, env });
  const a = await seed.admin(t);
  await upload(a.client, 'x.txt', 'x');
  await Bun.sleep(500);
  let r = await runCli(['doctor', '--data-dir', dataDir], { env });
  console.log(r.code, r.stdout.split('\n').slice(-4).join('\n'));
  fs.rmSync(dest, { recursive: true }); fs.writeFileSync(dest, 'away');
  await upload(a.client, 'y.txt', 'y');
  await Bun.sleep(500);
  await t.server.stop();
  await Bun.sleep(11000);
  r = await runCli(['doctor', '--data-dir', dataDir], { env });
  console.log(r.code, r.stdout.split('\n').slice(-4).join('\n'), r.stderr);
}, 60000);
