import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import { type TestServer, tempDir } from '../../helpers/server.ts';
import { libraryServer } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

// A site folder holding the scheduled backups' folder (BACKUP_DIR) beside other folders.
const site = tempDir('coffer-site-');
const backups = path.join(site, 'backups');
fs.mkdirSync(path.join(backups, 'old'), { recursive: true });
fs.mkdirSync(path.join(site, 'photos'));
// The configuration file this server reads (COFFER_CONFIG), in a folder of its own.
const conf = path.join(site, 'conf');
fs.mkdirSync(conf);
fs.writeFileSync(path.join(conf, 'coffer.env'), 'S3_SECRET_ACCESS_KEY=not-for-a-library\n');

libraryServer((s) => ({ t, admin } = s), {
  env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0', BACKUP_DIR: backups, COFFER_CONFIG: path.join(conf, 'coffer.env') },
});
afterAll(() => fs.rmSync(site, { recursive: true, force: true }));

describe('a library path and Coffer’s own files outside its data directory', () => {
  test('a folder holding the scheduled backups (full archives: the database, secrets.json, every object), or inside them → 400 naming why', async () => {
    const owner = await seed.owner(t);
    const add = (p: string, name: string) => admin.client.post('/api/admin/libraries', { path: p, name, owner: owner.email });
    const real = fs.realpathSync(backups);
    for (const [p, message] of [
      [site, `${site} holds Coffer's scheduled backups (${real}).`],
      [backups, `${backups} is inside Coffer's scheduled backups (${real}).`],
      [path.join(backups, 'old'), `${path.join(backups, 'old')} is inside Coffer's scheduled backups (${real}).`],
    ] as const) {
      const res = await add(p, 'Refused');
      expect(res.status).toBe(400);
      expect((await json(res)).message).toBe(message);
    }
    expect((await add(path.join(site, 'photos'), 'Photos')).status).toBe(201);
  });

  test("a folder holding Coffer's configuration file, or /etc (which holds /etc/coffer, where install.sh keeps it and the secret files) → 400 naming why", async () => {
    const owner = await seed.owner(t);
    const add = (p: string) => admin.client.post('/api/admin/libraries', { path: p, name: 'Refused', owner: owner.email });
    const file = path.join(fs.realpathSync(conf), 'coffer.env');
    for (const [p, message] of [
      [conf, `${conf} holds Coffer's configuration file (${file}).`],
      ['/etc', "/etc holds Coffer's configuration folder (/etc/coffer)."],
    ] as const) {
      const res = await add(p);
      expect(res.status).toBe(400);
      expect((await json(res)).message).toBe(message);
    }
  });
});
