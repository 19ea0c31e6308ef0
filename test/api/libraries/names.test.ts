import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { children, hostDir, libraryServer, write, addLibrary } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });

describe('host names Coffer would store otherwise', () => {
  test('spaces around a name, a name not in NFC and one not in UTF-8 are left out: every file WebDAV lists is served with its own bytes', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'notes.txt', 'the notes');
    write(root, 'notes.txt ', 'a trailing space');
    write(root, ' lead.txt', 'a leading space');
    write(root, 'cafe\u0301.txt', 'decomposed');
    fs.writeFileSync(Buffer.concat([Buffer.from(`${root}/bytes-`), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]), 'not UTF-8');
    const library = await addLibrary(admin, root, owner);
    const dav = await davLogin(t, owner);
    const base = `/dav/${library.name}/`;
    const listed = (await dav.list(encodeURIComponent(library.name))).filter((href) => href !== base);
    for (const href of listed) {
      const name = href.slice(base.length);
      const res = await dav.request('GET', `${encodeURIComponent(library.name)}/${encodeURIComponent(name)}`);
      expect({ name, status: res.status, body: await res.text() }).toEqual({
        name,
        status: 200,
        body: fs.readFileSync(path.join(root, name), 'utf8'),
      });
    }
    expect(listed).toEqual([`${base}notes.txt`]);
    expect((await children(owner, library.folderId)).map((i) => i.name)).toEqual(['notes.txt']);
  });
});
