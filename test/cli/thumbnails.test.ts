import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { parseJson, runCli } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import * as seed from '../helpers/seed.ts';
import { writeObjectFile } from '../helpers/s3.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addLibrary, childNamed, cleanHostDirs, hostDir, write } from '../api/libraries/helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;
let owner: seed.SeededLogin;
let other: seed.SeededLogin;
const keys: string[] = [];

beforeAll(async () => {
  t = await startTestServer();
  admin = await seed.admin(t);
  owner = await seed.owner(t);
  other = await seed.owner(t);
  for (const [login, name, bytes] of [
    [owner, 'a.png', await img.png(300, 200)],
    [owner, 'b.jpg', await img.jpeg(200, 300)],
    [owner, 'broken.jpg', img.malformedJpeg()],
    [other, 'c.png', await img.png(100, 100)],
  ] as const) {
    const file = await upload(login.client, name, bytes, { type: name.endsWith('png') ? 'image/png' : 'image/jpeg' });
    keys.push(t.server.ctx.repos.items.getLive(login.id, file.id)!.storageKey!);
  }
  await eventually(() => keys.every((k) => t.server.ctx.repos.thumbnails.get(k) !== null), { timeoutMs: 30_000 });
});
afterAll(async () => {
  await t.stop();
  cleanHostDirs();
});

const madeAt = (key: string) => t.server.ctx.repos.thumbnails.get(key)!.createdAt;

describe('coffer thumbnails rebuild', () => {
  test("--user: that account's files made again, beside the running server; a malformed file counted as having none", async () => {
    const before = keys.map(madeAt);
    const r = await runCli(['thumbnails', 'rebuild', '--user', owner.email, '--json', '--data-dir', t.dataDir]);
    expect(r.code).toBe(0);
    expect(parseJson(r)).toEqual({ made: 2, none: 1 });
    const after = keys.map(madeAt);
    expect(after.slice(0, 3).every((at, i) => at > before[i]!)).toBe(true);
    expect(after[3]).toBe(before[3]!);
  });

  test('after a restore without thumbnails (objects gone), every file is made again; the server serves them', async () => {
    for (const k of keys) for (const size of ['small', 'large']) await t.server.ctx.driver.delete(`${k}_thumb_${size}`);
    const r = await runCli(['thumbnails', 'rebuild', '--json', '--data-dir', t.dataDir]);
    expect(r.code).toBe(0);
    expect(parseJson(r)).toEqual({ made: 3, none: 1 });
    expect(r.stderr).toBe('');
    const ids = (await (await other.client.get('/api/files')).json()) as Array<{ id: string }>;
    expect((await other.client.get(`/api/files/${ids[0]!.id}/thumbnail`)).status).toBe(200);
  });

  test('an unknown --user: exit 1 saying so', async () => {
    const r = await runCli(['thumbnails', 'rebuild', '--user', 'nobody@example.test', '--data-dir', t.dataDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no user with email nobody@example.test');
  });

  test("library files too: a library's pictures are made again, a broken one counted as having none", async () => {
    const reader = await seed.owner(t);
    const root = hostDir();
    write(root, 'garden.png', await img.png(120, 80));
    write(root, 'torn.jpg', img.malformedJpeg());
    const library = await addLibrary(admin, root, reader);
    const garden = await childNamed(reader, library.folderId, 'garden.png');
    const contentKey = (id: string) =>
      t.server.ctx.db.$client.query<{ k: string }, [string]>('SELECT content_key AS k FROM library_entries WHERE item_id = ?').get(id)!.k;
    const key = contentKey(garden.id);
    await eventually(() => t.server.ctx.repos.thumbnails.get(key)?.status === 'ready', { timeoutMs: 30_000 });
    const before = madeAt(key);
    const r = await runCli(['thumbnails', 'rebuild', '--user', reader.email, '--json', '--data-dir', t.dataDir]);
    expect(r.code).toBe(0);
    expect(parseJson(r)).toEqual({ made: 1, none: 1 });
    expect(madeAt(key)).toBeGreaterThan(before);
    expect((await reader.client.get(`/api/files/${garden.id}/thumbnail`)).status).toBe(200);
  });

  test('a file whose stored object is damaged is counted as having none, and the rebuild goes on to the next files', async () => {
    const login = await seed.owner(t);
    const damaged = await upload(login.client, 'damaged.jpg', await img.jpeg(200, 100), { type: 'image/jpeg' });
    const fine = await upload(login.client, 'fine.jpg', await img.jpeg(200, 100), { type: 'image/jpeg' });
    const keyOf = (id: string) => t.server.ctx.repos.items.getLive(login.id, id)!.storageKey!;
    await eventually(() => t.server.ctx.repos.thumbnails.get(keyOf(fine.id))?.status === 'ready', { timeoutMs: 30_000 });
    writeObjectFile(t.server.ctx.driver, keyOf(damaged.id), Buffer.alloc(4000, 7), new Date());
    const r = await runCli(['thumbnails', 'rebuild', '--user', login.email, '--json', '--data-dir', t.dataDir]);
    expect(r.code).toBe(0);
    expect(parseJson(r)).toEqual({ made: 1, none: 1 });
    expect((await login.client.get(`/api/files/${damaged.id}/thumbnail`)).status).toBe(404);
  });
});
