import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import { eventually } from '../../helpers/eventually.ts';
import { tempDir } from '../../helpers/server.ts';
import { ProcessClient, ServerProcess } from '../../helpers/server-process.ts';

const FILES = 400;
const dataDir = tempDir('coffer-dav-copy-crash-');
const server = new ServerProcess(dataDir);
const { call, get, signUp } = new ProcessClient(server);

afterAll(async () => {
  await server.kill();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('kill -9 during a WebDAV COPY of a folder onto another', () => {
  test('the next start removes the partial copy and puts the replaced folder back as it was', async () => {
    await server.start();
    await signUp('dav-copy@example.test', 'chaos password', 'Dav');
    const form = new FormData();
    for (let i = 0; i < FILES; i++) {
      form.append('relativePaths', `Source/f${i}.txt`);
      form.append('files', new File([`source ${i} `.repeat(100)], `f${i}.txt`));
    }
    form.append('relativePaths', 'Dest/mine.txt');
    form.append('files', new File(['the destination before'], 'mine.txt'));
    expect((await call('POST', '/api/files/upload/bulk', form)).status).toBe(200);
    const before = (await get('/api/files')) as Array<{ id: string; name: string }>;
    const dest = before.find((i) => i.name === 'Dest')!;
    const used = (await get('/api/user/storage')).used;
    const password = ((await (await call('POST', '/api/user/app-passwords', { name: 'dav', password: 'chaos password' })).json()) as any)
      .password;

    const copy = fetch(`${server.url}/dav/Source`, {
      method: 'COPY',
      headers: {
        authorization: `Basic ${Buffer.from(`dav-copy@example.test:${password}`).toString('base64')}`,
        destination: `${server.url}/dav/Dest`,
        overwrite: 'T',
      },
    }).catch(() => null);
    // Killed once the copy stands where Dest was, with some of the files in it, long before all.
    await eventually(
      async () => {
        const partial = ((await get('/api/files')) as Array<{ id: string; name: string }>).find(
          (i) => i.name === 'Dest' && i.id !== dest.id,
        );
        return partial !== undefined && (await get(`/api/files/${partial.id}/info`)).folderInfo.fileCount >= 5;
      },
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    await server.kill();
    expect(await copy).toBeNull();

    await server.start();
    await eventually(
      async () => {
        const top = (await get('/api/files')) as Array<{ id: string; name: string }>;
        return top.some((i) => i.id === dest.id) && top.filter((i) => i.name === 'Dest').length === 1;
      },
      { timeoutMs: 20_000, message: 'the replaced folder did not come back alone' },
    );
    const mine = (await get(`/api/files?parentId=${dest.id}`)) as Array<{ id: string; name: string }>;
    expect(mine.map((i) => i.name)).toEqual(['mine.txt']);
    expect(await (await call('GET', `/api/files/${mine[0]!.id}/download`)).text()).toBe('the destination before');
    expect(await get('/api/files/trash')).toEqual([]);
    expect((await get('/api/user/storage')).used).toBe(used);
  }, 120_000);
});
