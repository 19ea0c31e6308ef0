/** Bytes a streamed XML answer is written into: UTF-8, in chunks of CHUNK bytes handed out as they fill. */
const CHUNK = 64 * 1024;
/** The most bytes one UTF-16 code unit (or an escaped character) writes: `&quot;`. */
const WIDEST = 6;

const ENTITY: Record<number, Uint8Array> = {
  38: ascii('&amp;'),
  60: ascii('&lt;'),
  62: ascii('&gt;'),
  34: ascii('&quot;'),
  39: ascii('&apos;'),
};

/** An ASCII constant as bytes, written with one copy. */
export function ascii(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/**
 * Writes text as UTF-8 straight into chunk buffers, escaping (as escapeXml) where asked: a listing's
 * elements are never built as strings nor gathered into one. Lone surrogates become U+FFFD, as
 * TextEncoder and the runtime's response sink write them.
 */
export class XmlBytes {
  private buf = new Uint8Array(CHUNK);
  private at = 0;
  private readonly full: Uint8Array[] = [];
  /** Bytes handed out so far. */
  written = 0;

  /** Whether a whole chunk is ready to send. */
  get ready(): boolean {
    return this.full.length > 0;
  }

  /** The chunks filled so far, and with `all` the one being filled. */
  take(all = false): Uint8Array[] {
    if (all && this.at > 0) this.next();
    const out = this.full.splice(0);
    for (const c of out) this.written += c.length;
    return out;
  }

  /** Bytes made by ascii(), shorter than a chunk. */
  bytes(b: Uint8Array): void {
    if (this.at + b.length > this.buf.length) this.next();
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  /** A string that is already XML text. */
  raw(s: string): void {
    this.text(s, false);
  }

  /** Character data or an attribute value: & < > " ' as entities. */
  escaped(s: string): void {
    this.text(s, true);
  }

  /** A whole number as its decimal digits (any other number as String writes it). */
  number(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) return this.raw(String(n));
    if (this.at + 16 > this.buf.length) this.next();
    const buf = this.buf;
    let end = this.at;
    for (let v = n; v >= 10; v = Math.floor(v / 10)) end++;
    this.at = end + 1;
    let v = n;
    do {
      buf[end--] = 48 + (v % 10);
      v = Math.floor(v / 10);
    } while (v > 0);
  }

  private text(s: string, escape: boolean): void {
    const n = s.length;
    let buf = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) {
      if (at + WIDEST > buf.length) {
        this.at = at;
        this.next();
        buf = this.buf;
        at = 0;
      }
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        if (escape && (c === 38 || c === 60 || c === 62 || c === 34 || c === 39)) {
          const e = ENTITY[c]!;
          buf.set(e, at);
          at += e.length;
        } else buf[at++] = c;
      } else if (c < 0x800) {
        buf[at++] = 0xc0 | (c >> 6);
        buf[at++] = 0x80 | (c & 0x3f);
      } else {
        if (c >= 0xd800 && c <= 0xdfff) {
          const low = c <= 0xdbff && i + 1 < n ? s.charCodeAt(i + 1) : 0;
          if (low >= 0xdc00 && low <= 0xdfff) {
            const cp = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
            buf[at++] = 0xf0 | (cp >> 18);
            buf[at++] = 0x80 | ((cp >> 12) & 0x3f);
            buf[at++] = 0x80 | ((cp >> 6) & 0x3f);
            buf[at++] = 0x80 | (cp & 0x3f);
            i++;
            continue;
          }
          c = 0xfffd;
        }
        buf[at++] = 0xe0 | (c >> 12);
        buf[at++] = 0x80 | ((c >> 6) & 0x3f);
        buf[at++] = 0x80 | (c & 0x3f);
      }
    }
    this.at = at;
  }

  private next(): void {
    this.full.push(this.buf.subarray(0, this.at));
    this.buf = new Uint8Array(CHUNK);
    this.at = 0;
  }
}
