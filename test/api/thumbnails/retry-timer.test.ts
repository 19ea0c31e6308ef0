import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { ThumbnailPool } from '../../../src/services/thumbnails/pool.ts';
import { eventually } from '../../helpers/eventually.ts';
import { upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// The worker runs (the sweep and its retry are jobs), on a clock the test moves.
let t: TestServer;
let owner: seed.SeededLogin;
const clock = new ManualClock(Date.now());
const HOUR = 3_600_000;
const { make } = ThumbnailPool.prototype;
let tries = 0;
let timeOuts = 0;

beforeAll(async () => {
  t = await startTestServer({ clock });
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

const sqlite = () => t.server.ctx.db.$client;
const statusOf = (storageKey: string) =>
  sqlite().query<{ status: string }, [string]>('SELECT status FROM thumbnails WHERE storage_key = ?').get(storageKey)?.status ?? null;
const keyOf = (id: string) => sqlite().query<{ k: string }, [string]>('SELECT storage_key AS k FROM items WHERE id = ?').get(id)!.k;

test('a thumbnail that failed once in the sweep is made again when its hour is up, with no request, upload or start to prompt it; one that failed later, at its own hour', async () => {
  const retries = () =>
    sqlite()
      .query<{ runAt: number }, []>(`SELECT run_at AS runAt FROM jobs WHERE kind = 'thumbnails.retry' AND status = 'created'`)
      .all()
      .map((r) => r.runAt);
  tries = 0;
  timeOuts = 1;
  const first = keyOf((await upload(owner.client, 'loaded.png', await img.png(64, 48), { type: 'image/png' })).id);
  await eventually(() => expect(statusOf(first)).toBe('failed'), { timeoutMs: 15_000 });
  const firstDue = clock.now() + HOUR;
  clock.advance(10 * 60_000);
  timeOuts = 1;
  const second = keyOf((await upload(owner.client, 'later.png', await img.png(48, 32), { type: 'image/png' })).id);
  await eventually(() => expect(statusOf(second)).toBe('failed'), { timeoutMs: 15_000 });
  expect(tries).toBe(2);
  // One retry waits, for the first one's hour.
  expect(retries()).toEqual([firstDue]);

  clock.advance(HOUR - 10 * 60_000 - 60_000);
  await Bun.sleep(1500);
  expect([statusOf(first), statusOf(second)]).toEqual(['failed', 'failed']);
  clock.advance(60_000);
  await eventually(() => expect(statusOf(first)).toBe('ready'), { timeoutMs: 15_000 });
  expect(statusOf(second)).toBe('failed');
  expect(retries()).toEqual([firstDue + 10 * 60_000]);
  clock.advance(10 * 60_000);
  await eventually(() => expect(statusOf(second)).toBe('ready'), { timeoutMs: 15_000 });
  expect(tries).toBe(4);
  expect(retries()).toEqual([]);
}, 60_000);

test("a file deleted for good takes its thumbnail's unfinished tries with it (a crash mid-making left them)", async () => {
  const file = await upload(owner.client, 'crashed.png', await img.png(32, 24), { type: 'image/png' });
  const key = keyOf(file.id);
  await eventually(() => expect(statusOf(key)).toBe('ready'), { timeoutMs: 15_000 });
  // What a process killed while decoding leaves: a counted try that never finished.
  sqlite()
    .query(`INSERT INTO unfinished_attempts (purpose, subject, attempts, started_at) VALUES ('thumbnail', ?, 1, ?)`)
    .run(key, clock.now());
  expect((await owner.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
  expect((await owner.client.post('/api/files/trash/delete', { ids: [file.id] })).status).toBe(202);
  await eventually(() => expect(statusOf(key)).toBeNull(), { timeoutMs: 15_000 });
  expect(sqlite().query('SELECT subject FROM unfinished_attempts').all()).toEqual([]);
}, 60_000);

test('at start, the unfinished tries of content deleted before its tries went with it are forgotten, those of live files kept', async () => {
  const file = await upload(owner.client, 'live.png', await img.png(16, 12), { type: 'image/png' });
  const key = keyOf(file.id);
  await eventually(() => expect(statusOf(key)).toBe('ready'), { timeoutMs: 15_000 });
  const add = sqlite().query(`INSERT INTO unfinished_attempts (purpose, subject, attempts, started_at) VALUES (?, ?, 1, ?)`);
  add.run('thumbnail', key, clock.now());
  add.run('thumbnail', 'long-gone-object-key', clock.now());
  add.run('content', 'long-gone-object-key', clock.now());
  t.server.ctx.services.thumbnails.catchUp();
  expect(sqlite().query('SELECT purpose, subject FROM unfinished_attempts ORDER BY purpose').all()).toEqual([
    { purpose: 'content', subject: 'long-gone-object-key' },
    { purpose: 'thumbnail', subject: key },
  ]);
  sqlite().query('DELETE FROM unfinished_attempts').run();
});
