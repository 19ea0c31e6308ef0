import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ThumbnailPool } from '../../../src/services/thumbnails/pool.ts';
import { json } from '../../helpers/client.ts';
import { folder, upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// Connections silent for a second are closed (the runtime checks every few seconds); making each picture takes 9 s
// (a large HEIC on a busy box takes minutes).
let t: TestServer;
const { make } = ThumbnailPool.prototype;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false, env: { COFFER_IDLE_TIMEOUT_SECONDS: '1' } });
  ThumbnailPool.prototype.make = async function (...args: Parameters<typeof make>) {
    await new Promise((r) => setTimeout(r, 9000));
    return make.apply(this, args);
  };
});
afterAll(async () => {
  ThumbnailPool.prototype.make = make;
  await t.stop();
});

test('a picture made for the request outlasts the idle timeout: the answer comes, not a reset (the API, a share link)', async () => {
  const owner = await seed.owner(t);
  const album = await folder(owner.client, 'album');
  const photo = await upload(owner.client, 'slow.png', await img.png(400, 200), { type: 'image/png', parentId: album.id });
  const other = await upload(owner.client, 'other.png', await img.png(300, 200), { type: 'image/png', parentId: album.id });
  const link: string = (await json(await owner.client.post('/api/files/share', { ids: [album.id], shared: true }))).links[album.id];
  const token = /\/s\/([A-Za-z0-9_-]+)/.exec(link)![1]!;
  const [res, large] = await Promise.all([
    owner.client.get(`/api/files/${photo.id}/thumbnail`),
    t.client().get(`/s/${token}/thumbnail/${other.id}?size=large`),
  ]);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/webp');
  expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
  expect(large.status).toBe(200);
  expect((await large.arrayBuffer()).byteLength).toBeGreaterThan(0);
});
