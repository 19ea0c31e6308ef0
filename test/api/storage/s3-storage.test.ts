import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, tempDir, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { listAll, upload, uploadRaw } from '../../helpers/files.ts';
import { memoryLogger, waitForLine } from '../../helpers/logs.ts';
import * as seed from '../../helpers/seed.ts';
import { runCli, parseJson } from '../../helpers/cli.ts';
import { startTestS3, type TestS3 } from '../../helpers/s3.ts';
import { createUpload, patchUpload, stagedFiles } from '../../helpers/tus.ts';
import { HEADER_SIZE, SEGMENT_SIZE } from '../../../src/storage/sealed.ts';
import { S3Driver } from '../../../src/storage/s3.ts';
import { Messages } from '../../../src/errors.ts';
import { testS3DriverOptions } from '../../helpers/s3-options.ts';
import { eventually } from '../../helpers/eventually.ts';

const MiB = 1024 * 1024;
let s3: TestS3;

beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => {
  await s3.stop();
});

describe('the S3 driver through the API', () => {
  let t: TestServer;
  let prefix: string;
  beforeAll(async () => {
    prefix = `api-${randomBytes(3).toString('hex')}/`;
    // 5 MiB parts: a hang-up after 12 MiB is mid multipart upload.
    t = await startTestServer({ env: { ...s3.env(prefix), S3_PART_SIZE: '5M' } });
  });
  afterAll(async () => {
    await t.stop();
  });

  test('a client that hangs up mid-upload leaves no multipart upload and no object (ListMultipartUploads is empty)', async () => {
    const o = await seed.owner(t);
    const boundary = 'raw-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`;
    const before = s3.requests.length;
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1', () => {
        socket.write(
          `POST /api/files/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: token=${o.client.cookies.get('token')}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${64 * MiB}\r\n\r\n${head}`,
        );
        socket.write(randomBytes(12 * MiB));
      });
      // Hang up once parts are on their way.
      const poll = setInterval(() => {
        if (s3.requests.slice(before).some((r) => r.includes('partNumber=2'))) {
          clearInterval(poll);
          socket.destroy();
        }
      }, 10);
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    expect(s3.requests.slice(before).some((r) => r.startsWith('POST') && r.includes('uploads'))).toBe(true);
    await eventually(() => s3.requests.slice(before).some((r) => r.startsWith('DELETE') && r.includes('uploadId=')), { intervalMs: 20 });
    // What the bucket itself answers to ListMultipartUploads.
    const listed: string[] = [];
    for await (const u of t.server.ctx.driver.listIncompleteUploads!()) listed.push(u.uploadId);
    expect(listed).toEqual([]);
    expect(s3.incompleteUploads(prefix)).toEqual([]);
    expect(s3.objectKeys(prefix)).toEqual([]);
  });

  test('a 1-byte Range deep in a file reads the header and one segment from the bucket, nothing more', async () => {
    const o = await seed.owner(t);
    const content = randomBytes(3 * MiB + 123);
    const item = await upload(o.client, 'ranged.bin', content);
    const at = 2 * MiB + 777;
    s3.bytesServed = 0;
    const res = await o.client.get(`/api/files/${item.id}/download`, { range: `bytes=${at}-${at}` });
    expect(res.status).toBe(206);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(content.subarray(at, at + 1));
    expect(s3.bytesServed).toBeGreaterThan(0);
    expect(s3.bytesServed).toBeLessThanOrEqual(HEADER_SIZE + SEGMENT_SIZE + 16);
  });

  test('no plaintext reaches the bucket', async () => {
    const o = await seed.owner(t);
    const marker = `PLAINTEXT-MARKER-${randomBytes(8).toString('hex')}`;
    const item = await upload(o.client, 'secret.txt', `${marker}\n`.repeat(20_000));
    expect((await o.client.get(`/api/files/${item.id}/download`)).status).toBe(200);
    const files = s3.objectKeys(prefix).map((k) => s3.objectFile(k));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(fs.readFileSync(f).includes(marker)).toBe(false);
  });

  test('a bucket that fails answers 503 JSON and one log line; a brief failure is retried unseen', async () => {
    const o = await seed.owner(t);
    const item = await upload(o.client, 'flaky.txt', 'hello from the bucket');
    const download = () => o.client.get(`/api/files/${item.id}/download`);
    s3.failNext(2, 503, 'SlowDown', (m) => m === 'GET');
    let res = await download();
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello from the bucket');
    s3.failNext(100, 500, 'InternalError', (m) => m === 'GET');
    res = await download();
    expect(res.status).toBe(503);
    expect((await json(res)).message).toContain('File storage is not answering');
    s3.clearFailures();
  });

  test('orphan review lists a stale multipart upload and orphans delete aborts it', async () => {
    const admin = t.server.ctx;
    const key = 'A'.repeat(32);
    // An upload whose abort failed (the bucket refused it) is left behind with its part.
    s3.failNext(10, 500, 'InternalError', (m, u) => m === 'DELETE' && u.includes('uploadId='));
    const failing = async function* () {
      yield randomBytes(6 * MiB);
      throw new Error('the client went away');
    };
    await expect(admin.driver.put(key, failing())).rejects.toThrow('the client went away');
    s3.clearFailures();
    const [left] = s3.incompleteUploads(prefix);
    const uploadId = left!.uploadId;
    const dayAgo = new Date(Date.now() - 2 * 24 * 3600_000);
    fs.utimesSync(path.join(s3.dir, s3.bucket, '._S3rver_uploads', uploadId), dayAgo, dayAgo);
    const report = await admin.services.orphans.scan({ graceMinutes: 1440 });
    const name = `${key}?uploadId=${uploadId}`;
    expect(report.storageOrphans.items.map((i) => i.key)).toContain(name);
    const r = await admin.services.orphans.deleteOrphans({ storageKeys: [name], fileIds: [], graceMinutes: 1440 }, 'cli');
    expect(r.storage.results).toEqual([{ key: name, deleted: true }]);
    expect(s3.incompleteUploads(prefix)).toEqual([]);
    const again = await admin.services.orphans.deleteOrphans({ storageKeys: [name], fileIds: [], graceMinutes: 1440 }, 'cli');
    expect(again.storage.results).toEqual([{ key: name, deleted: false, reason: 'Object no longer exists' }]);
  });
  test('a resumable upload stages its sealed bytes on local disk and reaches the bucket as one object only when complete', async () => {
    const o = await seed.owner(t);
    const data = randomBytes(7 * MiB + 123);
    const location = (await createUpload(o.client, data.length, { filename: 'video.bin' })).headers.get('location')!;
    const key = t.server.ctx.repos.tusUploads.get(location.split('/').at(-1)!)!.storageKey;
    expect((await patchUpload(o.client, location, 0, data.subarray(0, 3 * MiB))).status).toBe(204);
    expect(s3.objectKeys(prefix)).not.toContain(`${prefix}${key}`);
    expect(stagedFiles(t.dataDir)).toContain(key);
    const done = await patchUpload(o.client, location, 3 * MiB, data.subarray(3 * MiB));
    expect(done.status).toBe(204);
    expect(s3.objectKeys(prefix)).toContain(`${prefix}${key}`);
    expect(stagedFiles(t.dataDir)).not.toContain(key);
    expect(s3.incompleteUploads(prefix)).toEqual([]);
    const down = await o.client.get(`/api/files/${done.headers.get('upload-item-id')}/download`);
    expect(Buffer.from(await down.arrayBuffer()).equals(data)).toBe(true);
  });
});

describe('a bucket that stalls (S3_TIMEOUT_SECONDS=1)', () => {
  let t: TestServer;
  let prefix: string;
  const logger = memoryLogger();
  const TIMEOUT_MS = 1000;
  // Far from the 30 s default and the 60 s stall, and wide enough for a loaded machine: the log line names the 1 s that fired.
  const LATE_MS = TIMEOUT_MS + 10_000;
  beforeAll(async () => {
    prefix = `stall-${randomBytes(3).toString('hex')}/`;
    t = await startTestServer({ env: { ...s3.env(prefix), S3_TIMEOUT_SECONDS: String(TIMEOUT_MS / 1000) }, logger });
  });
  afterAll(async () => {
    s3.clearFailures();
    await t.stop();
  });
  const timed = async <T>(f: () => Promise<T>) => {
    const start = performance.now();
    const value = await f();
    return { value, ms: performance.now() - start };
  };
  const ours = (u: string) => u.includes(`/${prefix}`);

  test('a download the bucket accepts and never answers fails with a 503 within the timeout, and one log line', async () => {
    const o = await seed.owner(t);
    const item = await upload(o.client, 'waiting.txt', 'the bucket will not answer');
    s3.stall(60_000, (m, u) => m === 'GET' && ours(u));
    const { value: res, ms } = await timed(() => o.client.get(`/api/files/${item.id}/download`));
    s3.clearFailures();
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect((await json(res)).message).toBe(Messages.storageUnavailable);
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(LATE_MS);
    const line = await waitForLine(logger, (l) => l.msg === 'storage unavailable' && String(l.fields.err).includes('no answer within 1 s'));
    expect(line.fields.err).toContain(`S3 GET ${prefix}`);
    // Nothing hangs: the next request is answered from the bucket at once.
    const again = await o.client.get(`/api/files/${item.id}/download`);
    expect(await again.text()).toBe('the bucket will not answer');
  });

  test('an upload the bucket never answers fails with a 503 within the timeout and leaves no file', async () => {
    const o = await seed.owner(t);
    s3.stall(60_000, (m, u) => m === 'PUT' && ours(u));
    const { value: res, ms } = await timed(() => uploadRaw(o.client, 'never-stored.txt', 'x'.repeat(10_000)));
    s3.clearFailures();
    expect(res.status).toBe(503);
    expect((await json(res)).message).toBe(Messages.storageUnavailable);
    // The timeout, plus the time to send 10 kB at the floor rate.
    expect(ms).toBeLessThan(LATE_MS);
    expect(await listAll(o.client, '/api/files')).toEqual([]);
  });

  test('a download whose body stops mid-way is cut off within the timeout of silence, and the server goes on', async () => {
    const o = await seed.owner(t);
    const content = randomBytes(3 * MiB);
    const item = await upload(o.client, 'cut.bin', content);
    s3.stopMidBody(MiB, (m, u) => m === 'GET' && ours(u));
    const res = await o.client.get(`/api/files/${item.id}/download`);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let received = 0;
    const { value: outcome, ms } = await timed(async () => {
      try {
        for (;;) {
          const r = await reader.read();
          if (r.done) return 'ended';
          received += r.value.byteLength;
        }
      } catch {
        return 'broke off';
      }
    });
    s3.clearFailures();
    // Cut off as a broken transfer, never presented as a complete file.
    expect(outcome).toBe('broke off');
    expect(received).toBeLessThan(content.length);
    expect(ms).toBeLessThan(LATE_MS);
    const line = await waitForLine(logger, (l) => l.msg === 'download failed part-way');
    expect(line.fields).toMatchObject({ fileId: item.id });
    expect(line.fields.err).toContain('the download stalled for 1 s');
    const again = await o.client.get(`/api/files/${item.id}/download`);
    expect(Buffer.from(await again.arrayBuffer()).equals(content)).toBe(true);
  });
});

describe('server-side copy of a large object', () => {
  // The 5 GiB threshold made small, so the UploadPartCopy path runs on 12 MiB (parts of 5 MiB, S3's minimum).
  const driver = (prefix: string) =>
    new S3Driver({
      ...testS3DriverOptions(s3.endpoint, prefix),
      copyPartThreshold: MiB,
      copyPartSize: 5 * MiB,
    });
  const key = (c: string) => c.repeat(32);
  const once = async function* (bytes: Uint8Array) {
    yield bytes;
  };
  const copyParts = (from: number) => s3.requests.slice(from).filter((r) => r.startsWith('PUT') && r.includes('uploadId='));

  test('an object over the threshold is copied part by part (UploadPartCopy) into a byte-identical object', async () => {
    const prefix = `copy-${randomBytes(3).toString('hex')}/`;
    const d = driver(prefix);
    const content = randomBytes(12 * MiB + 17);
    await d.put(key('A'), once(content));
    const before = s3.requests.length;
    await d.copy(key('A'), key('B'));
    expect(copyParts(before)).toHaveLength(3);
    expect(s3.requests.slice(before).some((r) => r.startsWith('POST') && r.includes('uploads'))).toBe(true);
    expect(Buffer.from(await new Response(await d.get(key('B'))).arrayBuffer()).equals(content)).toBe(true);
    expect(s3.incompleteUploads(prefix)).toEqual([]);
    // At or under the threshold it stays one CopyObject.
    await d.put(key('C'), once(randomBytes(MiB)));
    const single = s3.requests.length;
    await d.copy(key('C'), key('D'));
    expect(copyParts(single)).toEqual([]);
  });

  test('a part copy that fails aborts the multipart upload: no object, nothing left billed', async () => {
    const prefix = `copyfail-${randomBytes(3).toString('hex')}/`;
    const d = driver(prefix);
    await d.put(key('A'), once(randomBytes(12 * MiB)));
    s3.failNext(10, 403, 'AccessDenied', (m, u) => m === 'PUT' && u.includes('partNumber=2'));
    await expect(d.copy(key('A'), key('B'))).rejects.toThrow('AccessDenied');
    s3.clearFailures();
    expect(s3.incompleteUploads(prefix)).toEqual([]);
    expect(s3.objectKeys(prefix)).toEqual([`${prefix}${key('A')}`]);
  });
});

describe('start-up checks', () => {
  const serve = (dataDir: string, env: Record<string, string>) =>
    runCli(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], { env, timeoutMs: 20_000 });

  test.each([
    [
      'a missing bucket',
      { S3_BUCKET: 'no-such-bucket' },
      /^coffer: S3_BUCKET: bucket "no-such-bucket" does not exist at http:\/\/127\.0\.0\.1:\d+; create it first or fix S3_BUCKET\n$/,
    ],
    [
      'an unknown access key',
      { S3_ACCESS_KEY_ID: 'WRONGKEY' },
      /^coffer: S3_ACCESS_KEY_ID: http:\/\/127\.0\.0\.1:\d+ does not know the access key "WRONGKEY"\n$/,
    ],
    ['an unreachable endpoint', { S3_ENDPOINT: 'http://127.0.0.1:1' }, /^coffer: S3_ENDPOINT: cannot reach http:\/\/127\.0\.0\.1:1: /],
    ['no bucket set', { S3_BUCKET: '' }, /^coffer: S3_BUCKET is required when COFFER_STORAGE=s3\n$/],
    ['a timeout that is no number', { S3_TIMEOUT_SECONDS: '10s' }, /^coffer: S3_TIMEOUT_SECONDS must be a whole number, got "10s"\n$/],
    [
      'no secret set',
      { S3_SECRET_ACCESS_KEY: '' },
      /^coffer: S3_SECRET_ACCESS_KEY \(or S3_SECRET_ACCESS_KEY_FILE\) is required when COFFER_STORAGE=s3\n$/,
    ],
    [
      'an unreadable secret file',
      { S3_SECRET_ACCESS_KEY: '', S3_SECRET_ACCESS_KEY_FILE: '/nonexistent/secret' },
      /^coffer: cannot read S3_SECRET_ACCESS_KEY_FILE \/nonexistent\/secret \(ENOENT\)\n$/,
    ],
  ] as const)('%s stops `coffer serve` with one line naming the variable', async (_, change, line) => {
    const dataDir = tempDir();
    try {
      const r = await serve(dataDir, { ...s3.env(), ...change });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(line);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a store that answers 503 at start stops `coffer serve` with one line saying the endpoint is not answering, not blaming S3_BUCKET', async () => {
    const dataDir = tempDir();
    s3.failNext(Number.POSITIVE_INFINITY, 503, 'SlowDown', (m, u) => m === 'GET' && u.includes('list-type=2'));
    try {
      const r = await serve(dataDir, { ...s3.env(), S3_TIMEOUT_SECONDS: '2' });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /^coffer: S3_ENDPOINT: http:\/\/127\.0\.0\.1:\d+ is not answering requests to bucket "coffer-test" right now \(503 SlowDown: .*\); start Coffer again once it does\n$/,
      );
    } finally {
      s3.clearFailures();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('--storage wins over COFFER_STORAGE, and serve --help lists it', async () => {
    const help = await runCli(['serve', '--help']);
    expect(help.stdout).toContain('--storage <driver>');
    expect(help.stdout).toContain('S3_FORCE_PATH_STYLE');
    const dataDir = tempDir();
    try {
      const r = await runCli(['serve', '--storage', 'nfs', '--port', '0', '--data-dir', dataDir], { env: s3.env() });
      expect(r.stderr).toBe('coffer: COFFER_STORAGE (--storage) must be local or s3, got "nfs"\n');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a changed driver, bucket or prefix is refused once files are stored, pointing at coffer storage migrate', async () => {
    const prefix = `recorded-${randomBytes(3).toString('hex')}/`;
    const t = await startTestServer({ env: s3.env(prefix) });
    const dataDir = t.dataDir;
    try {
      const o = await seed.owner(t);
      await upload(o.client, 'kept.txt', 'still here');
      await t.server.stop();
      const local = await serve(dataDir, { COFFER_STORAGE: 'local' });
      expect(local.code).toBe(1);
      expect(local.stderr).toMatch(
        /^coffer: this installation's 1 file\(s\) are stored on S3 bucket "coffer-test" under prefix "recorded-\w+\/", but Coffer was started with local disk: set COFFER_STORAGE=s3 \(--storage s3\) to keep using it, or move the files with "coffer storage migrate --to local"\n$/,
      );
      const other = await serve(dataDir, s3.env('elsewhere/'));
      expect(other.code).toBe(1);
      expect(other.stderr).toContain(
        'but Coffer was started with S3 bucket "coffer-test" under prefix "elsewhere/": fix S3_BUCKET/S3_PREFIX',
      );
      // The admin tools refuse too: an orphan scan against the wrong bucket would offer every file for deletion.
      const scan = await runCli(['orphans', 'scan', '--data-dir', dataDir], { env: s3.env('elsewhere/') });
      expect(scan.code).toBe(1);
      expect(scan.stderr).toContain('coffer storage migrate');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('doctor and backup on S3', () => {
  test('doctor probes the bucket (put, get, list, delete) and reports a failing step', async () => {
    const prefix = `doctor-${randomBytes(3).toString('hex')}/`;
    const t = await startTestServer({ env: s3.env(prefix) });
    try {
      await seed.owner(t);
      const env = s3.env(prefix);
      let r = await runCli(['doctor', '--json', '--data-dir', t.dataDir], { env: { ...env, COFFER_MIN_FREE_BYTES: '1M' } });
      const ok = parseJson(r);
      expect(ok.storage.checks.map((c: any) => [c.step, c.ok])).toEqual([
        ['put', true],
        ['get', true],
        ['list', true],
        ['delete', true],
      ]);
      expect(s3.objectKeys(prefix).filter((k) => k.includes('probe'))).toEqual([]);
      s3.failNext(10, 403, 'AccessDenied', (m, u) => m === 'PUT' && u.includes('probe'));
      r = await runCli(['doctor', '--data-dir', t.dataDir], { env: { ...env, COFFER_MIN_FREE_BYTES: '1M' } });
      expect(r.code).toBe(3);
      expect(r.stdout).toContain('put of a probe object: FAILED: S3 PUT');
      expect(r.stdout).toContain('AccessDenied');
      s3.clearFailures();
    } finally {
      await t.stop();
    }
  });

  test('backup says plainly that the bucket is not copied', async () => {
    const t = await startTestServer({ env: s3.env() });
    try {
      await seed.owner(t);
      const target = path.join(t.dataDir, 'snapshot.db');
      const r = await runCli(['backup', target, '--data-dir', t.dataDir], { env: s3.env(t.server.ctx.driver.location.prefix) });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('NOT in this backup: the file contents in s3://coffer-test/');
      expect(r.stdout).toContain('Back the bucket up with its own tools');
      const manifest = JSON.parse(fs.readFileSync(`${target}.manifest.json`, 'utf8'));
      expect(manifest.storage.driver).toBe('s3');
    } finally {
      await t.stop();
    }
  });
});
