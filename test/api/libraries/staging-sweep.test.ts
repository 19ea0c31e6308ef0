import { expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { ManualClock } from '../../../src/clock.ts';
import { eventually } from '../../helpers/eventually.ts';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, children, hostDir, libraryServer, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;
const clock = new ManualClock();

libraryServer((s) => ({ t, admin } = s), { startWorker: false, clock });

async function rescan(id: string): Promise<void> {
  expect((await admin.client.post(`/api/admin/libraries/${id}/rescan`, {})).status).toBeLessThan(300);
  await eventually(async () => (await json(await admin.client.get(`/api/admin/libraries/${id}`))).scanning === null);
}

test("a scan removes the temporary files an interrupted write left in a writable library once they are 6 hours old, never a read-only library's", async () => {
  const owner = await seed.owner(t);
  const writable = hostDir();
  const readOnly = hostDir();
  for (const root of [writable, readOnly]) {
    write(root, 'kept.txt', 'kept');
    write(root, 'Sub/.coffer-upload-left', 'half a file');
  }
  const lib = await addLibrary(admin, writable, owner);
  const ro = await addLibrary(admin, readOnly, owner, { readOnly: true });
  const left = (root: string) => fs.existsSync(path.join(root, 'Sub/.coffer-upload-left'));

  // A fresh one may be a write about to land: left alone, and never listed.
  await rescan(lib.id);
  expect(left(writable)).toBe(true);
  const sub = (await children(owner, lib.folderId)).find((i) => i.name === 'Sub');
  expect(await children(owner, sub.id)).toEqual([]);

  clock.advance(6 * 3600_000 + 60_000);
  await rescan(lib.id);
  await rescan(ro.id);
  expect(left(writable)).toBe(false);
  expect(left(readOnly)).toBe(true);
  expect(fs.readFileSync(path.join(writable, 'kept.txt'), 'utf8')).toBe('kept');
});
