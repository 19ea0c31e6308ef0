import { afterEach, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, hostDir, libraryServer, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s));

const realpath = fs.realpathSync;
const readlink = fs.readlinkSync;
afterEach(() => {
  fs.realpathSync = realpath;
  fs.readlinkSync = readlink;
});

/**
 * The race a person with write access to the host folder can run: the first time the server (in this process)
 * learns where `folder` really is, `folder` is swapped for a symlink to `outside` before the server uses it.
 */
function swapAfterCheck(folder: string, outside: string): void {
  let swapped = false;
  const swap = (answer: unknown) => {
    if (!swapped && answer === folder) {
      swapped = true;
      fs.renameSync(folder, `${folder}-moved`);
      fs.symlinkSync(outside, folder);
    }
    return answer;
  };
  fs.realpathSync = Object.assign((...args: Parameters<typeof realpath>) => swap(realpath(...args)), realpath) as typeof realpath;
  fs.readlinkSync = ((...args: Parameters<typeof readlink>) => swap(readlink(...args))) as typeof readlink;
}

async function docsLibrary() {
  const owner = await seed.owner(t);
  const root = hostDir();
  const outside = hostDir();
  write(root, 'Docs/report.txt', 'library copy');
  write(outside, 'report.txt', 'not the library');
  const library = await addLibrary(admin, root, owner);
  const docs = await childNamed(owner, library.folderId, 'Docs');
  return { owner, root, outside, library, docs, folder: path.join(root, 'Docs') };
}

describe('a library folder swapped for a symlink between the check and the write', () => {
  test('a new folder is made in the folder that was checked, never where the symlink leads', async () => {
    const { owner, outside, docs, folder } = await docsLibrary();
    swapAfterCheck(folder, outside);
    await owner.client.post('/api/files/folder', { name: 'Made', parentId: docs.id });
    expect(fs.readdirSync(outside)).toEqual(['report.txt']);
    expect(fs.statSync(path.join(`${folder}-moved`, 'Made')).isDirectory()).toBe(true);
  });

  test("an upload's content is written in the folder that was checked, never where the symlink leads; its commit, finding the symlink, refuses (400) and removes it", async () => {
    const { owner, outside, docs, folder } = await docsLibrary();
    swapAfterCheck(folder, outside);
    const res = await owner.client.request('/api/files/upload', {
      method: 'POST',
      body: (() => {
        const f = new FormData();
        f.append('parentId', docs.id);
        f.append('file', new File(['uploaded'], 'new.txt'));
        return f;
      })(),
    });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toBe('The folder leads outside its library.');
    expect(fs.readdirSync(outside)).toEqual(['report.txt']);
    expect(fs.readdirSync(`${folder}-moved`)).toEqual(['report.txt']);
  });

  test('a move takes the entry from the folder that was checked: a file where the symlink leads is never pulled into the library', async () => {
    const { owner, root, outside, library, docs, folder } = await docsLibrary();
    const report = await childNamed(owner, docs.id, 'report.txt');
    swapAfterCheck(folder, outside);
    await owner.client.post('/api/files/move', { ids: [report.id], parentId: library.folderId });
    expect(fs.readFileSync(path.join(outside, 'report.txt'), 'utf8')).toBe('not the library');
    expect(fs.readFileSync(path.join(root, 'report.txt'), 'utf8')).toBe('library copy');
  });
});
