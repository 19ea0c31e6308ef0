import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { davLogin } from '../../helpers/dav.ts';
import { downloaded, listAll, upload } from '../../helpers/files.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import { localFiles, NO_NEXTCLOUDCMD, nextcloudcmd, nextcloudcmdServer, succeeded } from '../../helpers/nextcloudcmd.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';

const logger = memoryLogger();
let t: TestServer;
let dir: string;

nextcloudcmdServer(logger, 'coffer-nextcloudcmd-', (s) => ({ t, dir } = s));

/** One sync run of `local` with the account, which must succeed; the requests it made to the server, as `METHOD path`. */
const sync = async (email: string, password: string, local: string) =>
  (await succeeded(nextcloudcmd(t.url, logger, email, password, local))).requests;

describe.skipIf(NO_NEXTCLOUDCMD)('the Nextcloud desktop client (nextcloudcmd)', () => {
  test('first sync of a tree with nested folders and odd names is byte-exact; an API change arrives; an unchanged tree costs one PROPFIND', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'nextcloudcmd');
    const local = path.join(dir, 'sync');
    const tree: Record<string, string | Buffer> = {
      'top.txt': 'top',
      'with spaces/a b c.txt': 'spaces',
      'Accents é à ü/naïve café.txt': 'accents',
      'emoji 🎉/party 🎈.txt': 'emoji',
      'deep/1/2/3/4/leaf.bin': Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256)),
    };
    for (let i = 0; i < 20; i++) tree[`many/file-${i}.txt`] = `file ${i}`;
    for (const [rel, content] of Object.entries(tree)) {
      fs.mkdirSync(path.dirname(path.join(local, rel)), { recursive: true });
      fs.writeFileSync(path.join(local, rel), content);
    }

    await sync(o.email, dav.password, local);
    for (const [rel, content] of Object.entries(tree)) {
      const res = await dav.request('GET', rel.split('/').map(encodeURIComponent).join('/'));
      expect({ rel, status: res.status }).toEqual({ rel, status: 200 });
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(content))).toBe(true);
    }
    // The uploads moved the folders' ETags: this run learns them.
    await sync(o.email, dav.password, local);

    // Changes made through the API deep in the tree reach the local folder on the next run: the folders' ETags above them moved.
    const byPath = async (names: string[]) => {
      let found: { id: string; name: string } | undefined;
      for (const name of names) {
        found = (await listAll(o.client, found ? `/api/files?parentId=${found.id}` : '/api/files')).find((i) => i.name === name);
      }
      return found!;
    };
    const leaf = await byPath(['deep', '1', '2', '3', '4', 'leaf.bin']);
    const form = new FormData();
    form.append('file', new Blob(['leaf, changed on the server']), 'leaf.bin');
    expect((await o.client.request(`/api/files/${leaf.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    await upload(o.client, 'from the web 🌍.txt', 'uploaded in the browser', { parentId: (await byPath(['emoji 🎉'])).id });
    await sync(o.email, dav.password, local);
    const files = localFiles(local);
    expect(files.get('deep/1/2/3/4/leaf.bin')?.toString()).toBe('leaf, changed on the server');
    expect(files.get('emoji 🎉/from the web 🌍.txt')?.toString()).toBe('uploaded in the browser');
    expect((await downloaded(o.client, leaf.id)).toString()).toBe('leaf, changed on the server');

    // Nothing changed since: the root's ETag is the same, so the client stops after one PROPFIND.
    const requests = await sync(o.email, dav.password, local);
    const propfinds = requests.filter((r) => r.startsWith('PROPFIND '));
    expect(propfinds).toEqual([`PROPFIND /remote.php/dav/files/${o.id}/`]);
    expect(requests.filter((r) => r.includes(' /remote.php/'))).toEqual(propfinds);
  });

  test('an edit on both sides keeps both contents: the server’s in the file, the local one in a conflict copy beside it', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'nextcloudcmd');
    const local = path.join(dir, 'conflict');
    fs.mkdirSync(path.join(local, 'Notes'), { recursive: true });
    fs.writeFileSync(path.join(local, 'Notes', 'todo.txt'), 'first');
    await sync(o.email, dav.password, local);
    await sync(o.email, dav.password, local);
    expect((await dav.put('Notes/todo.txt', 'edited on the server')).status).toBe(204);
    // Of another size: with the same size and modified second, the client takes both sides for the same content.
    fs.writeFileSync(path.join(local, 'Notes', 'todo.txt'), 'edited on the laptop, at length');
    await sync(o.email, dav.password, local);
    const files = localFiles(local);
    expect(files.get('Notes/todo.txt')?.toString()).toBe('edited on the server');
    const copies = [...files.entries()].filter(([rel]) => rel.startsWith('Notes/todo (conflicted copy'));
    expect(copies.map(([, content]) => content.toString())).toEqual(['edited on the laptop, at length']);
    expect(await (await dav.request('GET', 'Notes/todo.txt')).text()).toBe('edited on the server');
  });

  test('a local folder rename arrives as a move (the folder keeps its id) and a local delete lands in the trash', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'nextcloudcmd');
    const local = path.join(dir, 'moves');
    fs.mkdirSync(path.join(local, 'Old name', 'inner'), { recursive: true });
    fs.writeFileSync(path.join(local, 'Old name', 'inner', 'keep.txt'), 'kept');
    fs.writeFileSync(path.join(local, 'gone.txt'), 'to be deleted');
    await sync(o.email, dav.password, local);
    await sync(o.email, dav.password, local);
    const before = (await listAll(o.client, '/api/files')).find((i) => i.name === 'Old name');
    fs.renameSync(path.join(local, 'Old name'), path.join(local, 'New name'));
    fs.rmSync(path.join(local, 'gone.txt'));
    const requests = await sync(o.email, dav.password, local);
    expect(requests.filter((r) => r.startsWith('MOVE '))).toHaveLength(1);
    expect(requests.filter((r) => r.startsWith('PUT ') || r.startsWith('MKCOL '))).toEqual([]);
    const root = await listAll(o.client, '/api/files');
    expect(root.map((i) => i.name).sort()).toEqual(['New name']);
    expect(root[0].id).toBe(before.id);
    expect((await listAll(o.client, '/api/files/trash')).map((i) => i.name)).toEqual(['gone.txt']);
  });

  test('a change of letter case arrives as a move either way (no download again); two local names differing only in case both stay on disk', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o, 'nextcloudcmd');
    const local = path.join(dir, 'case');
    fs.mkdirSync(path.join(local, 'dir'), { recursive: true });
    fs.mkdirSync(path.join(local, 'sdir'));
    fs.writeFileSync(path.join(local, 'a.txt'), 'a');
    fs.writeFileSync(path.join(local, 'b.txt'), 'b');
    fs.writeFileSync(path.join(local, 'dir', 'in.txt'), 'in dir');
    fs.writeFileSync(path.join(local, 'sdir', 'in.txt'), 'in sdir');
    await sync(o.email, dav.password, local);
    await sync(o.email, dav.password, local);
    const ids = new Map((await listAll(o.client, '/api/files')).map((i) => [i.name, i.id]));
    fs.renameSync(path.join(local, 'a.txt'), path.join(local, 'A.txt'));
    fs.renameSync(path.join(local, 'dir'), path.join(local, 'DIR'));
    for (const [name, to] of [
      ['b.txt', 'B.txt'],
      ['sdir', 'SDIR'],
    ])
      expect((await o.client.post('/api/files/rename', { id: ids.get(name), name: to })).status).toBe(200);
    const requests = await sync(o.email, dav.password, local);
    expect(requests.filter((r) => /^(MOVE|PUT|GET|DELETE|MKCOL) \/remote/.test(r)).sort()).toEqual([
      `MOVE /remote.php/dav/files/${o.id}/a.txt`,
      `MOVE /remote.php/dav/files/${o.id}/dir`,
    ]);
    const root = await listAll(o.client, '/api/files');
    expect(new Map(root.map((i) => [i.name, i.id]))).toEqual(
      new Map([
        ['A.txt', ids.get('a.txt')],
        ['B.txt', ids.get('b.txt')],
        ['DIR', ids.get('dir')],
        ['SDIR', ids.get('sdir')],
      ]),
    );
    const expected = new Map([
      ['A.txt', 'a'],
      ['B.txt', 'b'],
      ['DIR/in.txt', 'in dir'],
      ['SDIR/in.txt', 'in sdir'],
    ]);
    const contents = (files: Map<string, Buffer>) => new Map([...files].map(([rel, bytes]) => [rel, bytes.toString()]));
    expect(contents(localFiles(local))).toEqual(expected);

    // Linux keeps x.txt and X.txt apart, Coffer cannot: the second is refused (the client says so and retries), not written over the first.
    fs.writeFileSync(path.join(local, 'x.txt'), 'lower');
    fs.writeFileSync(path.join(local, 'X.txt'), 'UPPER, longer');
    const refused = await nextcloudcmd(t.url, logger, o.email, dav.password, local);
    expect(refused.exitCode).not.toBe(0);
    const kept = (await listAll(o.client, '/api/files')).filter((i) => i.name.toLowerCase() === 'x.txt');
    expect(kept).toHaveLength(1);
    expect((await downloaded(o.client, kept[0]!.id)).toString()).toBe(kept[0]!.name === 'x.txt' ? 'lower' : 'UPPER, longer');
    await nextcloudcmd(t.url, logger, o.email, dav.password, local);
    const after = contents(localFiles(local));
    expect([after.get('x.txt'), after.get('X.txt')]).toEqual(['lower', 'UPPER, longer']);
  });
});
