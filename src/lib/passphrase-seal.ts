import { createCipheriv, createDecipheriv, randomBytes, scrypt } from 'node:crypto';

/**
 * A stream sealed under a passphrase (the streaming AEAD of src/storage/sealed.ts, keyed by scrypt):
 * header ‖ segment 0 ‖ … ‖ segment n-1. Header (40 bytes): magic `COFFERBK`, version 1, KDF 1 (scrypt),
 * log2 N, r, p, a 16-byte salt, a 7-byte nonce prefix, the plaintext segment size (u32 BE). Each segment
 * is sealed with AES-256-GCM, nonce = prefix ‖ index (u32 BE) ‖ last flag, the header as associated data,
 * so nothing of the plaintext is readable and truncation, reordering or a changed header fail.
 */
const MAGIC = Buffer.from('COFFERBK');
const VERSION = 1;
const KDF_SCRYPT = 1;
const HEADER_SIZE = 40;
const TAG = 16;
const SEGMENT = 64 * 1024;
const DEFAULT_KDF = { logN: 15, r: 8, p: 1 };

/** The passphrase is wrong, or the stream was changed or cut short: nothing of it can be trusted. */
export class SealedStreamError extends Error {}

/** Whether these first bytes start a passphrase-sealed stream. */
export function isPassphraseSealed(head: Uint8Array): boolean {
  return head.length >= MAGIC.length && Buffer.from(head.subarray(0, MAGIC.length)).equals(MAGIC);
}

function deriveKey(passphrase: string, salt: Uint8Array, kdf: { logN: number; r: number; p: number }): Promise<Buffer> {
  const N = 2 ** kdf.logN;
  return new Promise((resolve, reject) =>
    scrypt(passphrase, salt, 32, { N, r: kdf.r, p: kdf.p, maxmem: 256 * N * kdf.r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

function nonce(header: Buffer, index: number, last: boolean): Buffer {
  const n = Buffer.alloc(12);
  header.copy(n, 0, 29, 36);
  n.writeUInt32BE(index, 7);
  n[11] = last ? 1 : 0;
  return n;
}

/** Seals a stream under a passphrase: the header, then each 64 KiB of `source` as one segment. */
export async function* sealWithPassphrase(
  source: AsyncIterable<Uint8Array>,
  passphrase: string,
  kdf = DEFAULT_KDF,
): AsyncGenerator<Uint8Array> {
  const header = Buffer.alloc(HEADER_SIZE);
  MAGIC.copy(header, 0);
  header[8] = VERSION;
  header[9] = KDF_SCRYPT;
  header[10] = kdf.logN;
  header[11] = kdf.r;
  header[12] = kdf.p;
  randomBytes(16).copy(header, 13);
  randomBytes(7).copy(header, 29);
  header.writeUInt32BE(SEGMENT, 36);
  const key = await deriveKey(passphrase, header.subarray(13, 29), kdf);
  yield header;
  const buffer = Buffer.alloc(SEGMENT);
  let used = 0;
  let index = 0;
  const seal = (last: boolean): Buffer => {
    const cipher = createCipheriv('aes-256-gcm', key, nonce(header, index++, last));
    cipher.setAAD(header);
    const sealed = Buffer.concat([cipher.update(buffer.subarray(0, used)), cipher.final(), cipher.getAuthTag()]);
    used = 0;
    return sealed;
  };
  for await (const data of source) {
    let offset = 0;
    while (offset < data.length) {
      // A full buffer is sealed only once more follows, so the last segment is always sealed after the loop.
      if (used === SEGMENT) yield seal(false);
      const n = Math.min(SEGMENT - used, data.length - offset);
      buffer.set(data.subarray(offset, offset + n), used);
      used += n;
      offset += n;
    }
  }
  yield seal(true);
}

/** The plaintext of a sealed stream, checked segment by segment; throws SealedStreamError on any mismatch. */
export async function* openSealed(source: AsyncIterable<Uint8Array>, passphrase: string): AsyncGenerator<Uint8Array> {
  let pending = Buffer.alloc(0);
  let header: Buffer | null = null;
  let key: Buffer | null = null;
  let segment = 0;
  let index = 0;
  const open = (sealed: Buffer, last: boolean): Buffer => {
    const decipher = createDecipheriv('aes-256-gcm', key!, nonce(header!, index++, last));
    decipher.setAAD(header!);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG)), decipher.final()]);
    } catch {
      throw new SealedStreamError(
        index === 1
          ? 'the passphrase is wrong, or the archive is damaged'
          : `the archive is damaged or was cut short (segment ${index - 1} fails its check)`,
      );
    }
  };
  for await (const chunk of source) {
    pending = pending.length ? Buffer.concat([pending, chunk]) : Buffer.from(chunk);
    if (!header) {
      if (pending.length < HEADER_SIZE) continue;
      header = Buffer.from(pending.subarray(0, HEADER_SIZE));
      if (!isPassphraseSealed(header)) throw new SealedStreamError('not a passphrase-encrypted Coffer archive');
      if (header[8] !== VERSION || header[9] !== KDF_SCRYPT) throw new SealedStreamError(`unknown archive encryption version ${header[8]}`);
      const kdf = { logN: header[10]!, r: header[11]!, p: header[12]! };
      segment = header.readUInt32BE(36);
      if (
        kdf.logN < 10 ||
        kdf.logN > 22 ||
        kdf.r < 1 ||
        kdf.r > 32 ||
        kdf.p < 1 ||
        kdf.p > 16 ||
        segment < 1024 ||
        segment > 16 * 1024 * 1024
      ) {
        throw new SealedStreamError('the archive header asks for parameters outside what Coffer writes (damaged?)');
      }
      key = await deriveKey(passphrase, header.subarray(13, 29), kdf);
      pending = pending.subarray(HEADER_SIZE);
    }
    // Keep one sealed segment back: only the end of the stream says which segment is the last.
    while (pending.length > segment + TAG) {
      yield open(pending.subarray(0, segment + TAG), false);
      pending = pending.subarray(segment + TAG);
    }
  }
  if (!header) throw new SealedStreamError('the archive is too short to be an encrypted Coffer archive');
  if (pending.length < TAG) throw new SealedStreamError('the archive was cut short');
  yield open(pending, true);
}
