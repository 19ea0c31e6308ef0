import { Database } from 'bun:sqlite';
import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { parseJson, runCli } from '../../helpers/cli.ts';
import { eventually } from '../../helpers/eventually.ts';
import { blobFiles } from '../../helpers/files.ts';
import { tempDir } from '../../helpers/server.ts';
import { ProcessClient, ServerProcess } from '../../helpers/server-process.ts';
import { cleanHostDirs, hostDir, write } from './helpers.ts';

const FILES = 300;
const dataDir = tempDir('coffer-move-crash-');
const server = new ServerProcess(dataDir);
const { call, get, signUp } = new ProcessClient(server);

afterAll(async () => {
  await server.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
  cleanHostDirs();
});

const childrenOf = async (id: string): Promise<Array<{ id: string; name: string }>> => get(`/api/files?parentId=${id}&limit=500`);

describe('kill -9 during a move across a library edge', () => {
  test('a copy cut short is removed at the next start, the source is whole, and the move can be made again', async () => {
    const root = hostDir();
    for (let i = 0; i < FILES; i++) write(root, `Album/t${i}.txt`, `track ${i} `.repeat(500));
    await server.start();
    await signUp('mover@example.test', 'chaos password', 'Mover');
    const added = await call('POST', '/api/admin/libraries', { path: root, name: 'Music', owner: 'mover@example.test' });
    expect(added.status).toBe(201);
    const library = ((await added.json()) as any).library as { id: string; folderId: string };
    await eventually(async () => {
      const view = await get(`/api/admin/libraries/${library.id}`);
      return view.scanning === null && view.scannedAt !== null;
    });
    const album = (await childrenOf(library.folderId)).find((c) => c.name === 'Album')!;
    const mine = (await (await call('POST', '/api/files/folder', { name: 'Mine' })).json()) as { id: string };

    const move = call('POST', '/api/files/move', { ids: [album.id], parentId: mine.id }).catch(() => null);
    // Killed once the copy holds some of the album's files, long before all.
    await eventually(
      async () => {
        const copy = (await childrenOf(mine.id))[0];
        return copy !== undefined && (await get(`/api/files/${copy.id}/info`)).folderInfo.fileCount >= 5;
      },
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    await server.kill();
    expect(await move).toBeNull();

    await server.start();
    await eventually(async () => (await childrenOf(mine.id)).length === 0, { timeoutMs: 20_000, message: 'the partial copy stayed' });
    expect(((await get(`/api/files/${album.id}/info`)) as any).folderInfo.fileCount).toBe(FILES);
    expect(fs.readdirSync(path.join(root, 'Album'))).toHaveLength(FILES);
    expect((await get('/api/user/storage')).used).toBe(0);

    const again = await call('POST', '/api/files/move', { ids: [album.id], parentId: mine.id });
    expect(again.status).toBe(200);
    const [moved] = await childrenOf(mine.id);
    expect(moved!.name).toBe('Album');
    expect((await get(`/api/files/${moved!.id}/info`)).folderInfo.fileCount).toBe(FILES);
    expect(fs.existsSync(path.join(root, 'Album'))).toBe(false);

    // The objects of the removed copy go with it: each one left has its row.
    await eventually(
      () => {
        const db = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
        try {
          const keys = new Set(
            db
              .query<{ k: string }, []>('SELECT storage_key AS k FROM items WHERE storage_key IS NOT NULL')
              .all()
              .map((r) => r.k),
          );
          return blobFiles(dataDir).objects.every((o) => keys.has(o)) && blobFiles(dataDir).objects.length === FILES;
        } finally {
          db.close();
        }
      },
      { timeoutMs: 20_000, message: 'objects without rows were left' },
    );
    await server.stop();
    const doctor = parseJson(await runCli(['doctor', '--json', '--data-dir', dataDir], { env: { COFFER_MIN_FREE_BYTES: '16M' } }));
    expect(doctor.usage.mismatches).toEqual([]);
    expect(doctor.missingObjects.count).toBe(0);
  }, 120_000);
});
