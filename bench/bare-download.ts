import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * The downloads' bare reference, compiled with `bun build --compile` as Coffer is: a Bun server doing only
 * what serving an encrypted object cannot avoid, in Coffer's sealed format (a 16-byte header, 64 KiB
 * segments each sealed with AES-256-GCM, nonce = prefix ‖ index ‖ last flag, the header as associated data)
 * from a local file. GET reads 16 sealed segments per read into two buffers it reuses (one read ahead),
 * opens each segment and writes its plaintext to a direct stream, freeing it once written. No auth, no database, no routes. At start
 * it seals `--mib` MiB of random bytes into `<data-dir>/object`. Run as
 * `bare-download serve --port <port> --host 127.0.0.1 --data-dir <dir> --mib <n>`, as `coffer serve` is started.
 */
const arg = (name: string) => process.argv[process.argv.indexOf(name) + 1]!;
const SEGMENT = 64 * 1024;
const TAG = 16;
const SEALED = SEGMENT + TAG;
const HEADER = 16;
const PER_READ = 16;
const size = Number(arg('--mib')) * 1024 * 1024;
const segments = Math.ceil(size / SEGMENT);
const file = path.join(arg('--data-dir'), 'object');
const key = randomBytes(32);
const header = Buffer.alloc(HEADER);
header.write('CFSE', 0, 'latin1');
header[4] = 1;
header[5] = 16;
randomBytes(7).copy(header, 8);

function nonce(index: number): Buffer {
  const n = Buffer.alloc(12);
  header.copy(n, 0, 8, 15);
  n.writeUInt32BE(index, 7);
  n[11] = index === segments - 1 ? 1 : 0;
  return n;
}

function seal(): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, header);
  const plain = randomBytes(SEGMENT);
  for (let i = 0; i < segments; i++) {
    const c = createCipheriv('aes-256-gcm', key, nonce(i));
    c.setAAD(header);
    fs.writeSync(fd, c.update(plain.subarray(0, Math.min(SEGMENT, size - i * SEGMENT))));
    c.final();
    fs.writeSync(fd, c.getAuthTag());
  }
  fs.fsyncSync(fd);
  fs.closeSync(fd);
}

const sealedLength = (i: number) => Math.min(SEGMENT, size - i * SEGMENT) + TAG;

function send(): ReadableStream<Uint8Array> {
  const buffers = [Buffer.allocUnsafe(PER_READ * SEALED), Buffer.allocUnsafe(PER_READ * SEALED)];
  return new ReadableStream<Uint8Array>({
    type: 'direct',
    async pull(controller) {
      const handle = await fsp.open(file, 'r');
      try {
        let turn = 0;
        const read = (first: number) => {
          const count = Math.min(PER_READ, segments - first);
          const bytes = count === 0 ? 0 : (count - 1) * SEALED + sealedLength(first + count - 1);
          return handle.read(buffers[turn++ % 2]!, 0, bytes, HEADER + first * SEALED);
        };
        let next = read(0);
        for (let first = 0; first < segments; first += PER_READ) {
          const { buffer } = await next;
          if (first + PER_READ < segments) next = read(first + PER_READ);
          for (let i = first, at = 0; i < Math.min(first + PER_READ, segments); i++) {
            const length = sealedLength(i);
            const d = createDecipheriv('aes-256-gcm', key, nonce(i));
            d.setAAD(header);
            d.setAuthTag(buffer.subarray(at + length - TAG, at + length));
            const plain = d.update(buffer.subarray(at, at + length - TAG));
            d.final();
            at += length;
            const written = controller.write(plain);
            // Sent or copied once write returns: freed now, not at the next collection (as Coffer's releaseHandedOver).
            plain.buffer.transfer(0);
            if (typeof written !== 'number') await written;
          }
        }
      } finally {
        await handle.close();
      }
      controller.close();
    },
  } satisfies Bun.DirectUnderlyingSource<Uint8Array>);
}

seal();
Bun.serve({
  port: Number(arg('--port')),
  hostname: arg('--host'),
  fetch(req) {
    if (new URL(req.url).pathname === '/health') return new Response('ok');
    return new Response(send(), { headers: { 'content-length': String(size) } });
  },
});
