import { expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { startTestServer, tempDir } from '../helpers/server.ts';
import { ManualClock } from '../../src/clock.ts';
import * as seed from '../helpers/seed.ts';
import { upload } from '../helpers/files.ts';
import { parseJson, runCli } from '../helpers/cli.ts';

test('clock set back mid-generation', async () => {
  const dir = tempDir('skew-');
  const pass = path.join(dir, 'pass');
  fs.writeFileSync(pass, 'pass phrase here\n');
  const env = { BACKUP_PASSPHRASE_FILE: pass };
  const dest = path.join(dir, 'replica');
  const dataDir = path.join(dir, 'data');
  const clock = new ManualClock();
  const t = await startTestServer({ dataDir, clock, env: { ...env, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '100' } });
  const a = await seed.admin(t);
  await Bun.sleep(500);
  for (let i = 0; i < 3; i++) { await upload(a.client, `early-${i}.txt`, 'one'); await Bun.sleep(300); clock.advance(2000); }
  const mid = clock.now();
  clock.jump(-10_000);
  for (let i = 0; i < 3; i++) { await upload(a.client, `late-${i}.txt`, 'one'); await Bun.sleep(300); clock.advance(2000); }
  await Bun.sleep(500);
  await t.stop();
  console.log(fs.readdirSync(dest).filter(n=>n.includes('_wal_')).sort());
  for (const at of [mid - 3000, mid - 1000, mid + 1000]) {
  const out = path.join(dir, 'out'+at);
  const r = await runCli(['restore', '--from-replica', dest, '--data-dir', out, '--json', '--at', String(Math.floor(at/1000))], { env });
  console.log(r.code, r.stderr, r.code===0 && parseJson(r).segments);
  if (r.code === 0) { const db = new Database(path.join(out, 'coffer.db'), { readonly: true });
  console.log(db.query(`SELECT name FROM items WHERE type='file' order by name`).all().map((x:any)=>x.name).join(' '), db.query('pragma integrity_check').all()); }
  }
}, 60000);
