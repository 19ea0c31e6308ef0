import { afterAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { json } from '../../helpers/client.ts';
import { blobFiles, upload, uploadRaw } from '../../helpers/files.ts';
import { admin, login, type SeededLogin } from '../../helpers/seed.ts';
import { cookieHeader, hangUpMidBody } from '../../helpers/raw-http.ts';
import { startTestServer, tempDir, type TestServer } from '../../helpers/server.ts';
import { newStorageKey } from '../../../src/storage/keys.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';
import { eventually } from '../../helpers/eventually.ts';
import { davLogin } from '../../helpers/dav.ts';
import { memoryLogger, waitForLine } from '../../helpers/logs.ts';

const running: TestServer[] = [];
afterAll(() => Promise.all(running.map((s) => s.stop())));
const log = memoryLogger();

async function server(dataDir = tempDir()): Promise<TestServer> {
  const t = await startTestServer({ dataDir, startWorker: false, logger: log });
  running.push(t);
  return t;
}

const intents = (t: TestServer) => t.server.ctx.db.$client.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM upload_intents').get()!.n;
const referenced = (t: TestServer) =>
  new Set(
    t.server.ctx.db.$client
      .query<{ k: string }, []>('SELECT storage_key AS k FROM items WHERE storage_key IS NOT NULL')
      .all()
      .map((r) => r.k),
  );

/** Stops a server whose requests may hang for ever, as a crash would leave them, and starts one on its data. */
async function crashAndRestart(t: TestServer): Promise<TestServer> {
  await t.server.stop({ graceMs: 200 });
  running.splice(running.indexOf(t), 1);
  return server(t.dataDir);
}

describe('uploads cut by a crash leave no objects behind (issue 13, defect 7)', () => {
  let t: TestServer;
  let a: SeededLogin;

  test('finished, refused and aborted uploads leave no intent', async () => {
    t = await server();
    a = await admin(t);
    await upload(a.client, 'kept.txt', 'kept');
    t.server.ctx.services.settings.set('maxUploadBytes', 1024 * 1024);
    expect((await uploadRaw(a.client, 'big.bin', randomBytes(2 * 1024 * 1024))).status).toBe(413);
    const part = `--b\r\nContent-Disposition: form-data; name="file"; filename="gone.bin"\r\n\r\n`;
    await hangUpMidBody(
      t.url,
      `POST /api/files/upload HTTP/1.1\r\nHost: localhost\r\nCookie: ${cookieHeader(a.client.cookies)}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 999999\r\n\r\n`,
      part + 'x'.repeat(100_000),
      200,
    );
    await waitForLine(log, (l) => l.msg === 'request' && l.fields.path === '/api/files/upload' && l.fields.status === 499);
    expect(intents(t)).toBe(0);
    expect(blobFiles(t.dataDir).objects.length).toBe(1);
  });

  test('a WebDAV PUT cut off mid-body is a 499 upload and leaves no intent, object or item', async () => {
    const dav = await davLogin(t, a);
    const objects = blobFiles(t.dataDir).objects.length;
    await hangUpMidBody(
      t.url,
      `PUT /dav/cut.bin HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${dav.authorization}\r\nContent-Length: 999999\r\n\r\n`,
      'x'.repeat(100_000),
      200,
    );
    await waitForLine(
      log,
      (l) => l.msg === 'request' && l.fields.method === 'PUT' && l.fields.path === '/dav/cut.bin' && l.fields.status === 499,
    );
    expect(intents(t)).toBe(0);
    expect(blobFiles(t.dataDir).objects.length).toBe(objects);
    expect((await dav.request('GET', 'cut.bin')).status).toBe(404);
  });

  test('an object published whose row never committed (the process died in between) is removed at the next start', async () => {
    const ctx = t.server.ctx;
    const put = ctx.driver.put.bind(ctx.driver);
    // The object is written and published; then the process "dies" before the row's transaction.
    ctx.driver.put = async (key, body, opts) => {
      await put(key, body, opts);
      return new Promise(() => {});
    };
    const stuck = uploadRaw(a.client, 'lost.bin', randomBytes(300_000)).catch(() => null);
    await eventually(() => blobFiles(t.dataDir).objects.length >= 2, { intervalMs: 20 });
    expect(blobFiles(t.dataDir).objects.length).toBe(2);
    expect(intents(t)).toBe(1);

    t = await crashAndRestart(t);
    void stuck;
    expect(intents(t)).toBe(0);
    const objects = blobFiles(t.dataDir).objects;
    expect(objects).toHaveLength(1);
    expect(referenced(t).has(objects[0]!)).toBe(true);
    // Orphan review finds nothing Coffer left.
    const scan = await t.server.ctx.services.orphans.scan({ graceMinutes: 0 });
    expect(scan.storageOrphans.count).toBe(0);
    expect(scan.databaseOrphans.count).toBe(0);
  });

  test('an upload cut by a crash mid-write, its object partly written under its own key, is removed at the next start', async () => {
    const ctx = t.server.ctx;
    const before = new Set(blobFiles(t.dataDir).objects);
    const put = ctx.driver.put.bind(ctx.driver);
    const fresh: Array<boolean | undefined> = [];
    let endWrite!: (err: Error) => void;
    const ended = new Promise<never>((_, reject) => (endWrite = reject));
    // The first bytes are written; then the process "dies" with the object incomplete.
    ctx.driver.put = (key, body, opts) => {
      fresh.push(opts?.fresh);
      async function* cut() {
        for await (const chunk of body) {
          yield chunk;
          await ended;
        }
      }
      return put(key, cut(), opts);
    };
    const stuck = uploadRaw(await login(t, a.email), 'partial.bin', randomBytes(300_000)).catch(() => null);
    await eventually(() => blobFiles(t.dataDir).objects.length > before.size, { intervalMs: 20 });
    expect(fresh).toEqual([true]);
    expect(blobFiles(t.dataDir).temp).toEqual([]);
    expect(intents(t)).toBe(1);

    t = await crashAndRestart(t);
    expect(intents(t)).toBe(0);
    expect(new Set(blobFiles(t.dataDir).objects)).toEqual(before);
    // The dead server's write ends, so its file is closed.
    endWrite(new Error('the process died'));
    await stuck;
    expect((await t.server.ctx.services.orphans.scan({ graceMinutes: 0 })).storageOrphans.count).toBe(0);
  });

  test('the hourly sweep removes such objects too, but never one being written now or one its row points at', async () => {
    const ctx = t.server.ctx;
    const intentsSvc = ctx.services.uploadIntents;
    const orphanKey = newStorageKey();
    intentsSvc.record(orphanKey);
    await ctx.storage.put(
      orphanKey,
      (async function* () {
        yield Buffer.from('left behind');
      })(),
    );
    intentsSvc.abandon(orphanKey);
    const inFlight = newStorageKey();
    intentsSvc.record(inFlight);
    await ctx.storage.put(
      inFlight,
      (async function* () {
        yield Buffer.from('still uploading');
      })(),
    );
    // An intent whose row did commit (never left by Coffer itself, but harmless): the object stays.
    const item = await upload(await login(t, a.email), 'row.txt', 'row');
    const rowKey = ctx.db.$client.query<{ k: string }, [string]>('SELECT storage_key AS k FROM items WHERE id = ?').get(item.id)!.k;
    ctx.db.$client.query('INSERT INTO upload_intents (storage_key, created_at) VALUES (?, 0)').run(rowKey);

    ctx.queue.available = true;
    ctx.queue.enqueue(Jobs.uploadsSweep, null);
    await t.server.worker.drain();

    const objects = new Set(blobFiles(t.dataDir).objects);
    expect(objects.has(orphanKey)).toBe(false);
    expect(objects.has(inFlight)).toBe(true);
    expect(objects.has(rowKey)).toBe(true);
    expect(intents(t)).toBe(1);
    intentsSvc.forget(inFlight);
    await ctx.storage.delete(inFlight);
  });

  test('a copy job cut between its object and its row: the next start removes the object, the re-run copies again', async () => {
    const client = await login(t, a.email);
    const src = await upload(client, 'copy-me.txt', 'original');
    const ctx = t.server.ctx;
    const copy = ctx.driver.copy.bind(ctx.driver);
    ctx.driver.copy = async (from, to) => {
      await copy(from, to);
      return new Promise(() => {});
    };
    ctx.queue.available = true;
    const res = await client.post('/api/files/copy', { ids: [src.id] });
    expect(res.status).toBe(202);
    const { jobId } = await json(res);
    void t.server.worker.drain();
    const before = blobFiles(t.dataDir).objects.length;
    // Cut between the two: the intent is recorded and the copied object is there, its row is not.
    await eventually(() => intents(t) > 0 && blobFiles(t.dataDir).objects.length > before, { intervalMs: 20 });

    t = await crashAndRestart(t);
    const keys = new Set(blobFiles(t.dataDir).objects);
    expect([...keys].every((k) => referenced(t).has(k))).toBe(true);
    await t.server.worker.drain();
    const done = await json(await (await login(t, a.email)).get(`/api/files/jobs/${jobId}`));
    expect(done.status).toBe('completed');
    expect(intents(t)).toBe(0);
    expect(blobFiles(t.dataDir).objects.every((k) => referenced(t).has(k))).toBe(true);
  });
});

describe('bulk uploads and their intents', () => {
  test('bulk uploads leave no intent: whole, with a refused file, and refused whole', async () => {
    const t = await server();
    const a = await admin(t);
    const bulk = (files: Array<[string, Uint8Array | string]>) => {
      const form = new FormData();
      for (const [name, content] of files) form.append('files', new File([content], name));
      return a.client.request('/api/files/upload/bulk', { method: 'POST', body: form });
    };
    const objects = blobFiles(t.dataDir).objects.length;
    // More held parts than are stored at once (16).
    const whole = await bulk(Array.from({ length: 20 }, (_, i): [string, string] => [`many-${i}.txt`, `file ${i}`]));
    expect((await json(whole)).successful).toBe(20);
    expect(intents(t)).toBe(0);
    expect(blobFiles(t.dataDir).objects.length).toBe(objects + 20);

    t.server.ctx.services.settings.set('maxUploadBytes', 1024);
    const refusedOne = await json(
      await bulk([
        ['small.txt', 'small'],
        ['big.bin', randomBytes(4096)],
      ]),
    );
    expect({ successful: refusedOne.successful, failed: refusedOne.failedCount }).toEqual({ successful: 1, failed: 1 });
    expect(intents(t)).toBe(0);
    expect(blobFiles(t.dataDir).objects.length).toBe(objects + 21);

    const tooMany = await bulk(Array.from({ length: 1001 }, (_, i): [string, string] => [`over-${i}.txt`, 'x']));
    expect(tooMany.status).toBe(413);
    expect(intents(t)).toBe(0);
    expect(blobFiles(t.dataDir).objects.length).toBe(objects + 21);
  });
});
