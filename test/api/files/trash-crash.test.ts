import { Database } from 'bun:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { parseJson, runCli } from '../../helpers/cli.ts';
import { eventually } from '../../helpers/eventually.ts';
import { tempDir } from '../../helpers/server.ts';
import { ProcessClient, ServerProcess } from '../../helpers/server-process.ts';

const dataDir = tempDir('coffer-trash-crash-');
const server = new ServerProcess(dataDir);
const { call, get, signUp } = new ProcessClient(server);

beforeAll(async () => {
  await server.start();
  await signUp('trash@example.test', 'chaos password', 'Trash');
});
afterAll(async () => {
  await server.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A folder `name` of 60 files and a subfolder of 20, in one bulk upload; its id. */
async function tree(name: string): Promise<string> {
  const form = new FormData();
  for (let i = 0; i < 80; i++) {
    form.append('relativePaths', i < 60 ? `${name}/f${i}.txt` : `${name}/sub/g${i}.txt`);
    form.append('files', new File([`content ${i} `.repeat(50)], i < 60 ? `f${i}.txt` : `g${i}.txt`));
  }
  const res = await call('POST', '/api/files/upload/bulk', form);
  expect(res.status).toBe(200);
  const files = ((await res.json()) as { files: Array<{ parentId: string; name: string }> }).files;
  return files.find((f) => f.name === 'f0.txt')!.parentId;
}

/**
 * The server killed, then its database as a kill between two of a trash's or a restore's batches leaves it (each
 * batch commits in its own transaction within a millisecond or so, too fast to aim a kill at), then started again.
 */
async function crashBetweenBatches(write: (db: Database) => void): Promise<void> {
  await server.kill();
  const db = new Database(path.join(dataDir, 'coffer.db'));
  try {
    write(db);
  } finally {
    db.close();
  }
  await server.start();
}

describe('kill -9 between the batches of a trash or a restore made in the request', () => {
  test('a trash cut short: its folder is whole again at the next start, nothing hidden, nothing in the trash', async () => {
    const folder = await tree('Half trashed');
    await crashBetweenBatches((db) => {
      // runTrash marks the members deepest first and the root last: half of them done, the root still live.
      const marked = db
        .query(
          `UPDATE items SET deleted_at = ?1, deleted_root_id = ?2
            WHERE id IN (SELECT id FROM items WHERE parent_id = ?2 OR parent_id IN (SELECT id FROM items WHERE parent_id = ?2) ORDER BY type LIMIT 40)`,
        )
        .run(Date.now(), folder).changes;
      expect(marked).toBe(40);
    });
    const info = await get(`/api/files/${folder}/info`);
    expect(info.folderInfo).toMatchObject({ fileCount: 80, folderCount: 1 });
    const listed = (await get(`/api/files?parentId=${folder}&limit=500`)) as unknown[];
    expect(listed).toHaveLength(61);
    expect(await get('/api/files/trash')).toEqual([]);
  }, 60_000);

  test('a restore cut short: the folder stays in the trash whole, and emptying the trash leaves no hidden file behind', async () => {
    const before = (await get('/api/user/storage')).used;
    const folder = await tree('Half restored');
    const trashed = await call('POST', '/api/files/delete', { ids: [folder] });
    expect(trashed.status).toBe(200);
    await crashBetweenBatches((db) => {
      // runRestore puts the members back first and the root last: the subfolder and some files back, the root still in the trash.
      const back = db
        .query(
          `UPDATE items SET deleted_at = NULL, deleted_root_id = NULL
            WHERE id IN (SELECT id FROM items WHERE deleted_root_id = ?1 AND id != ?1 ORDER BY type DESC, name LIMIT 30)`,
        )
        .run(folder).changes;
      expect(back).toBe(30);
    });
    const trash = (await get('/api/files/trash')) as Array<{ id: string }>;
    expect(trash.map((t) => t.id)).toEqual([folder]);

    const empty = await call('POST', '/api/files/trash/empty');
    expect(empty.status).toBe(202);
    const { jobId } = (await empty.json()) as { jobId: string };
    await eventually(async () => (await call('GET', `/api/files/jobs/${jobId}`)).status === 200, { timeoutMs: 20_000 });
    expect((await get('/api/user/storage')).used).toBe(before);
    await server.stop();
    const db = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
    try {
      expect(db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM items').get()!.n).toBe(
        // The first test's folder (80 files and a subfolder) is all that is left.
        82,
      );
    } finally {
      db.close();
    }
    const doctor = parseJson(await runCli(['doctor', '--json', '--data-dir', dataDir], { env: { COFFER_MIN_FREE_BYTES: '16M' } }));
    expect(doctor.usage.mismatches).toEqual([]);
    expect(doctor.missingObjects.count).toBe(0);
  }, 60_000);
});
