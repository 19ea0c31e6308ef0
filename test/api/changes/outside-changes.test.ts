import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import { runCli } from '../../helpers/cli.ts';
import { json } from '../../helpers/client.ts';
import { folder, SseReader } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, hostDir, libraryServer, rescan, write } from '../libraries/helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

// Only the scans each test runs: no watch, no periodic rescan.
libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });

const cli = async (args: string[]) => expect((await runCli([...args, '--data-dir', t.dataDir], { timeoutMs: 120_000 })).code).toBe(0);

/** What an open stream of `owner` hears of `change` (it awaits the change's end), with the library folder's id as `<library>`. */
async function heard(owner: seed.SeededLogin, change: () => Promise<string>) {
  const res = await owner.client.get('/api/files/events');
  expect(res.status).toBe(200);
  const reader = new SseReader(res);
  expect((await reader.nextData()).type).toBe('connected');
  const folderId = await change();
  // Another process's changes come within seconds of its commit; once they start, the rest follows at once.
  const first = await reader.nextEvent(30_000);
  const events = [{ id: first.id, type: first.data.type, data: first.data.data }, ...(await reader.untilQuiet(2000))];
  await reader.close();
  return JSON.parse(JSON.stringify(events).replaceAll(folderId, '<library>'));
}

describe('library scans made by the command line beside the running server', () => {
  test("a rescan of more than 200 changes reaches open streams as the server's own does: one summary event", async () => {
    const owner = await seed.owner(t);
    const scanOf = async (run: (libraryId: string) => Promise<unknown>) => {
      const root = hostDir();
      const library = await addLibrary(admin, root, owner);
      for (let i = 0; i < 250; i++) write(root, `many/${i}.txt`, `${i}`);
      return heard(owner, async () => {
        await run(library.id);
        return library.folderId;
      });
    };
    const own = await scanOf((id) => rescan(admin, id));
    expect(own).toEqual([{ type: 'file.updated', data: { id: '<library>', userId: owner.id, action: 'library-scan', count: 251 } }]);
    expect(await scanOf((id) => cli(['libraries', 'rescan', id]))).toEqual(own);
  });

  test("a rescan of a few changes reaches open streams as the server's own does: an event each, with its seq", async () => {
    const owner = await seed.owner(t);
    const scanOf = async (run: (libraryId: string) => Promise<unknown>) => {
      const root = hostDir();
      write(root, 'old.txt', 'old');
      const library = await addLibrary(admin, root, owner);
      write(root, 'new.txt', 'new');
      write(root, 'box/inner.txt', 'inner');
      const events = await heard(owner, async () => {
        await run(library.id);
        return library.folderId;
      });
      expect(events.every((e: { id?: string }) => Number(e.id) > 0)).toBe(true);
      return events.map(({ type, data: { id, ...data } }: { type: string; data: { id: string } }) => ({ type, data }));
    };
    const own = await scanOf((id) => rescan(admin, id));
    expect(own.map((e: { type: string; data: { name: string } }) => [e.type, e.data.name])).toEqual([
      ['file.uploaded', 'new.txt'],
      ['folder.created', 'box'],
      ['file.uploaded', 'inner.txt'],
    ]);
    const outside = await scanOf((id) => cli(['libraries', 'rescan', id]));
    const parentless = (events: Array<{ data: { parentId?: string } }>) =>
      events.map(({ data: { parentId, ...data }, ...e }) => ({ ...e, data }));
    expect(parentless(outside)).toEqual(parentless(own));
  });

  test("adding a library is its folder's creation and one summary of its first scan, however small, as the server's own", async () => {
    const owner = await seed.owner(t);
    const addBy = async (add: (root: string, name: string) => Promise<string>) => {
      const root = hostDir();
      write(root, 'a.txt', 'a');
      write(root, 'box/b.txt', 'b');
      return heard(owner, () => add(root, `Added ${root.slice(-6)}`));
    };
    const own = await addBy(async (root) => (await addLibrary(admin, root, owner)).folderId);
    expect(own).toMatchObject([
      { id: expect.any(String), type: 'folder.created', data: { id: '<library>', parentId: null } },
      { type: 'file.updated', data: { id: '<library>', userId: owner.id, action: 'library-scan', count: 3 } },
    ]);
    const outside = await addBy(async (root, name) => {
      await cli(['libraries', 'add', root, '--name', name, '--owner', owner.email]);
      const top = await owner.client.get('/api/files');
      return ((await top.json()) as Array<{ id: string; name: string }>).find((i) => i.name === name)!.id;
    });
    const shape = (events: Array<{ id?: string; data: { name?: string; timestamp?: string } }>) =>
      events.map(({ id, data: { name, ...data }, ...rest }) => ({ ...rest, id: id && 'id', data }));
    expect(shape(outside)).toEqual(shape(own));
  });
});

describe('a change log put back beneath the running server', () => {
  test('a change another process makes after the log was restored to fewer changes is announced, and none of the restored history', async () => {
    const owner = await seed.owner(t);
    const linkOf = async (name: string) => {
      const dir = await folder(owner.client, name);
      const shared = await json(await owner.client.post('/api/files/share', { ids: [dir.id], shared: true }));
      return { id: dir.id, token: /\/s\/([\w-]+)/.exec(shared.links[dir.id])![1]! };
    };
    const first = await linkOf('First');
    const second = await linkOf('Second');
    const restorePoint = t.server.ctx.services.changes.latestSeq();
    const res = await owner.client.get('/api/files/events');
    const live = new SseReader(res);
    expect((await live.nextData()).type).toBe('connected');
    await cli(['shares', 'revoke', first.token]);
    expect((await live.nextEvent(30_000)).data).toMatchObject({ type: 'file.shared', data: { id: first.id, shared: false } });
    // A change of the server's own the log loses too: its seq is handed out again below.
    const lost = await folder(owner.client, 'Lost');
    expect((await live.nextEvent()).data).toMatchObject({ type: 'folder.created', data: { id: lost.id } });

    // As a restore of the database leaves the log: the rows after the restore point gone, its numbering back there.
    const db = new Database(t.server.ctx.paths.database);
    db.transaction(() => {
      db.run('DELETE FROM changes WHERE seq > ?', [restorePoint]);
      db.run("UPDATE sqlite_sequence SET seq = ? WHERE name = 'changes'", [restorePoint]);
    })();
    db.close();

    const own = await folder(owner.client, 'Own');
    expect(await live.nextEvent()).toMatchObject({ id: String(restorePoint + 1), data: { type: 'folder.created', data: { id: own.id } } });
    await cli(['shares', 'revoke', second.token]);
    // Announced once each: the server's own change is not taken for another process's when the log is read again.
    expect(await live.nextEvent(30_000)).toMatchObject({
      id: String(restorePoint + 2),
      data: { type: 'file.shared', data: { id: second.id, shared: false } },
    });
    expect(await live.quietFor(2500)).toBe(true);
    await live.close();
  });
});
