import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir, type TestServer } from '../../helpers/server.ts';
import { ManualClock } from '../../../src/clock.ts';
import { downloaded, folder, listAll, upload, uploadRaw } from '../../helpers/files.ts';
import { createUpload, patchUpload } from '../../helpers/tus.ts';
import { S3Driver } from '../../../src/storage/s3.ts';
import { newStorageKey } from '../../../src/storage/keys.ts';
import { testS3DriverOptions } from '../../helpers/s3-options.ts';
import { memoryLogger, waitForLine } from '../../helpers/logs.ts';
import { cookieHeader, rawRequest } from '../../helpers/raw-http.ts';
import * as seed from '../../helpers/seed.ts';
import { davLogin } from '../../helpers/dav.ts';
import { eventually } from '../../helpers/eventually.ts';
import { json } from '../../helpers/client.ts';
import { startTestS3, type TestS3 } from '../../helpers/s3.ts';
import { startS3FaultProxy, type S3FaultProxy } from '../../helpers/s3-faults.ts';

const MiB = 1024 * 1024;
let s3: TestS3;
let store: S3FaultProxy;
let t: TestServer;
let admin: seed.SeededLogin;
const logger = memoryLogger();
const PREFIX = 'faults/';
const objectGet = (m: string, u: string) => m === 'GET' && u.includes(`/${PREFIX}`);

beforeAll(async () => {
  s3 = await startTestS3();
  store = await startS3FaultProxy(s3);
  t = await startTestServer({ env: { ...store.env(PREFIX), S3_PART_SIZE: '5M', S3_TIMEOUT_SECONDS: '3' }, logger });
  admin = await seed.admin(t);
});
afterAll(async () => {
  await t.stop();
  await store.stop();
  await s3.stop();
});

describe('downloads when the bucket breaks off an answer', () => {
  test('a ZIP whose file the bucket resets mid-read is cut on the wire (no final chunk), and the server goes on serving', async () => {
    const o = await seed.owner(t);
    const top = await folder(o.client, 'Holiday');
    const content = randomBytes(3 * MiB);
    await upload(o.client, 'film.bin', content, { parentId: top.id });
    // Broken off once bytes went out, then refused on every try to resume.
    store.inject({ when: objectGet, resetAnswerAt: MiB });
    store.inject({ when: objectGet, times: Infinity, answer: { status: 500, code: 'InternalError' } });
    const head = `GET /api/files/${top.id}/download HTTP/1.1\r\nHost: localhost\r\nCookie: ${cookieHeader(o.client.cookies)}\r\nConnection: close\r\n\r\n`;
    await expect(rawRequest(t.url, head, { timeoutMs: 15_000 })).rejects.toThrow('connection closed inside a chunked body');
    store.clear();
    const line = await waitForLine(logger, (l) => l.msg === 'ZIP download failed part-way');
    expect(String(line.fields.err)).toContain(`S3 GET ${PREFIX}`);
    const again = await rawRequest(t.url, head, { timeoutMs: 15_000 });
    expect(again.status).toBe(200);
    expect(again.body.includes(content.subarray(0, 4096))).toBe(true);
  });

  test('a download the bucket resets mid-way is resumed from the byte it broke off at: every door gets the whole file', async () => {
    const o = await seed.owner(t);
    const content = randomBytes(3 * MiB);
    const item = await upload(o.client, 'resumed.bin', content);
    const dav = await davLogin(t, o);
    const cookie = `Cookie: ${cookieHeader(o.client.cookies)}\r\n`;
    const doors: Array<[string, string, Buffer]> = [
      [`/api/files/${item.id}/download`, cookie, content],
      [`/api/files/${item.id}/download`, `${cookie}Range: bytes=100-2999999\r\n`, content.subarray(100, 3_000_000)],
      ['/dav/resumed.bin', `Authorization: ${dav.authorization}\r\n`, content],
    ];
    for (const [path, extra, expected] of doors) {
      const before = store.seen.length;
      store.inject({ when: objectGet, resetAnswerAt: MiB });
      const res = await rawRequest(t.url, `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}Connection: close\r\n\r\n`, {
        timeoutMs: 15_000,
      });
      expect(res.status).toBeLessThan(300);
      expect(res.body.equals(expected)).toBe(true);
      expect(store.seen.slice(before).filter((s) => s.request.startsWith('GET'))).toHaveLength(2);
    }
  });
});

describe('a store that shows a new object late', () => {
  test('a file downloaded while the bucket still answers 404 NoSuchKey for it is read once it shows: 200, byte for byte', async () => {
    const o = await seed.owner(t);
    const content = randomBytes(200_000);
    const item = await upload(o.client, 'fresh.bin', content);
    store.inject({ when: objectGet, times: 2, answer: { status: 404, code: 'NoSuchKey', message: 'The specified key does not exist.' } });
    expect((await downloaded(o.client, item.id)).equals(content)).toBe(true);
  });

  test('a file copied while the bucket still answers 404 to HEAD for it is copied once it shows: the job completes, byte for byte', async () => {
    const o = await seed.owner(t);
    const content = randomBytes(200_000);
    const item = await upload(o.client, 'fresh-copy.bin', content);
    store.inject({ when: (m, u) => m === 'HEAD' && u.includes(`/${PREFIX}`), times: 2, answer: { status: 404, code: 'NoSuchKey' } });
    const res = await o.client.post('/api/files/copy', { ids: [item.id] });
    expect(res.status).toBe(202);
    const { jobId } = await json(res);
    await t.server.worker.drain();
    const job = await json(await o.client.get(`/api/files/jobs/${jobId}`));
    expect(job.status).toBe('completed');
    expect((await downloaded(o.client, job.result.ids[0])).equals(content)).toBe(true);
    store.clear();
  });
});

describe('uploads when the bucket loses an answer', () => {
  test('an upload whose CompleteMultipartUpload answer is lost (a reset) is stored: 200, readable byte for byte, one object', async () => {
    const o = await seed.owner(t);
    const content = randomBytes(12 * MiB);
    const objects = s3.objectKeys(PREFIX).length;
    store.inject({ when: (m, u) => m === 'POST' && u.includes('uploadId='), resetAnswerAt: 0 });
    const res = await uploadRaw(o.client, 'big.bin', content);
    expect(res.status).toBe(200);
    expect(store.seen.filter((s) => s.request.startsWith('POST') && s.request.includes('uploadId='))).toHaveLength(2);
    expect((await downloaded(o.client, (await json(res)).id)).equals(content)).toBe(true);
    expect(s3.objectKeys(PREFIX)).toHaveLength(objects + 1);
    expect(s3.incompleteUploads(PREFIX)).toEqual([]);
  });
});

describe('a store whose clock is off', () => {
  test('a store 40 minutes ahead refuses the first request as RequestTimeTooSkewed; the server signs at its time from then on', async () => {
    const o = await seed.owner(t);
    store.clockSkewMs = 40 * 60_000;
    try {
      const content = randomBytes(100_000);
      const before = store.seen.length;
      const res = await uploadRaw(o.client, 'skewed.bin', content);
      expect(res.status).toBe(200);
      expect(store.seen.slice(before).filter((s) => s.request.startsWith('PUT'))).toHaveLength(2);
      expect((await downloaded(o.client, (await json(res)).id)).equals(content)).toBe(true);
      const next = store.seen.length;
      expect((await uploadRaw(o.client, 'on-time.bin', content)).status).toBe(200);
      expect(store.seen.slice(next).filter((s) => s.request.startsWith('PUT'))).toHaveLength(1);
    } finally {
      store.clear();
    }
  });

  test('a clock that moves while the server runs, met first by a HEAD (a copy), is learnt from its Date header: the copy completes', async () => {
    const o = await seed.owner(t);
    const content = randomBytes(100_000);
    const item = await upload(o.client, 'to-copy.bin', content);
    // A 403 to a HEAD has no body to name RequestTimeTooSkewed: only the store's Date header tells.
    store.clockSkewMs = -50 * 60_000;
    try {
      const before = store.seen.length;
      const res = await o.client.post('/api/files/copy', { ids: [item.id] });
      expect(res.status).toBe(202);
      const { jobId } = await json(res);
      await t.server.worker.drain();
      const job = await json(await o.client.get(`/api/files/jobs/${jobId}`));
      expect(job.status).toBe('completed');
      expect(store.seen.slice(before).filter((s) => s.request.startsWith('HEAD'))).toHaveLength(2);
      expect((await downloaded(o.client, job.result.ids[0])).equals(content)).toBe(true);
    } finally {
      store.clear();
    }
  });
});

describe('background work when the bucket refuses reads', () => {
  test('a text uploaded while the bucket refuses reads is indexed once it answers again: content search finds it', async () => {
    const a = admin;
    expect((await a.client.put('/api/user/content-search-config', { enabled: true })).status).toBe(200);
    // What is stored already is indexed first: then the indexer reads only the new file.
    const drained = () => t.server.ctx.repos.content.progress().pending === 0 && t.server.ctx.repos.content.nextPending(1).length === 0;
    await eventually(drained, { timeoutMs: 30_000 });
    store.inject({ when: objectGet, times: Infinity, answer: { status: 503, code: 'SlowDown' } });
    const item = await upload(a.client, 'wifi.txt', 'the wifi password is hunter2');
    const key = t.server.ctx.repos.items.get(a.id, item.id)!.storageKey!;
    await waitForLine(
      logger,
      (l) =>
        (l.msg === 'content extraction could not read a file' && l.fields.id === item.id) ||
        (l.msg === 'content indexing waits for the storage' && String(l.fields.err).includes(key)),
      20_000,
    );
    store.clear();
    const found = () => a.client.get('/api/files/search?q=hunter2&content=true').then(json);
    await eventually(async () => (await found()).some((h: any) => h.id === item.id && h.match === 'content'), { timeoutMs: 30_000 });
  });
});

describe('uploads a crash cut off', () => {
  test('the intent sweep aborts the multipart upload a crash left under an intent with no row: no parts left billed', async () => {
    // A writer of another life of the server: its intent recorded, one part sent, then nothing (the process died).
    const driver = new S3Driver({ ...testS3DriverOptions(s3.endpoint, PREFIX), partSize: 5 * MiB });
    const key = newStorageKey();
    t.server.ctx.repos.uploadIntents.record(key, Date.now());
    let die!: (err: Error) => void;
    const died = new Promise<never>((_, reject) => {
      die = reject;
    });
    const writing = driver.put(
      key,
      (async function* () {
        yield randomBytes(6 * MiB);
        await died;
      })(),
    );
    writing.catch(() => {});
    const open = () => s3.incompleteUploads(PREFIX).filter((u) => u.key === PREFIX + key);
    await eventually(() => open().length === 1 && s3.requests.some((r) => r.includes('partNumber=1') && r.includes(open()[0]!.uploadId)));
    const swept = await t.server.ctx.services.uploadIntents.sweep();
    expect(swept.clearedIntents).toBeGreaterThanOrEqual(1);
    expect(open()).toEqual([]);
    die(new Error('the process died'));
    await writing.catch(() => {});
  });
});

describe('resumable uploads when the bucket is down for long', () => {
  test('a tus upload whose every byte arrived is not expired while the bucket refuses it: its file is created once the bucket answers', async () => {
    const clock = new ManualClock();
    const prefix = 'sealed/';
    const t2 = await startTestServer({ env: { ...store.env(prefix), S3_TIMEOUT_SECONDS: '1' }, clock, startWorker: false });
    try {
      const o = await seed.owner(t2);
      const content = randomBytes(300_000);
      const created = await createUpload(o.client, content.length, { filename: 'whole.bin' });
      expect(created.status).toBe(201);
      const location = created.headers.get('location')!;
      store.inject({
        when: (m, u) => (m === 'PUT' || m === 'POST') && u.includes(`/${prefix}`),
        times: Infinity,
        answer: { status: 503, code: 'SlowDown' },
      });
      expect((await patchUpload(o.client, location, 0, content)).status).toBe(503);
      // Two days of outage: past the 24 h expiry, the sweep still cannot publish it.
      clock.advance(2 * 24 * 3_600_000);
      const during = await t2.server.ctx.services.tusUploads.sweep();
      expect(during.expired).toBe(0);
      store.clear();
      expect((await t2.server.ctx.services.tusUploads.sweep()).finished).toBe(1);
      const files = await listAll(o.client, '/api/files');
      expect(files.map((f: { name: string }) => f.name)).toEqual(['whole.bin']);
      expect((await downloaded(o.client, files[0].id)).equals(content)).toBe(true);
    } finally {
      store.clear();
      await t2.stop();
    }
  });
});

describe('deletions when the bucket is down for long', () => {
  test("an emptied trash whose deletions the bucket refuses past the job's attempts is removed from the bucket once it answers", async () => {
    const clock = new ManualClock();
    const prefix = 'down/';
    const t2 = await startTestServer({ env: { ...store.env(prefix), S3_TIMEOUT_SECONDS: '1' }, clock, startWorker: false });
    try {
      const o = await seed.owner(t2);
      const item = await upload(o.client, 'gone.bin', randomBytes(50_000));
      expect(s3.objectKeys(prefix)).toHaveLength(1);
      store.inject({
        when: (m, u) => (m === 'DELETE' || m === 'HEAD') && u.includes(`/${prefix}`),
        times: Infinity,
        answer: { status: 503, code: 'SlowDown' },
      });
      expect((await o.client.post('/api/files/delete', { ids: [item.id] })).status).toBe(200);
      expect((await o.client.post('/api/files/trash/empty')).status).toBeLessThan(300);
      // An hour of outage, the worker looking every ten minutes: more than the five attempts a job gets.
      for (let i = 0; i < 6; i++) {
        clock.advance(10 * 60_000);
        await t2.server.worker.drain();
      }
      store.clear();
      clock.advance(10 * 60_000);
      await t2.server.worker.drain();
      expect(s3.objectKeys(prefix)).toEqual([]);
    } finally {
      store.clear();
      await t2.stop();
    }
  });
});

describe('backups to a bucket that misbehaves', () => {
  test('a backup whose rotation the bucket refuses is written and reported so; the next run removes the older archives', async () => {
    const prefix = 'backups/';
    const root = tempDir('coffer-backups-');
    const passFile = path.join(root, 'passphrase');
    fs.writeFileSync(passFile, 'a long household passphrase\n', { mode: 0o600 });
    const bucket = Object.entries(store.env('unused/')).filter(([k]) => k.startsWith('S3_'));
    const env = {
      ...Object.fromEntries(bucket.map(([k, v]) => [`BACKUP_${k}`, v])),
      BACKUP_S3_PREFIX: prefix,
      BACKUP_PASSPHRASE_FILE: passFile,
      BACKUP_KEEP: '1',
    };
    const blogger = memoryLogger();
    const t2 = await startTestServer({
      env: { ...env, S3_TIMEOUT_SECONDS: '1', BACKUP_S3_TIMEOUT_SECONDS: '1' },
      startWorker: false,
      logger: blogger,
    });
    try {
      const a = await seed.admin(t2);
      const run = async () => {
        expect((await a.client.post('/api/user/backups/run', {})).status).toBe(202);
        await t2.server.worker.drain();
        return (await json(await a.client.get('/api/user/backups'))).lastRun;
      };
      expect((await run()).status).toBe('succeeded');
      store.inject({
        when: (m, u) => (m === 'DELETE' || m === 'HEAD') && u.includes(`/${prefix}`),
        times: Infinity,
        answer: { status: 503, code: 'SlowDown' },
      });
      const refused = await run();
      store.clear();
      expect(refused).toMatchObject({ status: 'succeeded', error: null });
      expect(s3.objectKeys(prefix)).toHaveLength(2);
      expect(s3.objectKeys(prefix)).toContain(refused.archive.replace(`s3://${s3.bucket}/`, ''));
      const line = await waitForLine(blogger, (l) => l.msg === 'backup written, older archives not removed');
      expect(String(line.fields.error)).toContain('503');
      const next = await run();
      expect(s3.objectKeys(prefix)).toEqual([next.archive.replace(`s3://${s3.bucket}/`, '')]);
    } finally {
      store.clear();
      await t2.stop();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('a bucket slower than the connection idle timeout', () => {
  test('a download the bucket never answers gets the 503 after S3_TIMEOUT_SECONDS, not a connection closed for silence first', async () => {
    const prefix = 'slow/';
    const t2 = await startTestServer({ env: { ...store.env(prefix), S3_TIMEOUT_SECONDS: '9', COFFER_IDLE_TIMEOUT_SECONDS: '2' } });
    try {
      const o = await seed.owner(t2);
      const item = await upload(o.client, 'slow.bin', randomBytes(10_000));
      // The bucket takes the request and never answers.
      s3.stall(60_000, (m, u) => m === 'GET' && u.includes(`/${prefix}`));
      const res = await o.client.get(`/api/files/${item.id}/download`);
      expect(res.status).toBe(503);
      expect((await json(res)).message).toContain('File storage is not answering');
    } finally {
      store.clear();
      await t2.stop();
    }
  });
});
