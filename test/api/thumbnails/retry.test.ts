import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { ThumbnailPool } from '../../../src/services/thumbnails/pool.ts';
import { json } from '../../helpers/client.ts';
import { upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// The worker does not run: thumbnails are made when asked for, and the sweep only when a test runs it.
let t: TestServer;
let owner: seed.SeededLogin;
const clock = new ManualClock(Date.now());
const HOUR = 3_600_000;
const { make } = ThumbnailPool.prototype;
let tries = 0;
// How many of the next tries time out, as on a box too loaded to decode in time.
let timeOuts = 0;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false, clock });
  owner = await seed.owner(t);
  ThumbnailPool.prototype.make = async function (...args: Parameters<typeof make>) {
    tries++;
    if (timeOuts > 0) {
      timeOuts--;
      return { ok: false, reason: 'making the thumbnail took too long' };
    }
    return make.apply(this, args);
  };
});
afterAll(async () => {
  ThumbnailPool.prototype.make = make;
  await t.stop();
});

const thumb = (id: string) => owner.client.get(`/api/files/${id}/thumbnail`);
const listed = async (id: string) =>
  ((await json(await owner.client.get('/api/files'))) as Array<{ id: string; hasThumbnail: boolean }>).find((f) => f.id === id)!;

test('a thumbnail that failed once (a time-out) is tried again on the first request an hour later, and is then served', async () => {
  const file = await upload(owner.client, 'loaded.png', await img.png(64, 48), { type: 'image/png' });
  timeOuts = 1;
  tries = 0;
  expect((await thumb(file.id)).status).toBe(404);
  expect(tries).toBe(1);
  // Listed as one to ask for; within the hour the answer is 404 at once, nothing made again.
  expect((await listed(file.id)).hasThumbnail).toBe(true);
  clock.advance(HOUR - 1000);
  expect((await thumb(file.id)).status).toBe(404);
  expect(tries).toBe(1);
  clock.advance(1000);
  const res = await thumb(file.id);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/webp');
  expect(tries).toBe(2);
});

test('the sweep tries a failed one again once its hour has passed, not before', async () => {
  const file = await upload(owner.client, 'swept.png', await img.png(64, 48), { type: 'image/png' });
  await t.server.ctx.services.thumbnails.sweep();
  timeOuts = 1;
  const other = await upload(owner.client, 'swept-late.png', await img.png(32, 24), { type: 'image/png' });
  tries = 0;
  await t.server.ctx.services.thumbnails.sweep();
  expect(tries).toBe(1);
  expect((await thumb(other.id)).status).toBe(404);
  await t.server.ctx.services.thumbnails.sweep();
  expect(tries).toBe(1);
  clock.advance(HOUR);
  await t.server.ctx.services.thumbnails.sweep();
  expect(tries).toBe(2);
  expect((await thumb(other.id)).status).toBe(200);
  expect((await thumb(file.id)).status).toBe(200);
});

test('a file that fails every time (a malformed image) is tried twice in all, never again: no loop spending CPU', async () => {
  const file = await upload(owner.client, 'broken.jpg', img.malformedJpeg(), { type: 'image/jpeg' });
  tries = 0;
  expect((await thumb(file.id)).status).toBe(404);
  clock.advance(HOUR);
  expect((await thumb(file.id)).status).toBe(404);
  expect(tries).toBe(2);
  for (let i = 0; i < 3; i++) {
    clock.advance(HOUR * 24);
    expect((await thumb(file.id)).status).toBe(404);
    await t.server.ctx.services.thumbnails.sweep();
  }
  expect(tries).toBe(2);
  expect((await listed(file.id)).hasThumbnail).toBe(false);
});
