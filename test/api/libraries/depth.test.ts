import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { MAX_FOLDER_DEPTH } from '../../../src/contract/names.ts';
import { rowCount } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, rescan, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });

describe('a library scan', () => {
  test(`leaves out host folders deeper than ${MAX_FOLDER_DEPTH} levels (and what is in them) and still ends well`, async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const deep = 'd/'.repeat(MAX_FOLDER_DEPTH + 10);
    write(root, `${deep}bottom.txt`, 'too deep');
    write(root, 'top.txt', 'fine');
    // The library's own folder is the first level: the host's first MAX_FOLDER_DEPTH - 1 folders fit below it.
    const library = await addLibrary(admin, root, owner);
    const folders = () => rowCount(t, "type = 'folder' AND deleted_at IS NULL AND account_id = ?", owner.id);
    expect(folders()).toBe(MAX_FOLDER_DEPTH);
    expect(rowCount(t, "type = 'file' AND account_id = ?", owner.id)).toBe(1);
    fs.writeFileSync(path.join(root, 'later.txt'), 'still scanned');
    const view = await rescan(admin, library.id);
    expect(view).toMatchObject({ scanError: null, available: true });
    expect(folders()).toBe(MAX_FOLDER_DEPTH);
    expect(rowCount(t, "type = 'file' AND account_id = ?", owner.id)).toBe(2);
  });

  test('leaves out a folder moved on the host to where what is in it would pass the limit', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const chain = 'd/'.repeat(MAX_FOLDER_DEPTH - 5);
    write(root, `${chain}x.txt`, 'deep');
    write(root, 'tall/t/t/t/t/in.txt', 'five levels');
    const library = await addLibrary(admin, root, owner);
    const named = (name: string) => rowCount(t, "type = 'folder' AND deleted_at IS NULL AND name = ? AND account_id = ?", name, owner.id);
    expect(named('tall')).toBe(1);
    // Below the library's folder and the chain, the tall folder would sit at MAX_FOLDER_DEPTH - 3: four more levels do not fit.
    fs.renameSync(path.join(root, 'tall'), path.join(root, chain, 'tall'));
    const view = await rescan(admin, library.id);
    expect(view).toMatchObject({ scanError: null, available: true });
    expect(named('tall')).toBe(0);
    expect(named('t')).toBe(0);
  });

  test('leaves out an entry whose path is longer than the file system opens (4095 bytes); an upload or a new folder that would make one → 400; nothing answers 500', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    // Folders down to a path of 4060 bytes: a short name still fits below it, one of 40 characters does not.
    const last = 120 - root.length;
    expect(last).toBeGreaterThan(0);
    const names = [...Array.from({ length: 39 }, (_, i) => `${String(i).padStart(3, '0')}${'d'.repeat(97)}`), 'e'.repeat(last)];
    const rel = names.join('/');
    expect(Buffer.byteLength(`${root}/${rel}`)).toBe(4060);
    expect(Bun.spawnSync(['mkdir', '-p', rel], { cwd: root }).exitCode).toBe(0);
    const tooLong = `${'f'.repeat(60)}.txt`;
    // Written relative to the deepest folder: its full path is past what open(2) takes.
    expect(Bun.spawnSync(['sh', '-c', `cd "${rel}" && printf fits > ok.txt && printf past > ${tooLong}`], { cwd: root }).exitCode).toBe(0);
    const library = await addLibrary(admin, root, owner);
    let deepest = library.folderId;
    for (const name of names) deepest = (await childNamed(owner, deepest, name)).id;
    expect((await children(owner, deepest)).map((i) => i.name)).toEqual(['ok.txt']);
    const ok = await childNamed(owner, deepest, 'ok.txt');
    expect(await (await owner.client.get(`/api/files/${ok.id}/download`)).text()).toBe('fits');

    const upload = (name: string) => {
      const body = new FormData();
      body.append('parentId', deepest);
      body.append('file', new File(['uploaded'], name));
      return owner.client.request('/api/files/upload', { method: 'POST', body });
    };
    for (const res of [
      await upload(`${'u'.repeat(40)}.txt`),
      await owner.client.post('/api/files/folder', { name: 'n'.repeat(40), parentId: deepest }),
    ]) {
      expect(res.status).toBe(400);
      expect((await json(res)).message).toMatch(
        /^The path in the library folder would be \d+ bytes long; the server's file system opens at most 4095/,
      );
    }
    const fits = await upload('up.txt');
    expect(fits.status).toBe(200);
    expect(await (await owner.client.get(`/api/files/${(await json(fits)).id}/download`)).text()).toBe('uploaded');
    const zip = await owner.client.get(`/api/files/${library.folderId}/download`);
    expect(zip.status).toBe(200);
    expect((await zip.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect(Bun.spawnSync(['ls', '-A'], { cwd: path.join(root, ...names.slice(0, 20)) }).exitCode).toBe(0);
  });
});
