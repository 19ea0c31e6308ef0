import { afterEach, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, rescan, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s));

const realpath = fs.realpathSync;
const readlink = fs.readlinkSync;
const stat = fs.statSync;
afterEach(() => {
  fs.realpathSync = realpath;
  fs.readlinkSync = readlink;
  fs.statSync = stat;
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

  test('a scan lists the folder that was checked: nothing where the symlink leads is listed or indexed', async () => {
    const { owner, outside, library, docs, folder } = await docsLibrary();
    write(outside, 'outside-secret.txt', 'not the library');
    swapAfterCheck(folder, outside);
    await rescan(admin, library.id);
    const names = (await children(owner, docs.id)).map((i) => i.name);
    expect(names).not.toContain('outside-secret.txt');
    expect(await json(await owner.client.get('/api/files/search?q=outside-secret'))).toEqual([]);
  });
});

describe("a replace's temporary file swapped for a symlink before it lands", () => {
  test('the file the symlink leads to keeps its permissions; nothing lands (409) and the library file is as it was', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const outside = hostDir();
    write(root, 'shared.txt', 'library copy');
    fs.chmodSync(path.join(root, 'shared.txt'), 0o666);
    write(outside, 'secret.key', 'private');
    fs.chmodSync(path.join(outside, 'secret.key'), 0o600);
    const library = await addLibrary(admin, root, owner);
    const shared = await childNamed(owner, library.folderId, 'shared.txt');
    // Someone who may write in the library folder swaps Coffer's temporary file for a symlink, just before it lands.
    let swapped = false;
    fs.statSync = ((...args: Parameters<typeof stat>) => {
      const staged = fs.readdirSync(root).find((n) => n.startsWith('.coffer-upload-'));
      if (!swapped && staged && String(args[0]).endsWith('/shared.txt')) {
        swapped = true;
        fs.renameSync(path.join(root, staged), path.join(root, 'moved-away'));
        fs.symlinkSync(path.join(outside, 'secret.key'), path.join(root, staged));
      }
      return stat(...args);
    }) as typeof stat;
    const body = new FormData();
    body.append('file', new File(['new content'], 'shared.txt'));
    const res = await owner.client.request(`/api/files/${shared.id}/replace`, { method: 'POST', body });
    expect(swapped).toBe(true);
    expect(stat(path.join(outside, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(res.status).toBe(409);
    expect(fs.lstatSync(path.join(root, 'shared.txt')).isFile()).toBe(true);
    expect(fs.readFileSync(path.join(root, 'shared.txt'), 'utf8')).toBe('library copy');
    expect(fs.readdirSync(root).filter((n) => n.startsWith('.coffer-upload-'))).toEqual([]);
  });
});
