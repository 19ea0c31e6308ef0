import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s), { startWorker: false });

const versionSizes = async (login: seed.SeededLogin, id: string) =>
  (await json(await login.client.get(`/api/files/${id}/versions`))).versions.map((v: { size: number }) => v.size);
const text = async (login: seed.SeededLogin, id: string) => (await login.client.get(`/api/files/${id}/download`)).text();
const hostEntries = (root: string) => (fs.readdirSync(root, { recursive: true }) as string[]).sort();

describe('WebDAV COPY and MOVE onto an existing library file', () => {
  test("an editor's save: a temporary file MOVEd over the original (Overwrite T by default) replaces it on the host, the old content a version", async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'essay.txt', 'first draft');
    const library = await addLibrary(admin, root, owner);
    const essay = await childNamed(owner, library.folderId, 'essay.txt');
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    expect((await dav.put(`${base}/.~essay.tmp`, 'second draft!')).status).toBe(201);

    const saved = await dav.request('MOVE', `${base}/.~essay.tmp`, { headers: { destination: `${t.url}/dav/${base}/essay.txt` } });
    expect(saved.status).toBe(204);
    expect(fs.readFileSync(path.join(root, 'essay.txt'), 'utf8')).toBe('second draft!');
    // The source is gone for good (not in the library's trash), and no temporary file is left.
    expect(hostEntries(root).filter((e) => !e.startsWith('.coffer-trash'))).toEqual(['essay.txt']);
    expect(fs.existsSync(path.join(root, '.coffer-trash')) ? fs.readdirSync(path.join(root, '.coffer-trash')) : []).toEqual([]);
    const listed = await children(owner, library.folderId);
    expect(listed.map((i) => [i.id, i.name, i.size])).toEqual([[essay.id, 'essay.txt', 13]]);
    expect(await versionSizes(owner, essay.id)).toEqual([11]);
    expect(await (await dav.request('GET', `${base}/essay.txt`)).text()).toBe('second draft!');
    expect(await json(await owner.client.get('/api/files/trash'))).toEqual([]);
  });

  test('COPY and MOVE across the edge, both ways: the destination keeps its id and gets the content, its own kept as a version', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'lib-a.txt', 'library A');
    write(root, 'lib-b.txt', 'library B');
    write(root, 'lib-c.txt', 'library C');
    const library = await addLibrary(admin, root, owner);
    const libA = await childNamed(owner, library.folderId, 'lib-a.txt');
    const libB = await childNamed(owner, library.folderId, 'lib-b.txt');
    const storeA = await upload(owner.client, 'store-a.txt', 'store A');
    const storeB = await upload(owner.client, 'store-b.txt', 'store B!');
    await upload(owner.client, 'store-c.txt', 'store C!!');
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    const onto = (method: string, from: string, to: string) =>
      dav.request(method, from, { headers: { destination: `${t.url}/dav/${to}` } });

    // A library file copied onto a stored file: read from the host, encrypted into the store.
    expect((await onto('COPY', `${base}/lib-a.txt`, 'store-a.txt')).status).toBe(204);
    expect(await text(owner, storeA.id)).toBe('library A');
    expect(await versionSizes(owner, storeA.id)).toEqual([7]);
    expect(fs.readFileSync(path.join(root, 'lib-a.txt'), 'utf8')).toBe('library A');

    // A stored file copied onto a library file: landed on the host, the library file's content a version.
    expect((await onto('COPY', 'store-b.txt', `${base}/lib-b.txt`)).status).toBe(204);
    expect(fs.readFileSync(path.join(root, 'lib-b.txt'), 'utf8')).toBe('store B!');
    expect(await text(owner, libB.id)).toBe('store B!');
    expect(await versionSizes(owner, libB.id)).toEqual([9]);
    expect(await text(owner, storeB.id)).toBe('store B!');

    // A stored file moved onto a library file: the stored file is gone.
    expect((await onto('MOVE', 'store-c.txt', `${base}/lib-a.txt`)).status).toBe(204);
    expect(fs.readFileSync(path.join(root, 'lib-a.txt'), 'utf8')).toBe('store C!!');
    expect(await versionSizes(owner, libA.id)).toEqual([9]);
    expect((await dav.request('GET', 'store-c.txt')).status).toBe(404);

    // A library file moved onto a stored file: its host file is gone.
    expect((await onto('MOVE', `${base}/lib-c.txt`, 'store-a.txt')).status).toBe(204);
    expect(await text(owner, storeA.id)).toBe('library C');
    expect(await versionSizes(owner, storeA.id)).toEqual([9, 7]);
    expect(hostEntries(root).filter((e) => !e.startsWith('.coffer-trash'))).toEqual(['lib-a.txt', 'lib-b.txt']);
    expect((await children(owner, library.folderId)).map((i) => i.name)).toEqual(['lib-a.txt', 'lib-b.txt']);
    expect((await children(owner, '')).map((i) => i.name).sort()).toEqual([library.name, 'store-a.txt', 'store-b.txt'].sort());
  });

  test('Overwrite F answers 412 and changes nothing', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'one.txt', 'one');
    write(root, 'two.txt', 'two');
    const library = await addLibrary(admin, root, owner);
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    for (const method of ['COPY', 'MOVE']) {
      const res = await dav.request(method, `${base}/one.txt`, {
        headers: { destination: `${t.url}/dav/${base}/two.txt`, overwrite: 'F' },
      });
      expect({ method, status: res.status }).toEqual({ method, status: 412 });
    }
    expect(hostEntries(root)).toEqual(['one.txt', 'two.txt']);
    expect(fs.readFileSync(path.join(root, 'two.txt'), 'utf8')).toBe('two');
  });

  test('a read-only library: a COPY or MOVE onto its file, or a MOVE of its file onto another, answers 403 "This library is read-only"', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'fixed.txt', 'fixed');
    write(root, 'other.txt', 'other');
    const library = await addLibrary(admin, root, owner, { readOnly: true });
    const mine = await upload(owner.client, 'mine.txt', 'mine');
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    const attempts: Array<[string, string, string]> = [
      ['COPY', 'mine.txt', `${base}/fixed.txt`],
      ['MOVE', 'mine.txt', `${base}/fixed.txt`],
      ['COPY', `${base}/other.txt`, `${base}/fixed.txt`],
      ['MOVE', `${base}/other.txt`, 'mine.txt'],
    ];
    for (const [method, from, to] of attempts) {
      const res = await dav.request(method, from, { headers: { destination: `${t.url}/dav/${to}` } });
      expect({ method, from, status: res.status }).toEqual({ method, from, status: 403 });
      expect(await res.text()).toContain('This library is read-only');
    }
    expect(hostEntries(root)).toEqual(['fixed.txt', 'other.txt']);
    expect(fs.readFileSync(path.join(root, 'fixed.txt'), 'utf8')).toBe('fixed');
    expect(await text(owner, mine.id)).toBe('mine');
    expect(await versionSizes(owner, mine.id)).toEqual([]);
  });

  test("the Nextcloud clients' paths: a MOVE over a library file replaces it", async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'notes.md', '# old');
    const library = await addLibrary(admin, root, owner);
    const notes = await childNamed(owner, library.folderId, 'notes.md');
    const dav = await davLogin(t, owner);
    const files = `${t.url}/remote.php/dav/files/${owner.id}/${encodeURIComponent(library.name)}`;
    const auth = { authorization: dav.authorization };
    expect((await fetch(`${files}/notes.md.part`, { method: 'PUT', headers: auth, body: '# new notes' })).status).toBe(201);
    const moved = await fetch(`${files}/notes.md.part`, { method: 'MOVE', headers: { ...auth, destination: `${files}/notes.md` } });
    expect(moved.status).toBe(204);
    expect(hostEntries(root).filter((e) => !e.startsWith('.coffer-trash'))).toEqual(['notes.md']);
    expect(fs.readFileSync(path.join(root, 'notes.md'), 'utf8')).toBe('# new notes');
    expect(await versionSizes(owner, notes.id)).toEqual([5]);
  });
});
