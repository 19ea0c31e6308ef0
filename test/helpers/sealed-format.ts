import { createCipheriv } from 'node:crypto';

const S = 64 * 1024;

/** Format v1 written by hand, independently of sealed.ts: header ‖ per 64 KiB segment AES-256-GCM(ciphertext ‖ tag). */
export function sealByHand(dataKey: Uint8Array, header: Buffer, data: Uint8Array): Buffer {
  const out: Buffer[] = [header];
  const count = data.length === 0 ? 1 : Math.ceil(data.length / S);
  for (let i = 0; i < count; i++) {
    const nonce = Buffer.alloc(12);
    header.copy(nonce, 0, 8, 15);
    nonce.writeUInt32BE(i, 7);
    nonce[11] = i === count - 1 ? 1 : 0;
    const c = createCipheriv('aes-256-gcm', dataKey, nonce);
    c.setAAD(header);
    out.push(c.update(data.subarray(i * S, (i + 1) * S)), c.final(), c.getAuthTag());
  }
  return Buffer.concat(out);
}
