// `npm run bench -- s3` runs this in its own process: the least a server can do to store an encrypted upload in a bucket.
import { randomBytes } from 'node:crypto';
import { sealSegments } from './bare-seal.ts';
import { newStorageKey } from '../src/storage/keys.ts';
import { S3Driver } from '../src/storage/s3.ts';
import { testS3DriverOptions } from '../test/helpers/s3-options.ts';

/**
 * `bun bench/bare-s3-upload.ts <endpoint> <prefix>`: PUT / receives the body, seals it with AES-256-GCM
 * in 64 KiB segments (a fresh cipher each, nonce = prefix ‖ index) and stores the sealed bytes with the
 * S3 driver's multipart upload (8 MiB parts, as Coffer's). No auth, no database, no multipart form
 * parsing. Answers the stored object's key. Prints its port.
 */
const [endpoint, prefix] = process.argv.slice(2) as [string, string];
const driver = new S3Driver(testS3DriverOptions(endpoint, prefix));
const key = randomBytes(32);
const noncePrefix = randomBytes(8);

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  maxRequestBodySize: 4 * 1024 ** 3,
  async fetch(req) {
    const stored = newStorageKey();
    await driver.put(stored, sealSegments(req.body!, key, noncePrefix), { release: true });
    return new Response(stored);
  },
});
console.log(server.port);
