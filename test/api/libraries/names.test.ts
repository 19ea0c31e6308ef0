import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { children, hostDir, libraryServer, write, addLibrary } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });

describe('host names Coffer would store otherwise', () => {
  test('spaces around a name and one not in UTF-8 are left out, of two names in two Unicode forms the second: WebDAV serves every file it lists with its own bytes or none', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'notes.txt', 'the notes');
    write(root, 'notes.txt ', 'a trailing space');
    write(root, ' lead.txt', 'a leading space');
    // macOS writes accents decomposed: such a file alone stays in the library.
    write(root, 'cafe\u0301.txt', 'decomposed');
    write(root, 'the\u0301.txt', 'tea, decomposed');
    write(root, 'th\u00e9.txt', 'tea, composed');
    fs.writeFileSync(Buffer.concat([Buffer.from(`${root}/bytes-`), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]), 'not UTF-8');
    const library = await addLibrary(admin, root, owner);
    const dav = await davLogin(t, owner);
    const base = `/dav/${library.name}/`;
    const listed = (await dav.list(encodeURIComponent(library.name))).filter((href) => href !== base);
    for (const href of listed) {
      const name = decodeURIComponent(href.slice(base.length));
      const res = await dav.request('GET', `${encodeURIComponent(library.name)}/${encodeURIComponent(name)}`);
      const body = await res.text();
      if (res.status !== 404)
        expect({ name, status: res.status, body }).toEqual({ name, status: 200, body: fs.readFileSync(path.join(root, name), 'utf8') });
    }
    // A decomposed name is listed as it is on the host, but the paths compose what they are sent: none reaches it.
    expect((await dav.request('GET', `${encodeURIComponent(library.name)}/${encodeURIComponent('cafe\u0301.txt')}`)).status).toBe(404);
    const names = (await children(owner, library.folderId)).map((i) => i.name);
    expect(names.filter((n) => n.normalize('NFC') === 'th\u00e9.txt')).toHaveLength(1);
    expect(names.filter((n) => n.normalize('NFC') !== 'th\u00e9.txt').sort()).toEqual(['cafe\u0301.txt', 'notes.txt']);
  });
});

describe('search in a library', () => {
  test('finds a name the host spells decomposed (as macOS writes accents) by a query in either form', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'cafe\u0301 menu.txt', 'decomposed');
    await addLibrary(admin, root, owner);
    for (const q of ['caf\u00e9', 'cafe\u0301', 'CAF\u00c9 M']) {
      const found = await json(await owner.client.get(`/api/files/search?q=${encodeURIComponent(q)}`));
      expect({ q, names: found.map((i: { name: string }) => i.name) }).toEqual({ q, names: ['cafe\u0301 menu.txt'] });
    }
  });
});
