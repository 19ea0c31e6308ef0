import { describe, expect, test } from 'bun:test';
import { runCli } from '../../helpers/cli.ts';
import { SseReader } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, hostDir, libraryServer, rescan, write } from './helpers.ts';

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
