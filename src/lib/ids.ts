import { randomBytes } from 'node:crypto';

/**
 * Random URL-safe id: 16 bytes as base64url (22 characters), for users, sessions and every row but items'. Never
 * one that starts with `-`: the CLI takes ids as arguments, and an argument starting with `-` reads as an option
 * (1 id in 64 did).
 */
export function newId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (id[0] !== '-') return id;
  }
}

// base64url's 64 characters in byte order, so that a later item id sorts after an earlier one (SQLite compares bytes).
const SORTED_ALPHABET = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
let lastMs = -1;
let random1 = 0;
let random2 = 0;
let random3 = 0;

/**
 * An item's id: 4 fixed bits (0001, so the first character is never `-`), the 48-bit millisecond it was made,
 * then 80 random bits; 22 characters of base64url's alphabet in byte order. A new row then lands on the last
 * leaf of each b-tree keyed by item id instead of a random one (docs/performance.md, the ninth pass: ids in
 * insertion order). Within a process each id is greater than the one before: in the same millisecond, or if the
 * clock steps back, the random part counts up from the last. Not for secrets: sessions take `newId`, tokens `newToken`.
 */
export function newItemId(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    const bytes = randomBytes(10);
    random1 = bytes.readUInt32BE(0);
    random2 = bytes.readUInt32BE(4);
    random3 = bytes.readUInt16BE(8);
  } else if (++random3 === 0x10000) {
    random3 = 0;
    if (++random2 === 0x100000000) {
      random2 = 0;
      if (++random1 === 0x100000000) {
        random1 = 0;
        lastMs++;
      }
    }
  }
  const id = new SortedBase64();
  id.push(0b0001, 4);
  id.push(Math.floor(lastMs / 0x1000000), 24);
  id.push(lastMs % 0x1000000, 24);
  id.push(random1 >>> 16, 16);
  id.push(random1 & 0xffff, 16);
  id.push(random2 >>> 16, 16);
  id.push(random2 & 0xffff, 16);
  id.push(random3, 16);
  return id.text;
}

/** Bits written 6 at a time as characters of `SORTED_ALPHABET`, most significant first. */
class SortedBase64 {
  text = '';
  private bits = 0;
  private held = 0;

  /** Appends the low `width` (at most 24) bits of `value`. */
  push(value: number, width: number): void {
    this.bits = (this.bits << width) | value;
    this.held += width;
    while (this.held >= 6) {
      this.held -= 6;
      this.text += SORTED_ALPHABET.charAt((this.bits >>> this.held) & 63);
    }
    this.bits &= (1 << this.held) - 1;
  }
}

/** 128 random bits, base64url: unguessable tokens (share links). */
export function newToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}
