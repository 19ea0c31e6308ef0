import { expect } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { LIBRARY_NOT_ENCRYPTED } from '../../../src/contract/libraries.ts';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { listAll } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { type TestServer, type TestServerOptions, tempDir } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';

/** Host folders made for libraries, removed with `cleanHostDirs`. */
const made: string[] = [];

export function hostDir(): string {
  const dir = tempDir('coffer-library-');
  made.push(dir);
  return dir;
}

export function cleanHostDirs(): void {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export function write(root: string, rel: string, content: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), content);
}

let counter = 0;

/** Adds `root` as a library of `owner` through the admin API and waits for its first scan. */
export async function addLibrary(admin: seed.SeededLogin, root: string, owner: seed.SeededLogin, extra: Record<string, unknown> = {}) {
  const res = await admin.client.post('/api/admin/libraries', { path: root, name: `Library ${++counter}`, owner: owner.email, ...extra });
  expect(res.status).toBe(201);
  const body = await json(res);
  expect(body.warning).toBe(LIBRARY_NOT_ENCRYPTED);
  await scanned(admin, body.library.id);
  return body.library as { id: string; name: string; folderId: string };
}

/** Waits for the library's running scan to end; the view after it. */
function scanned(admin: seed.SeededLogin, id: string) {
  return eventually(async () => {
    const view = await json(await admin.client.get(`/api/admin/libraries/${id}`));
    return view.scanning === null && view.scannedAt !== null ? view : false;
  });
}

export const children = (login: seed.SeededLogin, parentId: string) => listAll(login.client, `/api/files?parentId=${parentId}`);

export async function childNamed(login: seed.SeededLogin, parentId: string, name: string) {
  return (await children(login, parentId)).find((i) => i.name === name);
}

/** A library test file's server and admin (see serverWithAdmin); after the file, the host folders it made go too. */
export const libraryServer = (set: Parameters<typeof serverWithAdmin>[0], opts: TestServerOptions = {}) =>
  serverWithAdmin(set, opts, cleanHostDirs);

/** Asks for a rescan of a library and waits for it to end: the library's admin view after it. */
export async function rescan(admin: seed.SeededLogin, id: string) {
  const before = (await json(await admin.client.get(`/api/admin/libraries/${id}`))).scannedAt;
  expect((await admin.client.post(`/api/admin/libraries/${id}/rescan`)).status).toBe(202);
  return eventually(async () => {
    const view = await json(await admin.client.get(`/api/admin/libraries/${id}`));
    return view.scanning === null && view.scannedAt !== before ? view : false;
  });
}

/**
 * A host folder for the tests of changes made by another program: a file to modify (`a.txt`), one to rename
 * (`old-name.txt`), one to delete (`doomed.txt`), a folder with a file (`box/`) and an empty one (`shelf/`).
 */
export function changingTree(): string {
  const root = hostDir();
  write(root, 'a.txt', 'one');
  write(root, 'old-name.txt', 'rename me');
  write(root, 'doomed.txt', 'bye');
  write(root, 'box/inner.txt', 'in the box');
  fs.mkdirSync(path.join(root, 'shelf'));
  return root;
}

/**
 * A library holding `keep.txt`, its owner, a sub-user of the owner who may only download, and another account:
 * who the refusal tests ask as.
 */
export async function refusalScene(t: TestServer, admin: seed.SeededLogin) {
  const owner = await seed.owner(t);
  const outsider = await seed.owner(t);
  const sub = await seed.subUser(t, owner, ['files.download']);
  const root = hostDir();
  write(root, 'keep.txt', 'keep');
  const library = await addLibrary(admin, root, owner);
  const keep = await childNamed(owner, library.folderId, 'keep.txt');
  return { owner, outsider, sub, root, library, keep };
}
