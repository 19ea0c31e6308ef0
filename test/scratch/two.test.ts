import { expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { upload } from '../helpers/files.ts';
import { parseJson, runCli } from '../helpers/cli.ts';

test('two primaries from a copied data dir', async () => {
  const dir = tempDir('two-');
  const pass = path.join(dir, 'pass');
  fs.writeFileSync(pass, 'pass phrase here\n');
  const env = { BACKUP_PASSPHRASE_FILE: pass };
  const dest = path.join(dir, 'replica');
  const e = { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' };
  const d1 = path.join(dir, 'd1'), d2 = path.join(dir, 'd2');
  let t1 = await startTestServer({ dataDir: d1, env: e });
  const a = await seed.admin(t1);
  await upload(a.client, 'common.txt', 'x');
  await Bun.sleep(600);
  // hot copy while running
  fs.cpSync(d1, d2, { recursive: true });
  fs.rmSync(path.join(d2, 'coffer.lock'), { force: true });
  const t2 = await startTestServer({ dataDir: d2, env: e });
  const c1 = a.client; const c2 = await seed.login(t2, a.email);
  for (let i = 0; i < 10; i++) { await upload(c1, `one-${i}.txt`, 'x'); await upload(c2, `two-${i}.txt`, 'y'); await Bun.sleep(100); }
  await Bun.sleep(1000);
  const st = async (c: any) => ((await (await c.get('/api/user/backups')).json()) as any).replication;
  console.log('t1', await st(c1)); console.log('t2', await st(c2));
  console.log(fs.readdirSync(dest).sort().join('\n'));
  console.log(fs.readFileSync(path.join(dest, 'coffer-replica-fence'), 'utf8'));
  await t1.stop(); await t2.stop();
  const out = path.join(dir, 'out');
  const r = await runCli(['restore', '--from-replica', dest, '--data-dir', out, '--json'], { env });
  console.log(r.code, r.stderr);
  const db = new Database(path.join(out, 'coffer.db'), { readonly: true });
  console.log(db.query(`SELECT name FROM items WHERE type='file' order by name`).all().map((x: any) => x.name).join(' '));
  const v = await runCli(['replica', 'verify', dest], { env });
  console.log(v.code, v.stdout, v.stderr);
}, 60000);
