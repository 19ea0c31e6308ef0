import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tempDir } from '../helpers/server.ts';
import { startTestS3, type TestS3 } from '../helpers/s3.ts';
import { testS3DriverOptions } from '../helpers/s3-options.ts';
import { S3Driver } from '../../src/storage/s3.ts';
import { newStorageKey } from '../../src/storage/keys.ts';

const MiB = 1024 * 1024;
const PART = 5 * MiB;
const QUEUE = 2;

let s3: TestS3;
let staging: string;
beforeAll(async () => {
  s3 = await startTestS3();
  staging = tempDir('coffer-s3-driver-');
});
afterAll(() => {
  fs.rmSync(staging, { recursive: true, force: true });
  fs.rmSync(s3.dir, { recursive: true, force: true });
});

function driver(prefix: string): S3Driver {
  return new S3Driver({ ...testS3DriverOptions(s3.endpoint, prefix), partSize: PART, queueSize: QUEUE, stagingDir: staging });
}

async function* chunked(data: Uint8Array, size = 300_007): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

const stored = async (d: S3Driver, key: string) => Buffer.from(await new Response(await d.get(key)).arrayBuffer());
const partPuts = (key: string) => s3.requests.filter((r) => r.startsWith('PUT') && r.includes(key) && r.includes('partNumber=')).length;

describe('the S3 driver holds a bounded number of parts in memory', () => {
  test('a multipart put holds at most queueSize + 1 part buffers and none once it ends', async () => {
    const d = driver('bounded/');
    const key = newStorageKey();
    const data = randomBytes(4 * PART + 123_457);
    await d.put(key, chunked(data));
    expect(partPuts(key)).toBe(5);
    expect(d.partBuffers.peak).toBeGreaterThanOrEqual(2);
    expect(d.partBuffers.peak).toBeLessThanOrEqual(QUEUE + 1);
    expect(d.partBuffers.held).toBe(0);
    expect((await stored(d, key)).equals(data)).toBe(true);
  });

  test('a part the bucket fails once is sent again whole (each try streams the part from its start)', async () => {
    const d = driver('retried/');
    const key = newStorageKey();
    const data = randomBytes(2 * PART + 1);
    s3.failNext(1, 500, 'InternalError', (m, u) => m === 'PUT' && u.includes(key) && u.includes('partNumber=2'));
    await d.put(key, chunked(data));
    expect(partPuts(key)).toBe(4);
    expect((await stored(d, key)).equals(data)).toBe(true);
  });

  test('a put that fails aborts its upload and gives back every part buffer', async () => {
    const d = driver('failed/');
    const key = newStorageKey();
    s3.failNext(100, 400, 'InvalidPart', (m, u) => m === 'PUT' && u.includes(key) && u.includes('partNumber=3'));
    await expect(d.put(key, chunked(randomBytes(4 * PART)))).rejects.toThrow(/InvalidPart/);
    s3.clearFailures();
    expect(d.partBuffers.held).toBe(0);
    expect(s3.incompleteUploads('failed/')).toEqual([]);
    expect(await d.head(key)).toBeNull();
  });

  test('a staged file is published part by part from the file, with no part buffer at all', async () => {
    const d = driver('staged/');
    const key = newStorageKey();
    const data = randomBytes(2 * PART + 777);
    // Copies: the staging area frees each chunk it has written.
    await d.staging.write(
      key,
      0,
      (async function* () {
        for await (const chunk of chunked(data)) yield Buffer.from(chunk);
      })(),
    );
    await d.staging.publish(key, data.length);
    expect(partPuts(key)).toBe(3);
    expect(d.partBuffers.peak).toBe(0);
    expect((await stored(d, key)).equals(data)).toBe(true);
    expect(await d.staging.size(key)).toBe(0);
  });
});
