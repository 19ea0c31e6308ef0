import { createDecipheriv, randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import { SEGMENT, sealSegments, segmentNonce } from './bare-seal.ts';

/**
 * The bare reference for transfer CPU: a Bun server doing only the work an encrypted upload or download
 * cannot avoid, in its own process so its CPU is counted apart. PUT receives the body, seals it with
 * AES-256-GCM in 64 KiB segments (a fresh cipher each, nonce = prefix ‖ index), writes in 1 MiB batches
 * and syncs; GET reads the sealed file back, opens each segment and sends the plaintext. No auth, no
 * database, no parsing. Run as `bun bench/bare-sealed.ts <file>`; it prints its port.
 */
const TAG = 16;
const BATCH = 1024 * 1024;
const file = process.argv[2]!;
const key = randomBytes(32);
const prefix = randomBytes(8);
let size = 0;

/** The body counted as it passes. */
async function* counted(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    size += chunk.byteLength;
    yield chunk;
  }
}

async function receive(body: ReadableStream<Uint8Array>): Promise<void> {
  const handle = await fsp.open(file, 'w');
  let batch: Uint8Array[] = [];
  let batchBytes = 0;
  size = 0;
  for await (const piece of sealSegments(counted(body), key, prefix)) {
    batch.push(piece);
    batchBytes += piece.byteLength;
    if (batchBytes >= BATCH) {
      await handle.writev(batch);
      batch = [];
      batchBytes = 0;
    }
  }
  await handle.writev(batch);
  await handle.sync();
  await handle.close();
}

function send(): ReadableStream<Uint8Array> {
  let index = 0;
  let handle: fsp.FileHandle | null = null;
  const segments = Math.ceil(size / SEGMENT);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        handle ??= await fsp.open(file, 'r');
        // 16 sealed segments per read: 1 MiB of plaintext per chunk sent.
        const count = Math.min(16, segments - index);
        const lengths = Array.from({ length: count }, (_, k) => Math.min(SEGMENT, size - (index + k) * SEGMENT) + TAG);
        const total = lengths.reduce((a, b) => a + b, 0);
        const sealed = Buffer.allocUnsafe(total);
        await handle.read(sealed, 0, total, index * (SEGMENT + TAG));
        let at = 0;
        for (const length of lengths) {
          const d = createDecipheriv('aes-256-gcm', key, segmentNonce(prefix, index++));
          d.setAuthTag(sealed.subarray(at + length - TAG, at + length));
          controller.enqueue(d.update(sealed.subarray(at, at + length - TAG)));
          d.final();
          at += length;
        }
        if (index === segments) {
          await handle.close();
          controller.close();
        }
      },
    },
    { highWaterMark: 0 },
  );
}

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  maxRequestBodySize: 4 * 1024 ** 3,
  async fetch(req) {
    if (req.method === 'GET') return new Response(send(), { headers: { 'content-length': String(size) } });
    await receive(req.body!);
    return new Response('ok');
  },
});
console.log(server.port);
