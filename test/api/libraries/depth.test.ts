import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { MAX_FOLDER_DEPTH } from '../../../src/contract/names.ts';
import { rowCount } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, hostDir, libraryServer, rescan, write } from './helpers.ts';

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
});
