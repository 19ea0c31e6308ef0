import { expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;
libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });

test('coffer doctor --fix leaves a library item out of reach where it is, named with the reason, and makes no empty folder for it', async () => {
  const owner = await seed.owner(t);
  const root = hostDir();
  write(root, 'box/inner.txt', 'in the box');
  const library = await addLibrary(admin, root, owner);
  const box = (await childNamed(owner, library.folderId, 'box'))!;
  const inner = (await childNamed(owner, box.id, 'inner.txt'))!;
  const other = await seed.owner(t);
  const plain = await json(await other.client.post('/api/files/folder', { name: 'Plain' }));
  const kept = await upload(other.client, 'kept.txt', 'kept', { parentId: plain.id });

  const sqlite = t.server.ctx.db.$client;
  sqlite.query('DELETE FROM items WHERE id IN (?, ?)').run(box.id, plain.id);
  const report = await t.server.ctx.services.doctor.check({ fix: true });
  expect(report.unreachableItems.count).toBe(2);
  expect(report.unreachableItems.left).toEqual([{ id: inner.id, reason: expect.any(String) }]);
  expect(report.unreachableItems.recovered).toEqual([
    {
      accountId: other.id,
      folderId: expect.any(String),
      folderName: 'Recovered items',
      items: [{ id: kept.id, name: 'kept.txt', type: 'file' }],
    },
  ]);
  expect(report.ok).toBe(false);

  expect((await children(owner, '')).map((i) => i.name)).not.toContain('Recovered items');
  expect(sqlite.query('SELECT parent_id AS parentId FROM items WHERE id = ?').get(inner.id)).toEqual({ parentId: box.id });
  const recovered = (await childNamed(other, '', 'Recovered items'))!;
  expect((await children(other, recovered.id)).map((i) => i.name)).toEqual(['kept.txt']);
});
