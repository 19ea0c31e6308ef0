// `npm run bench -- s3` runs this in its own process: the least a server can do to store an encrypted upload in a bucket.
import { createCipheriv, randomBytes } from 'node:crypto';
import { newStorageKey } from '../src/storage/keys.ts';
import { S3Driver } from '../src/storage/s3.ts';
import { testS3DriverOptions } from '../test/helpers/s3-options.ts';

/**
 * `bun bench/bare-s3-upload.ts <endpoint> <prefix>`: PUT / receives the body, seals it with AES-256-GCM
 * in 64 KiB segments (a fresh cipher each, nonce = prefix ‖ index) and stores the sealed bytes with the
 * S3 driver's multipart upload (8 MiB parts, as Coffer's). No auth, no database, no multipart form
 * parsing. Answers the stored object's key. Prints its port.
 */
const SEGMENT = 64 * 1024;
const [endpoint, prefix] = process.argv.slice(2) as [string, string];
const driver = new S3Driver(testS3DriverOptions(endpoint, prefix));
const key = randomBytes(32);
const noncePrefix = randomBytes(8);

function nonce(index: number): Buffer {
  const n = Buffer.alloc(12);
  noncePrefix.copy(n, 0);
  n.writeUInt32BE(index, 8);
  return n;
}

async function* seal(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const seg = Buffer.allocUnsafe(SEGMENT);
  let filled = 0;
  let index = 0;
  const sealed = (plain: Buffer) => {
    const c = createCipheriv('aes-256-gcm', key, nonce(index++));
    const out = c.update(plain);
    c.final();
    return [out, c.getAuthTag()];
  };
  for await (const chunk of body) {
    for (let off = 0; off < chunk.byteLength; ) {
      const n = Math.min(SEGMENT - filled, chunk.byteLength - off);
      seg.set(chunk.subarray(off, off + n), filled);
      filled += n;
      off += n;
      if (filled === SEGMENT) {
        yield* sealed(seg);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield* sealed(seg.subarray(0, filled));
}

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  maxRequestBodySize: 4 * 1024 ** 3,
  async fetch(req) {
    const stored = newStorageKey();
    await driver.put(stored, seal(req.body!), { release: true });
    return new Response(stored);
  },
});
console.log(server.port);
