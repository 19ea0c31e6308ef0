import { Database } from 'bun:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { parseJson, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/server.ts';
import { ProcessClient, ServerProcess } from '../helpers/server-process.ts';

const dataDir = tempDir('coffer-doctor-recover-');
const server = new ServerProcess(dataDir);
const { call, get, signUp } = new ProcessClient(server);

beforeAll(async () => {
  await server.start();
  await signUp('recover@example.test', 'doctor password', 'Recover');
});
afterAll(async () => {
  await server.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const names = (items: Array<{ name: string }>) => items.map((i) => i.name).sort();

/** Uploads `paths` (each `folder/.../file`) in one bulk upload; the rows answered. */
async function upload(paths: string[], parentId?: string): Promise<Array<{ id: string; name: string; parentId: string }>> {
  const form = new FormData();
  if (parentId) form.append('parentId', parentId);
  for (const p of paths) {
    form.append('relativePaths', p);
    form.append('files', new File([`content of ${p}`], path.basename(p)));
  }
  const res = await call('POST', '/api/files/upload/bulk', form);
  expect(res.status).toBe(200);
  return ((await res.json()) as { files: Array<{ id: string; name: string; parentId: string }> }).files;
}

const doctor = (...args: string[]) => runCli(['doctor', ...args, '--data-dir', dataDir], { env: { COFFER_MIN_FREE_BYTES: '16M' } });

describe('coffer doctor --fix: items out of reach', () => {
  test('moves each item whose folder is gone into "Recovered items" (numbered when taken) at the root, logged, counters right', async () => {
    const files = await upload(['Gone/Kept/deep.txt', 'Gone/loose.txt', 'Gone/Loose.txt.bak', 'Other/other.txt']);
    const kept = files.find((f) => f.name === 'deep.txt')!.parentId;
    const gone = files.find((f) => f.name === 'loose.txt')!.parentId;
    // A folder of the name the repair would use: the repair takes a fresh one.
    expect((await call('POST', '/api/files/folder', { name: 'Recovered items' })).status).toBe(200);
    const before = (await get('/api/user/storage')).used;

    await server.stop();
    const db = new Database(path.join(dataDir, 'coffer.db'));
    try {
      // What a crash or race that took a folder row and not its members leaves: live items under a parent that is not there.
      // Deleting a live folder takes its bytes off the root's size, as ItemsRepo.purge does.
      db.query('UPDATE tree_versions SET size = size - (SELECT tree_size FROM items WHERE id = ?)').run(gone);
      expect(db.query('DELETE FROM items WHERE id = ?').run(gone).changes).toBe(1);
    } finally {
      db.close();
    }

    const found = parseJson(await doctor('--json'));
    expect(found.ok).toBe(false);
    expect(found.unreachableItems.count).toBe(3);
    expect(found.unreachableItems.recovered).toBeUndefined();
    expect((await doctor()).stdout).toContain('repair with: coffer doctor --fix');

    const fixed = await doctor('--fix');
    expect(fixed.stdout).toContain('items out of reach: 3 live item(s) under a folder that is gone');
    expect(fixed.stdout).toMatch(/moved 3 item\(s\) of account \S+ into the folder "Recovered items \(1\)" at its root — fixed/);
    expect(fixed.stdout).toContain('no problems found');
    expect(fixed.code).toBe(0);
    const after = parseJson(await doctor('--json'));
    expect(after.ok).toBe(true);
    expect(after.unreachableItems.count).toBe(0);
    expect(after.usage.mismatches).toEqual([]);

    await server.start();
    const top = (await get('/api/files')) as Array<{ id: string; name: string }>;
    expect(names(top)).toEqual(['Other', 'Recovered items', 'Recovered items (1)']);
    const recovered = top.find((i) => i.name === 'Recovered items (1)')!;
    expect(names(await get(`/api/files?parentId=${recovered.id}`))).toEqual(['Kept', 'Loose.txt.bak', 'loose.txt']);
    expect(names(await get(`/api/files?parentId=${kept}`))).toEqual(['deep.txt']);
    expect((await get(`/api/files/${recovered.id}/info`)).folderInfo).toMatchObject({ fileCount: 3, folderCount: 1 });
    expect((await get('/api/user/storage')).used).toBe(before);
    // Logged: the activity shows the folder created and the moves, as sync clients read them.
    const moves = (await get('/api/activity?kind=item.moved')).items as Array<any>;
    expect(moves.map((m) => [m.actor.kind, m.item.path, m.before.folderId]).sort()).toEqual([
      ['system', 'Recovered items (1)/Kept', gone],
      ['system', 'Recovered items (1)/Loose.txt.bak', gone],
      ['system', 'Recovered items (1)/loose.txt', gone],
    ]);
    // The root's size (WebDAV's quota-used-bytes and ETag) counts every live file again.
    const ro = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
    try {
      const root = ro
        .query<{ size: number; live: number }, []>(
          `SELECT size, (SELECT sum(size) FROM items WHERE type = 'file' AND deleted_at IS NULL) AS live FROM tree_versions`,
        )
        .get()!;
      expect(root.size).toBe(root.live);
    } finally {
      ro.close();
    }
  }, 60_000);

  test("a team folder's items out of reach go into its own folder, where its members find them (the team account's root shows nowhere)", async () => {
    const group = (await (await call('POST', '/api/admin/groups', { name: 'Crew' })).json()) as { id: string };
    expect((await call('POST', `/api/admin/groups/${group.id}/members`, { email: 'recover@example.test' })).status).toBe(201);
    const made = await call('POST', '/api/admin/team-folders', { name: 'Crew files', groups: [{ groupId: group.id, role: 'editor' }] });
    expect(made.status).toBe(201);
    const teamFolder = ((await get('/api/files')) as Array<{ id: string; name: string }>).find((i) => i.name === 'Crew files')!;
    const files = await upload(['Plans/draft.txt'], teamFolder.id);
    const plans = files[0]!.parentId;

    await server.stop();
    const db = new Database(path.join(dataDir, 'coffer.db'));
    try {
      expect(db.query('DELETE FROM items WHERE id = ?').run(plans).changes).toBe(1);
    } finally {
      db.close();
    }
    const fixed = parseJson(await doctor('--fix', '--json'));
    expect(fixed.ok).toBe(true);
    expect(fixed.unreachableItems).toMatchObject({ count: 1, left: [] });

    await server.start();
    expect(names(await get('/api/files'))).toEqual(['Crew files', 'Other', 'Recovered items', 'Recovered items (1)']);
    const inTeam = (await get(`/api/files?parentId=${teamFolder.id}`)) as Array<{ id: string; name: string }>;
    expect(names(inTeam)).toEqual(['Recovered items']);
    expect(names(await get(`/api/files?parentId=${inTeam[0]!.id}`))).toEqual(['draft.txt']);
  }, 60_000);
});
