import { createCipheriv } from 'node:crypto';

/** The sealed format's segment: each is sealed on its own (AES-256-GCM, a fresh cipher, nonce = prefix ‖ index). */
export const SEGMENT = 64 * 1024;

/** The 12-byte nonce of segment `index`: an 8-byte random prefix, then the index. */
export function segmentNonce(prefix: Buffer, index: number): Buffer {
  const n = Buffer.alloc(12);
  prefix.copy(n, 0);
  n.writeUInt32BE(index, 8);
  return n;
}

/**
 * The bare references' sealing: `body` cut into 64 KiB segments, each yielded as its ciphertext then its
 * 16-byte tag. The least work an encrypted upload cannot avoid, with no Coffer code in it.
 */
export async function* sealSegments(body: AsyncIterable<Uint8Array>, key: Buffer, prefix: Buffer): AsyncGenerator<Uint8Array> {
  const seg = Buffer.allocUnsafe(SEGMENT);
  let filled = 0;
  let index = 0;
  function* sealed(plain: Buffer): Generator<Uint8Array> {
    const c = createCipheriv('aes-256-gcm', key, segmentNonce(prefix, index++));
    yield c.update(plain);
    c.final();
    yield c.getAuthTag();
  }
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
