import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { LIBRARY_NOT_ENCRYPTED } from '../../src/contract/libraries.ts';
import { parseJson, runCli } from '../helpers/cli.ts';
import { json } from '../helpers/client.ts';
import { listAll } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer, tempDir } from '../helpers/server.ts';

let t: TestServer;
let owner: seed.SeededLogin;
const root = tempDir('coffer-cli-library-');

beforeAll(async () => {
  t = await startTestServer({ env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });
  await seed.admin(t);
  owner = await seed.owner(t);
  for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(root, `photo-${i}.txt`), `photo ${i}`);
});
afterAll(async () => {
  await t.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/** `coffer <args> --data-dir <the running server's dir>`, beside the running server. */
const cli = (args: string[]) => runCli([...args, '--data-dir', t.dataDir]);

describe('coffer libraries', () => {
  test('add: warns that the files are not encrypted, scans, and the owner sees the library in My files', async () => {
    const r = await cli(['libraries', 'add', root, '--name', 'Photos', '--owner', owner.email, '--read-only']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(LIBRARY_NOT_ENCRYPTED);
    expect(r.stdout).toContain('added library Photos');
    expect(r.stdout).toContain('50 entries: 50 added');
    const top = await listAll(owner.client, '/api/files');
    expect(top.map((i) => i.name)).toEqual(['Photos']);
    expect((await listAll(owner.client, `/api/files?parentId=${top[0].id}`)).length).toBe(50);
  });

  test('add: a bad path, a second library on the same folder, an unknown owner → exit 1 with the reason', async () => {
    const relative = await cli(['libraries', 'add', 'photos', '--name', 'X', '--owner', owner.email]);
    expect(relative.code).toBe(1);
    expect(relative.stderr).toContain('not an absolute path');
    const again = await cli(['libraries', 'add', root, '--name', 'Again', '--owner', owner.email]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('inside the library');
    const nobody = await cli(['libraries', 'add', tempDir(), '--name', 'Y', '--owner', 'nobody@example.test']);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('No account with email');
  });

  test('doctor and orphans count no library file as a missing object or as usage; the owner uses no storage for them', async () => {
    const doctor = parseJson(await cli(['doctor', '--json']));
    expect(doctor.missingObjects.count).toBe(0);
    expect(doctor.usage.mismatches).toEqual([]);
    expect((await json(await owner.client.get('/api/user/storage'))).used).toBe(0);
  });

  test('list and rescan: a new file on the host is found by the rescan', async () => {
    const listed = parseJson(await cli(['libraries', 'list', '--json']));
    expect(listed.libraries).toHaveLength(1);
    expect(listed.libraries[0]).toMatchObject({ name: 'Photos', readOnly: true, files: 50, available: true });
    fs.writeFileSync(path.join(root, 'photo-new.txt'), 'new');
    const r = await cli(['libraries', 'rescan', 'Photos']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1 added');
    const table = await cli(['libraries', 'list']);
    expect(table.stdout).toContain('read-only');
    expect(table.stdout).toContain(fs.realpathSync(root));
  });

  test('remove: the library leaves My files; its folder keeps every file', async () => {
    const r = await cli(['libraries', 'remove', 'Photos']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('its files stay in');
    expect(await listAll(owner.client, '/api/files')).toEqual([]);
    expect(fs.readdirSync(root)).toHaveLength(51);
    const missing = await cli(['libraries', 'rescan', 'Photos']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no library named Photos');
  });
});
