import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';

/**
 * The bare reference for transfer CPU: a Bun server doing only the work an encrypted upload or download
 * cannot avoid, in its own process so its CPU is counted apart. PUT receives the body, seals it with
 * AES-256-GCM in 64 KiB segments (a fresh cipher each, nonce = prefix ‖ index), writes in 1 MiB batches
 * and syncs; GET reads the sealed file back, opens each segment and sends the plaintext. No auth, no
 * database, no parsing. Run as `bun bench/bare-sealed.ts <file>`; it prints its port.
 */
const SEGMENT = 64 * 1024;
const TAG = 16;
const BATCH = 1024 * 1024;
const file = process.argv[2]!;
const key = randomBytes(32);
const prefix = randomBytes(8);
let size = 0;

function nonce(index: number): Buffer {
  const n = Buffer.alloc(12);
  prefix.copy(n, 0);
  n.writeUInt32BE(index, 8);
  return n;
}

async function receive(body: ReadableStream<Uint8Array>): Promise<void> {
  const handle = await fsp.open(file, 'w');
  const seg = Buffer.allocUnsafe(SEGMENT);
  let filled = 0;
  let index = 0;
  let batch: Uint8Array[] = [];
  let batchBytes = 0;
  size = 0;
  const seal = async (plain: Buffer) => {
    const c = createCipheriv('aes-256-gcm', key, nonce(index++));
    batch.push(c.update(plain));
    c.final();
    batch.push(c.getAuthTag());
    batchBytes += plain.length + TAG;
    if (batchBytes >= BATCH) {
      await handle.writev(batch);
      batch = [];
      batchBytes = 0;
    }
  };
  for await (const chunk of body) {
    size += chunk.byteLength;
    for (let off = 0; off < chunk.byteLength; ) {
      const n = Math.min(SEGMENT - filled, chunk.byteLength - off);
      seg.set(chunk.subarray(off, off + n), filled);
      filled += n;
      off += n;
      if (filled === SEGMENT) {
        await seal(seg);
        filled = 0;
      }
    }
  }
  if (filled > 0) await seal(seg.subarray(0, filled));
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
          const d = createDecipheriv('aes-256-gcm', key, nonce(index++));
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
