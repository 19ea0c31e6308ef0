import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { LIBRARY_READ_ONLY } from '../../../src/contract/libraries.ts';
import { runCli } from '../../helpers/cli.ts';
import { json } from '../../helpers/client.ts';
import { type DavClient, davLogin } from '../../helpers/dav.ts';
import { folder, listAll } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer, tempDir } from '../../helpers/server.ts';
import { transactionAtRuns } from '../../helpers/statements.ts';

let t: TestServer;
let owner: seed.SeededLogin;
let dav: DavClient;
const writable = tempDir('coffer-lookups-library-');
const readOnly = tempDir('coffer-lookups-library-');

beforeAll(async () => {
  t = await startTestServer({ startWorker: false, env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });
  await seed.admin(t);
  owner = await seed.owner(t);
  dav = await davLogin(t, owner);
});
afterAll(async () => {
  await t.stop();
  for (const root of [writable, readOnly]) fs.rmSync(root, { recursive: true, force: true });
});

/** `coffer <args> --data-dir <the running server's dir>`: another process beside the server. */
const cli = (args: string[]) => runCli([...args, '--data-dir', t.dataDir]);

function upload(parentId: string, name: string, content: string) {
  const body = new FormData();
  body.append('parentId', parentId);
  body.append('files', new File([content], name));
  return owner.client.request('/api/files/upload', { method: 'POST', body });
}

/** Whether a transaction was open at each read of the library of an item, while `fn` runs. */
const libraryReads = (fn: () => Promise<void>) => transactionAtRuns(t, 'SELECT library_id FROM library_entries', fn);

describe('an upload into a folder while no library exists', () => {
  test('reads the library of its folder only inside its write transaction, through the API and WebDAV', async () => {
    const box = await folder(owner.client, 'Box');
    expect((await upload(box.id, 'warm.bin', 'warm')).status).toBe(200);
    const api = await libraryReads(async () => {
      expect((await upload(box.id, 'api.bin', 'four')).status).toBe(200);
    });
    const put = await libraryReads(async () => {
      expect((await dav.request('PUT', 'Box/dav.bin', { body: 'four' })).status).toBe(201);
    });
    // The write guard's read in the commit; the check before the body and the staging ask no SQL.
    expect(api).toEqual([true]);
    expect(put).toEqual([true]);
    expect(await (await dav.request('GET', 'Box/api.bin')).text()).toBe('four');
  });
});

describe('libraries added and removed by the CLI beside the running server', () => {
  test('are seen at the next upload: a writable one gets the bytes on the host, a read-only one refuses, a removed one is gone', async () => {
    expect((await upload((await folder(owner.client, 'Before')).id, 'first.bin', 'none yet')).status).toBe(200);

    expect((await cli(['libraries', 'add', writable, '--name', 'Writable', '--owner', owner.email])).code).toBe(0);
    const top = () => listAll(owner.client, '/api/files');
    const writableFolder = (await top()).find((i) => i.name === 'Writable');
    const landed = await upload(writableFolder.id, 'hello.txt', 'on the host');
    expect(landed.status).toBe(200);
    expect(await json(landed)).toMatchObject({ name: 'hello.txt', library: true });
    expect(fs.readFileSync(path.join(writable, 'hello.txt'), 'utf8')).toBe('on the host');

    expect((await cli(['libraries', 'add', readOnly, '--name', 'Shelf', '--owner', owner.email, '--read-only'])).code).toBe(0);
    const shelf = (await top()).find((i) => i.name === 'Shelf');
    const refused = await upload(shelf.id, 'no.txt', 'refused');
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toBe(LIBRARY_READ_ONLY);
    expect(fs.readdirSync(readOnly)).toEqual([]);
    const refusedPut = await dav.request('PUT', 'Shelf/no.txt', { body: 'refused' });
    expect(refusedPut.status).toBe(403);

    for (const name of ['Writable', 'Shelf']) expect((await cli(['libraries', 'remove', name])).code).toBe(0);
    expect((await top()).map((i) => i.name)).not.toContain('Writable');
    const after = await folder(owner.client, 'After');
    const reads = await libraryReads(async () => {
      expect((await upload(after.id, 'last.bin', 'none again')).status).toBe(200);
    });
    expect(reads).toEqual([true]);
  });
});
