import { inflateSync } from 'node:zlib';
import { GLYPH_UNICODE, STANDARD_WIDTHS } from './pdf-tables.ts';

/**
 * A reader of PDF text layers for the common case, placing glyphs the way pdf.js does where it decides word
 * and line breaks (its getTextContent: the same gaps, thresholds and page box), without pdf.js's per-glyph
 * matrices and text items. Anything it does not fully understand (encryption, Type3 or vertical fonts, a code
 * without a known character, rotated or raised text, forms, filters other than Flate, a damaged file…) makes it
 * answer null, and the caller reads the document with pdf.js instead.
 */
class Unsupported extends Error {}

class Ref {
  constructor(readonly num: number) {}
}
class Stream {
  constructor(
    readonly dict: Dict,
    readonly raw: Uint8Array,
  ) {}
}
class Op {
  constructor(readonly op: string) {}
}
type Dict = Map<string, Obj>;
/** A name is a string; a PDF string is its bytes. */
type Obj = number | boolean | null | string | Uint8Array | Obj[] | Dict | Ref | Stream;

// Whitespace and delimiters of the PDF syntax, by byte.
const SPACE = new Uint8Array(256);
const DELIM = new Uint8Array(256);
for (const c of [0, 9, 10, 12, 13, 32]) SPACE[c] = 1;
for (const c of '()<>[]{}/%') DELIM[c.charCodeAt(0)] = 1;
const regular = (c: number) => SPACE[c] === 0 && DELIM[c] === 0;
const hexValue = (c: number) => (c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1);

// Bounds on what a hostile file can make the reader do before it gives the document to pdf.js.
const MAX_DEPTH = 64;
const MAX_STREAM_BYTES = 64 * 1024 ** 2;
const MAX_INFLATED_BYTES = 256 * 1024 ** 2;
const MAX_PAGE_NODES = 100_000;
const MAX_OPERANDS = 10_000;
const MAX_CMAP_RANGE = 0x10000;
// Codes a ToUnicode map or a font's widths may give in all, overwrites included: two bytes' worth twice over.
const MAX_CMAP_ENTRIES = 0x20000;

// The few dozen operators producers write, kept for the worker's life; a file of made-up words adds at most 1,024.
const SHORT_WORDS = new Map<number, Op | boolean | null>();

class Lexer {
  pos: number;
  constructor(
    readonly b: Uint8Array,
    pos = 0,
  ) {
    this.pos = pos;
  }

  skipSpace(): void {
    const b = this.b;
    let p = this.pos;
    for (;;) {
      const c = b[p];
      if (c === undefined) break;
      if (SPACE[c]) p++;
      else if (c === 37) {
        while (p < b.length && b[p] !== 10 && b[p] !== 13) p++;
      } else break;
    }
    this.pos = p;
  }

  /** The next object or operator; undefined at the end. `refs`: read `n g R` as a reference (not in content streams). */
  read(refs: boolean, depth = 0): Obj | Op | undefined {
    if (depth > MAX_DEPTH) throw new Unsupported('nested too deeply');
    this.skipSpace();
    const b = this.b;
    const c = b[this.pos];
    if (c === undefined) return undefined;
    if (c === 47) return this.name();
    if (c === 40) return this.literal();
    if (c === 60) {
      if (b[this.pos + 1] === 60) {
        this.pos += 2;
        const dict: Dict = new Map();
        for (;;) {
          this.skipSpace();
          if (b[this.pos] === 62 && b[this.pos + 1] === 62) {
            this.pos += 2;
            return dict;
          }
          const key = this.read(refs, depth + 1);
          if (typeof key !== 'string') throw new Unsupported('bad dictionary');
          const value = this.read(refs, depth + 1);
          if (value === undefined || value instanceof Op) throw new Unsupported('bad dictionary');
          dict.set(key, value);
        }
      }
      return this.hex();
    }
    if (c === 91) {
      this.pos++;
      const array: Obj[] = [];
      for (;;) {
        this.skipSpace();
        if (b[this.pos] === 93) {
          this.pos++;
          return array;
        }
        const item = this.read(refs, depth + 1);
        if (item === undefined || item instanceof Op) throw new Unsupported('bad array');
        array.push(item);
      }
    }
    if ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46) {
      const n = this.number();
      if (refs && Number.isInteger(n) && n >= 0) {
        const save = this.pos;
        this.skipSpace();
        const d = b[this.pos];
        if (d !== undefined && d >= 48 && d <= 57) {
          this.number();
          this.skipSpace();
          if (b[this.pos] === 82 && (this.pos + 1 >= b.length || !regular(b[this.pos + 1]!))) {
            this.pos++;
            return new Ref(n);
          }
        }
        this.pos = save;
      }
      return n;
    }
    if (DELIM[c]) throw new Unsupported('unexpected delimiter');
    const start = this.pos;
    while (this.pos < b.length && regular(b[this.pos]!)) this.pos++;
    const length = this.pos - start;
    // Operators are one to three letters: each is made once, keyed by its bytes.
    const key =
      length <= 3 ? length | (b[start]! << 2) | ((length > 1 ? b[start + 1]! : 0) << 10) | ((length > 2 ? b[start + 2]! : 0) << 18) : -1;
    const known = key >= 0 ? SHORT_WORDS.get(key) : undefined;
    if (known !== undefined) return known;
    const word = latin1(b, start, this.pos);
    const value = word === 'true' ? true : word === 'false' ? false : word === 'null' ? null : new Op(word);
    if (key >= 0 && SHORT_WORDS.size < 1024) SHORT_WORDS.set(key, value);
    return value;
  }

  private number(): number {
    const b = this.b;
    let p = this.pos;
    let sign = 1;
    if (b[p] === 45) {
      sign = -1;
      p++;
    } else if (b[p] === 43) p++;
    let value = 0;
    let digits = 0;
    while (p < b.length && b[p]! >= 48 && b[p]! <= 57) {
      value = value * 10 + b[p]! - 48;
      p++;
      digits++;
    }
    if (b[p] === 46) {
      p++;
      let scale = 0.1;
      while (p < b.length && b[p]! >= 48 && b[p]! <= 57) {
        value += (b[p]! - 48) * scale;
        scale /= 10;
        p++;
        digits++;
      }
    }
    if (digits === 0 || (p < b.length && regular(b[p]!))) throw new Unsupported('bad number');
    this.pos = p;
    return sign * value;
  }

  private name(): string {
    const b = this.b;
    let p = this.pos + 1;
    let out = '';
    let from = p;
    while (p < b.length && regular(b[p]!)) {
      if (b[p] === 35) {
        const hi = hexValue(b[p + 1] ?? 0);
        const lo = hexValue(b[p + 2] ?? 0);
        if (hi < 0 || lo < 0) throw new Unsupported('bad name');
        out += latin1(b, from, p) + String.fromCharCode(hi * 16 + lo);
        p += 3;
        from = p;
      } else p++;
    }
    this.pos = p;
    return out + latin1(b, from, p);
  }

  private literal(): Uint8Array {
    const b = this.b;
    let p = this.pos + 1;
    // Most strings have no escape: their bytes are a slice.
    const start = p;
    let depth = 1;
    while (p < b.length) {
      const c = b[p]!;
      if (c === 92) break;
      if (c === 40) depth++;
      else if (c === 41 && --depth === 0) {
        this.pos = p + 1;
        return b.subarray(start, p);
      }
      p++;
    }
    const out: number[] = Array.from(b.subarray(start, p));
    while (p < b.length) {
      const c = b[p++]!;
      if (c === 40) depth++;
      else if (c === 41) {
        if (--depth === 0) {
          this.pos = p;
          return Uint8Array.from(out);
        }
      } else if (c === 92) {
        const e = b[p++];
        if (e === undefined) break;
        if (e === 110) out.push(10);
        else if (e === 114) out.push(13);
        else if (e === 116) out.push(9);
        else if (e === 98) out.push(8);
        else if (e === 102) out.push(12);
        else if (e === 13) {
          if (b[p] === 10) p++;
        } else if (e === 10) {
          // A line continuation.
        } else if (e >= 48 && e <= 55) {
          let v = e - 48;
          for (let k = 0; k < 2 && b[p]! >= 48 && b[p]! <= 55; k++) v = v * 8 + b[p++]! - 48;
          out.push(v & 0xff);
        } else out.push(e);
        continue;
      }
      out.push(c);
    }
    throw new Unsupported('unterminated string');
  }

  private hex(): Uint8Array {
    const b = this.b;
    const end = b.indexOf(62, this.pos + 1);
    if (end < 0) throw new Unsupported('unterminated hex string');
    const out = new Uint8Array((end - this.pos) >> 1);
    let n = 0;
    let half = -1;
    for (let p = this.pos + 1; p < end; p++) {
      const v = hexValue(b[p]!);
      if (v < 0) {
        if (SPACE[b[p]!]) continue;
        throw new Unsupported('bad hex string');
      }
      if (half < 0) half = v;
      else {
        out[n++] = half * 16 + v;
        half = -1;
      }
    }
    if (half >= 0) out[n++] = half * 16;
    this.pos = end + 1;
    return out.subarray(0, n);
  }
}

function latin1(b: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += String.fromCharCode(b[i]!);
  return s;
}

function indexOf(b: Uint8Array, text: string, from: number, to = b.length): number {
  const first = text.charCodeAt(0);
  outer: for (let i = b.indexOf(first, from); i >= 0 && i + text.length <= to; i = b.indexOf(first, i + 1)) {
    for (let k = 1; k < text.length; k++) if (b[i + k] !== text.charCodeAt(k)) continue outer;
    return i;
  }
  return -1;
}

type XrefEntry = { offset: number } | { stream: number; index: number };

class Document {
  private readonly xref = new Map<number, XrefEntry>();
  private readonly cache = new Map<number, Obj>();
  private readonly resolving = new Set<number>();
  private readonly objectStreams = new Map<number, { data: Uint8Array; offsets: Map<number, number> }>();
  private inflated = 0;
  private readonly fonts = new Map<Dict, Font>();
  trailer: Dict = new Map();

  constructor(readonly bytes: Uint8Array) {
    const tail = Math.max(0, bytes.length - 1024);
    let at = -1;
    for (let i = indexOf(bytes, 'startxref', tail); i >= 0; i = indexOf(bytes, 'startxref', i + 1)) at = i;
    if (at < 0) throw new Unsupported('no startxref');
    const lexer = new Lexer(bytes, at + 9);
    const start = lexer.read(false);
    if (typeof start !== 'number') throw new Unsupported('bad startxref');
    const seen = new Set<number>();
    const pending = [start];
    let first = true;
    while (pending.length > 0) {
      const offset = pending.shift()!;
      if (seen.has(offset) || seen.size > 64) throw new Unsupported('xref loop');
      seen.add(offset);
      const trailer = this.readXref(offset);
      if (first) this.trailer = trailer;
      first = false;
      const stm = trailer.get('XRefStm');
      if (typeof stm === 'number') pending.unshift(stm);
      const prev = trailer.get('Prev');
      if (typeof prev === 'number') pending.push(prev);
    }
    if (this.trailer.has('Encrypt')) throw new Unsupported('encrypted');
  }

  private readXref(offset: number): Dict {
    const b = this.bytes;
    const lexer = new Lexer(b, offset);
    lexer.skipSpace();
    if (indexOf(b, 'xref', lexer.pos, lexer.pos + 4) === lexer.pos) {
      lexer.pos += 4;
      for (;;) {
        const start = lexer.read(false);
        if (start instanceof Op && start.op === 'trailer') break;
        const count = lexer.read(false);
        if (typeof start !== 'number' || typeof count !== 'number') throw new Unsupported('bad xref');
        for (let i = 0; i < count; i++) {
          const off = lexer.read(false);
          const gen = lexer.read(false);
          const kind = lexer.read(false);
          if (typeof off !== 'number' || typeof gen !== 'number' || !(kind instanceof Op)) throw new Unsupported('bad xref entry');
          if (kind.op === 'n' && !this.xref.has(start + i)) this.xref.set(start + i, { offset: off });
          else if (kind.op !== 'n' && kind.op !== 'f') throw new Unsupported('bad xref entry');
        }
      }
      const trailer = lexer.read(true);
      if (!(trailer instanceof Map)) throw new Unsupported('bad trailer');
      return trailer;
    }
    const stream = this.parseAt(offset, -1);
    if (!(stream instanceof Stream) || stream.dict.get('Type') !== 'XRef') throw new Unsupported('bad xref stream');
    const data = this.decode(stream);
    const w = stream.dict.get('W');
    const size = stream.dict.get('Size');
    if (!Array.isArray(w) || w.length !== 3 || !w.every((n) => typeof n === 'number' && n >= 0 && n <= 8) || typeof size !== 'number')
      throw new Unsupported('bad xref stream');
    const [w0, w1, w2] = w as number[];
    const index = (stream.dict.get('Index') as Obj[] | undefined) ?? [0, size];
    const width = w0! + w1! + w2!;
    // Rows of no bytes would let a row count of the file's choosing run without reading anything.
    if (width === 0) throw new Unsupported('bad xref stream');
    let p = 0;
    const field = (n: number, dflt: number) => {
      if (n === 0) return dflt;
      let v = 0;
      for (let k = 0; k < n; k++) v = v * 256 + data[p++]!;
      return v;
    };
    for (let s = 0; s + 1 < index.length; s += 2) {
      const start = index[s];
      const count = index[s + 1];
      if (typeof start !== 'number' || typeof count !== 'number') throw new Unsupported('bad xref stream');
      for (let i = 0; i < count; i++) {
        if (p + width > data.length) throw new Unsupported('short xref stream');
        const type = field(w0!, 1);
        const a = field(w1!, 0);
        const c = field(w2!, 0);
        if (this.xref.has(start + i)) continue;
        if (type === 1) this.xref.set(start + i, { offset: a });
        else if (type === 2) this.xref.set(start + i, { stream: a, index: c });
      }
    }
    return stream.dict;
  }

  /** The object `n g obj … endobj` at `offset`; `num` is checked when not -1. */
  private parseAt(offset: number, num: number): Obj {
    const lexer = new Lexer(this.bytes, offset);
    const n = lexer.read(false);
    const g = lexer.read(false);
    const obj = lexer.read(false);
    if (typeof n !== 'number' || typeof g !== 'number' || !(obj instanceof Op) || obj.op !== 'obj' || (num >= 0 && n !== num))
      throw new Unsupported('bad object header');
    const value = lexer.read(true);
    if (value === undefined || value instanceof Op) throw new Unsupported('bad object');
    lexer.skipSpace();
    if (!(value instanceof Map) || indexOf(this.bytes, 'stream', lexer.pos, lexer.pos + 6) !== lexer.pos) return value;
    let start = lexer.pos + 6;
    if (this.bytes[start] === 13) start++;
    if (this.bytes[start] === 10) start++;
    const length = this.get(value.get('Length'));
    if (typeof length !== 'number' || length < 0 || start + length > this.bytes.length) throw new Unsupported('bad stream length');
    const end = new Lexer(this.bytes, start + length);
    end.skipSpace();
    if (indexOf(this.bytes, 'endstream', end.pos, end.pos + 9) !== end.pos) throw new Unsupported('stream length disagrees');
    return new Stream(value, this.bytes.subarray(start, start + length));
  }

  /** `obj` with a reference followed. */
  get(obj: Obj | undefined): Obj | undefined {
    if (!(obj instanceof Ref)) return obj;
    const num = obj.num;
    const cached = this.cache.get(num);
    if (cached !== undefined) return cached;
    const entry = this.xref.get(num);
    if (!entry) return null;
    if (this.resolving.has(num) || this.resolving.size > MAX_DEPTH) throw new Unsupported('reference loop');
    this.resolving.add(num);
    try {
      const value = 'offset' in entry ? this.parseAt(entry.offset, num) : this.fromObjectStream(entry.stream, entry.index, num);
      this.cache.set(num, value);
      return value;
    } finally {
      this.resolving.delete(num);
    }
  }

  private fromObjectStream(streamNum: number, index: number, num: number): Obj {
    let objStm = this.objectStreams.get(streamNum);
    if (!objStm) {
      const stream = this.get(new Ref(streamNum));
      if (!(stream instanceof Stream)) throw new Unsupported('bad object stream');
      const data = this.decode(stream);
      const n = stream.dict.get('N');
      const first = stream.dict.get('First');
      if (typeof n !== 'number' || typeof first !== 'number') throw new Unsupported('bad object stream');
      const lexer = new Lexer(data);
      const offsets = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const objNum = lexer.read(false);
        const off = lexer.read(false);
        if (typeof objNum !== 'number' || typeof off !== 'number') throw new Unsupported('bad object stream');
        offsets.set(objNum, first + off);
      }
      objStm = { data, offsets };
      this.objectStreams.set(streamNum, objStm);
    }
    const at = objStm.offsets.get(num);
    if (at === undefined) throw new Unsupported(`object ${num} not at index ${index}`);
    const value = new Lexer(objStm.data, at).read(true);
    if (value === undefined || value instanceof Op) throw new Unsupported('bad object');
    return value;
  }

  /** The font of a font dictionary, loaded once for every page that uses it. */
  font(dict: Dict): Font {
    let font = this.fonts.get(dict);
    if (!font) {
      font = loadFont(this, dict);
      this.fonts.set(dict, font);
    }
    return font;
  }

  /** A stream's bytes: unfiltered or FlateDecode (with PNG predictors), within the caps. */
  decode(stream: Stream): Uint8Array {
    let filter = this.get(stream.dict.get('Filter'));
    let params = this.get(stream.dict.get('DecodeParms'));
    if (Array.isArray(filter)) {
      if (filter.length > 1) throw new Unsupported('filter chain');
      filter = this.get(filter[0]);
      params = Array.isArray(params) ? this.get(params[0]) : params;
    }
    if (filter === undefined || filter === null) return stream.raw;
    if (filter !== 'FlateDecode') throw new Unsupported(`filter ${String(filter)}`);
    const cap = Math.min(MAX_STREAM_BYTES, MAX_INFLATED_BYTES - this.inflated);
    let data: Uint8Array;
    try {
      data = inflateSync(stream.raw, { maxOutputLength: Math.max(1, cap) });
    } catch {
      throw new Unsupported('inflate failed or past the caps');
    }
    this.inflated += data.length;
    if (!(params instanceof Map)) return data;
    const predictor = this.get(params.get('Predictor')) ?? 1;
    if (predictor === 1) return data;
    const colors = this.get(params.get('Colors')) ?? 1;
    const bits = this.get(params.get('BitsPerComponent')) ?? 8;
    const columns = this.get(params.get('Columns')) ?? 1;
    if (typeof predictor !== 'number' || predictor < 10 || colors !== 1 || bits !== 8 || typeof columns !== 'number' || columns < 1)
      throw new Unsupported('predictor');
    return unpredictPng(data, columns);
  }
}

/** Undoes PNG row filters of one byte per pixel. */
function unpredictPng(data: Uint8Array, columns: number): Uint8Array {
  const rows = Math.floor(data.length / (columns + 1));
  const out = new Uint8Array(rows * columns);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (columns + 1)]!;
    const src = r * (columns + 1) + 1;
    const dst = r * columns;
    for (let i = 0; i < columns; i++) {
      const left = i > 0 ? out[dst + i - 1]! : 0;
      const up = r > 0 ? out[dst - columns + i]! : 0;
      const upLeft = r > 0 && i > 0 ? out[dst - columns + i - 1]! : 0;
      let v = data[src + i]!;
      if (type === 1) v += left;
      else if (type === 2) v += up;
      else if (type === 3) v += (left + up) >> 1;
      else if (type === 4) {
        const p = left + up - upLeft;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - upLeft);
        v += pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      } else if (type !== 0) throw new Unsupported('PNG filter');
      out[dst + i] = v & 0xff;
    }
  }
  return out;
}

function glyphUnicode(name: string): string | undefined {
  const known = GLYPH_UNICODE.get(name);
  if (known !== undefined) return known;
  const m = /^uni([0-9A-F]{4})$/.exec(name) ?? /^u([0-9A-F]{4,6})$/.exec(name);
  if (!m) return undefined;
  const code = Number.parseInt(m[1]!, 16);
  return code < 0xd800 || (code > 0xdfff && code <= 0x10ffff) ? String.fromCodePoint(code) : undefined;
}

const cp1252 = new TextDecoder('windows-1252');
const utf16 = new TextDecoder('utf-16le');

/** The characters of a simple font's base encoding; undefined where the reader does not know pdf.js's answer. */
function baseEncoding(name: Obj | undefined): (string | undefined)[] {
  const table: (string | undefined)[] = new Array(256).fill(undefined);
  if (name === 'WinAnsiEncoding') {
    for (let c = 32; c < 256; c++) {
      if (c === 127 || c === 0x81 || c === 0x8d || c === 0x8f || c === 0x90 || c === 0x9d) continue;
      table[c] = c === 0xad ? '-' : c === 0xa0 ? ' ' : cp1252.decode(Uint8Array.of(c));
    }
  } else if (name === 'StandardEncoding') {
    for (let c = 32; c < 127; c++) table[c] = c === 39 ? '\u2019' : c === 96 ? '\u2018' : String.fromCharCode(c);
  } else throw new Unsupported(`encoding ${String(name)}`);
  return table;
}

/**
 * A font's codes, each looked up once: its width (1/1000 of text space) and character, or unsupported when
 * either is unknown or the character is one pdf.js treats specially.
 */
class Font {
  // Per code: 0 not looked up yet, 1 a glyph that is placed, 2 a space (pdf.js places none, it leaves a gap).
  private readonly kinds: Uint8Array;
  readonly widths: Float64Array;
  readonly chars: string[] = [];

  constructor(
    readonly twoByte: boolean,
    private readonly widthOf: (code: number) => number | undefined,
    private readonly unicodeOf: (code: number) => string | undefined,
  ) {
    this.kinds = new Uint8Array(twoByte ? 0x10000 : 0x100);
    this.widths = new Float64Array(this.kinds.length);
  }

  kind(code: number): number {
    const known = this.kinds[code]!;
    if (known !== 0) return known;
    const w = this.widthOf(code);
    const ch = this.unicodeOf(code);
    if (w === undefined || ch === undefined || ch === '' || SPECIAL.test(ch)) throw new Unsupported('unknown glyph');
    this.widths[code] = w;
    this.chars[code] = ch;
    const kind = LEADING_SPACE.test(ch) ? 2 : 1;
    this.kinds[code] = kind;
    return kind;
  }
}

const STANDARD_ALIASES: Record<string, string> = {
  Helvetica: 'Helvetica',
  'Helvetica-Oblique': 'Helvetica',
  'Helvetica-Bold': 'Helvetica-Bold',
  'Helvetica-BoldOblique': 'Helvetica-Bold',
  'Times-Roman': 'Times-Roman',
  'Times-Bold': 'Times-Bold',
  'Times-Italic': 'Times-Italic',
  'Times-BoldItalic': 'Times-BoldItalic',
};

function readCMap(data: Uint8Array): Map<number, string> {
  const map = new Map<number, string>();
  const lexer = new Lexer(data);
  const code = (bytes: Obj | Op | undefined): number => {
    if (!(bytes instanceof Uint8Array) || bytes.length === 0 || bytes.length > 4) throw new Unsupported('bad CMap code');
    let v = 0;
    for (const x of bytes) v = v * 256 + x;
    return v;
  };
  const utf16 = (bytes: Uint8Array): string => {
    let s = '';
    for (let i = 0; i + 1 < bytes.length; i += 2) s += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
    if (bytes.length % 2 === 1) throw new Unsupported('odd CMap value');
    return s;
  };
  let entries = 0;
  for (;;) {
    const token = lexer.read(false);
    if (token === undefined) break;
    if (!(token instanceof Op)) continue;
    if (token.op === 'usecmap') throw new Unsupported('usecmap');
    if (token.op === 'beginbfchar') {
      for (;;) {
        const src = lexer.read(false);
        if (src instanceof Op && src.op === 'endbfchar') break;
        const dst = lexer.read(false);
        if (!(dst instanceof Uint8Array)) throw new Unsupported('bad bfchar');
        if (++entries > MAX_CMAP_ENTRIES) throw new Unsupported('CMap too large');
        map.set(code(src), utf16(dst));
      }
    } else if (token.op === 'beginbfrange') {
      for (;;) {
        const lo = lexer.read(false);
        if (lo instanceof Op && lo.op === 'endbfrange') break;
        const from = code(lo);
        const to = code(lexer.read(false));
        const dst = lexer.read(false);
        if (to < from || to - from >= MAX_CMAP_RANGE) throw new Unsupported('bad bfrange');
        entries += to - from + 1;
        if (entries > MAX_CMAP_ENTRIES) throw new Unsupported('CMap too large');
        if (Array.isArray(dst)) {
          for (let c = from; c <= to; c++) {
            const item = dst[c - from];
            if (!(item instanceof Uint8Array)) throw new Unsupported('bad bfrange');
            map.set(c, utf16(item));
          }
        } else if (dst instanceof Uint8Array && dst.length >= 2) {
          const s = utf16(dst);
          const head = s.slice(0, -1);
          const last = s.charCodeAt(s.length - 1);
          for (let c = from; c <= to; c++) map.set(c, head + String.fromCharCode(last + c - from));
        } else throw new Unsupported('bad bfrange');
      }
    }
  }
  return map;
}

/** The encoding a Type1 font program declares in its clear-text part (`dup 65 /A put`), as pdf.js reads it. */
function builtInEncoding(doc: Document, descriptor: Dict): (string | undefined)[] | null {
  const file = doc.get(descriptor.get('FontFile'));
  if (!(file instanceof Stream)) return null;
  const data = doc.decode(file);
  const length1 = doc.get(file.dict.get('Length1'));
  const clear = latin1(data, 0, Math.min(data.length, typeof length1 === 'number' && length1 > 0 ? length1 : data.length, 256 * 1024));
  if (/\/Encoding\s+StandardEncoding\s+def/.test(clear)) return baseEncoding('StandardEncoding');
  const table: (string | undefined)[] = new Array(256).fill(undefined);
  for (const m of clear.matchAll(/dup\s+(\d+)\s*\/([^\s{}[\]()<>/%]+)\s+put/g)) {
    const code = Number(m[1]);
    if (code < 256) table[code] = glyphUnicode(m[2]!);
  }
  return table;
}

function loadFont(doc: Document, dict: Dict): Font {
  const subtype = doc.get(dict.get('Subtype'));
  const toUnicodeObj = doc.get(dict.get('ToUnicode'));
  const toUnicode = toUnicodeObj instanceof Stream ? readCMap(doc.decode(toUnicodeObj)) : null;
  if (subtype === 'Type0') {
    if (doc.get(dict.get('Encoding')) !== 'Identity-H' || !toUnicode) throw new Unsupported('composite font');
    const descendants = doc.get(dict.get('DescendantFonts'));
    const cid = Array.isArray(descendants) ? doc.get(descendants[0]) : undefined;
    if (!(cid instanceof Map)) throw new Unsupported('no descendant font');
    const dw = doc.get(cid.get('DW'));
    const widths = new Map<number, number>();
    const w = doc.get(cid.get('W'));
    let entries = 0;
    if (Array.isArray(w)) {
      for (let i = 0; i < w.length; ) {
        const first = doc.get(w[i]);
        const next = doc.get(w[i + 1]);
        if (typeof first !== 'number') throw new Unsupported('bad W');
        if (Array.isArray(next)) {
          entries += next.length;
          if (entries > MAX_CMAP_ENTRIES) throw new Unsupported('W too large');
          next.forEach((x, k) => {
            const v = doc.get(x);
            if (typeof v === 'number') widths.set(first + k, v);
          });
          i += 2;
        } else {
          const last = next;
          const v = doc.get(w[i + 2]);
          if (typeof last !== 'number' || typeof v !== 'number' || last - first > MAX_CMAP_RANGE) throw new Unsupported('bad W');
          entries += Math.max(0, last - first + 1);
          if (entries > MAX_CMAP_ENTRIES) throw new Unsupported('W too large');
          for (let c = first; c <= last; c++) widths.set(c, v);
          i += 3;
        }
      }
    }
    const dflt = typeof dw === 'number' ? dw : 1000;
    return new Font(
      true,
      (c) => widths.get(c) ?? dflt,
      (c) => toUnicode.get(c),
    );
  }
  if (subtype !== 'Type1' && subtype !== 'TrueType' && subtype !== 'MMType1') throw new Unsupported(`font ${String(subtype)}`);
  const base = doc.get(dict.get('BaseFont'));
  const descriptor = doc.get(dict.get('FontDescriptor'));
  const embedded = descriptor instanceof Map && (descriptor.has('FontFile') || descriptor.has('FontFile2') || descriptor.has('FontFile3'));
  let widthOf: (code: number) => number | undefined;
  const widths = doc.get(dict.get('Widths'));
  const firstChar = doc.get(dict.get('FirstChar'));
  if (Array.isArray(widths) && typeof firstChar === 'number') {
    const list = widths.map((x) => doc.get(x));
    widthOf = (c) => {
      const v = list[c - firstChar];
      return typeof v === 'number' ? v : undefined;
    };
  } else {
    const std = typeof base === 'string' && !embedded ? base : '';
    const table = STANDARD_WIDTHS[STANDARD_ALIASES[std] ?? ''];
    if (std.startsWith('Courier')) widthOf = () => 600;
    else if (table) widthOf = (c) => (c >= 32 && c < 127 ? table[c - 32] : undefined);
    else throw new Unsupported('no widths');
  }
  // Characters from the encoding, under those of the ToUnicode map (pdf.js's order).
  const standard = !embedded && typeof base === 'string' && (base in STANDARD_ALIASES || base.startsWith('Courier'));
  const implicit = () => {
    if (standard) return baseEncoding('StandardEncoding');
    if (subtype !== 'TrueType' && descriptor instanceof Map) return builtInEncoding(doc, descriptor);
    return null;
  };
  let encoding: (string | undefined)[] | null;
  const enc = doc.get(dict.get('Encoding'));
  if (enc instanceof Map) {
    const baseName = doc.get(enc.get('BaseEncoding'));
    encoding = baseName === undefined ? implicit() : baseEncoding(baseName);
    const differences = doc.get(enc.get('Differences'));
    if (Array.isArray(differences)) {
      if (!encoding) throw new Unsupported('differences over an unknown encoding');
      let code = 0;
      for (const item of differences) {
        const v = doc.get(item);
        if (typeof v === 'number') code = v;
        else if (typeof v === 'string' && code >= 0 && code < 256) encoding[code++] = glyphUnicode(v);
        else throw new Unsupported('bad differences');
      }
    }
  } else encoding = enc !== undefined ? baseEncoding(enc) : implicit();
  if (!encoding && !toUnicode) throw new Unsupported('no encoding');
  return new Font(false, widthOf, (c) => toUnicode?.get(c) ?? encoding?.[c]);
}

type Matrix = [number, number, number, number, number, number];
const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];
/** m × n, as PDF composes them (m applied first). */
function multiply(m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[1] * n[2],
    m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2],
    m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4],
    m[4] * n[1] + m[5] * n[3] + n[5],
  ];
}

interface State {
  ctm: Matrix;
  font: Font | null;
  fontSize: number;
  charSpacing: number;
  wordSpacing: number;
  hScale: number;
  leading: number;
  rise: number;
  tm: Matrix;
  tlm: Matrix;
}

// pdf.js's factors of the font size deciding what a gap between two glyphs is (evaluator.js, getTextContent).
const TRACKING_SPACE_MIN = 0.102;
const NOT_A_SPACE = 0.03;
const NEGATIVE_SPACE_MAX = -0.2;
// Characters pdf.js treats specially (zero-width marks, format marks, right-to-left): their documents are pdf.js's.
const SPECIAL = /[\p{Mn}\p{Cf}\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const LEADING_SPACE = /^\s/u;
// pdf.js's normalizeUnicode: compatibility forms (ligatures, presentation forms, some spaces) to NFKC.
const NORMALIZE =
  /([\u00a0\u00b5\u037e\u0eb3\u2000-\u200a\u202f\u2126\ufb00-\ufb04\ufb06\ufb20-\ufb36\ufb38-\ufb3c\ufb3e\ufb40\ufb41\ufb43\ufb44\ufb46-\ufba1\ufba4-\ufba9\ufbae-\ufbb1\ufbd3-\ufbdc\ufbde-\ufbe7\ufbea-\ufbf8\ufbfc\ufbfd\ufc00-\ufc5d\ufc64-\ufcf1\ufcf5-\ufd3d\ufd88\ufdf4\ufdfa\ufdfb\ufe71\ufe77\ufe79\ufe7b\ufe7d]+)|(\ufb05+)/gu;

/** One page's text, glyph by glyph as pdf.js's getTextContent places them; ' ' and '\n' where it breaks. */
class PageText {
  // The page's text as UTF-16 code units, grown as needed.
  private out = new Uint16Array(4096);
  private length = 0;
  /** Whether any character is past ASCII, which pdf.js's normalization may change. */
  beyondAscii = false;
  // The last glyph placed: where it ended on the page (pdf.js's prevTransform), and the text item's measures.
  private prevX = Number.NaN;
  private prevY = 0;
  private itemOpen = false;
  private itemScale = 1;
  private itemHeight = 0;
  private itemFontSize = 0;
  private lastFontSize = Number.NaN;
  private lastFont: Font | null = null;
  // pdf.js's two last characters (a ring of two), of which only whether each is a space matters here.
  private last0Space = true;
  private last1Space = true;
  private lastIndex = 0;
  private readonly left: number;
  private readonly bottom: number;
  private readonly right: number;
  private readonly top: number;

  constructor(
    private readonly doc: Document,
    view: [number, number, number, number],
  ) {
    [this.left, this.bottom, this.right, this.top] = view;
  }

  text(): string {
    return utf16.decode(this.out.subarray(0, this.length));
  }

  private emit(ch: string): void {
    if (this.length + ch.length > this.out.length) {
      const grown = new Uint16Array(this.out.length * 2 + ch.length);
      grown.set(this.out);
      this.out = grown;
    }
    for (let k = 0; k < ch.length; k++) {
      const code = ch.charCodeAt(k);
      if (code > 0x7f) this.beyondAscii = true;
      this.out[this.length++] = code;
    }
  }

  private emitBreak(code: number): void {
    if (this.length === this.out.length) {
      const grown = new Uint16Array(this.out.length * 2);
      grown.set(this.out);
      this.out = grown;
    }
    this.out[this.length++] = code;
  }

  /** pdf.js's shouldAddWhitepsace: the character before last was not a space and the last one was. */
  private spaceSwallowed(): boolean {
    return this.lastIndex === 0 ? !this.last0Space && this.last1Space : !this.last1Space && this.last0Space;
  }

  private saveLastChar(space: boolean): boolean {
    const ret = this.spaceSwallowed();
    if (this.lastIndex === 0) this.last0Space = space;
    else this.last1Space = space;
    this.lastIndex ^= 1;
    return ret;
  }

  private resetLastChars(): void {
    this.last0Space = this.last1Space = true;
    this.lastIndex = 0;
  }

  private eol(): void {
    this.resetLastChars();
    this.itemOpen = false;
    this.emitBreak(10);
  }

  /** pdf.js's compareWithLastPosition for horizontal text at 0°: false when the glyph is off the page. */
  private place(x: number, y: number, width: number): boolean {
    if (x + width < this.left || x > this.right || y < this.bottom || y > this.top) return false;
    if (Number.isNaN(this.prevX) || (x === this.prevX && y === this.prevY)) return true;
    const advance = (x - this.prevX) / this.itemScale;
    const dy = y - this.prevY;
    const size = this.itemFontSize;
    if (advance < size * NEGATIVE_SPACE_MAX) {
      if (Math.abs(dy) > 0.5 * this.itemHeight) this.eol();
      else {
        this.resetLastChars();
        this.itemOpen = false;
      }
      return true;
    }
    if (Math.abs(dy) > this.itemHeight) {
      this.eol();
      return true;
    }
    if (advance <= size * NOT_A_SPACE) this.resetLastChars();
    if (advance <= size * TRACKING_SPACE_MIN) {
      if (this.spaceSwallowed()) {
        this.resetLastChars();
        this.itemOpen = false;
        this.emitBreak(32);
      }
    } else {
      this.resetLastChars();
      this.emitBreak(32);
    }
    if (Math.abs(dy) > this.itemHeight * 0.25) this.itemOpen = false;
    return true;
  }

  private font(s: State, name: Obj | Op | undefined, resources: Dict): void {
    if (typeof name !== 'string') throw new Unsupported('bad Tf');
    const fonts = this.doc.get(resources.get('Font'));
    const dict = this.doc.get(fonts instanceof Map ? fonts.get(name) : undefined);
    if (!(dict instanceof Map)) throw new Unsupported('missing font');
    s.font = this.doc.font(dict);
  }

  /** pdf.js's buildTextContentItem: the glyphs of `bytes`, then `extra` (a TJ number) after the last. */
  private show(s: State, bytes: Uint8Array, extra: number): void {
    const font = s.font;
    if (!font) throw new Unsupported('text without a font');
    if (s.rise !== 0) throw new Unsupported('text rise');
    if (s.fontSize !== this.lastFontSize || font !== this.lastFont) {
      this.itemOpen = false;
      this.lastFontSize = s.fontSize;
      this.lastFont = font;
    }
    const tm = s.tm;
    const ctm = s.ctm;
    if (tm[1] !== 0 || tm[2] !== 0 || ctm[1] !== 0 || ctm[2] !== 0 || tm[0] * ctm[0] <= 0 || tm[3] * ctm[3] === 0)
      throw new Unsupported('rotated or skewed text');
    // Advances are in text space; on the page they are scaled by the text matrix's and the page's horizontal scale.
    const advance = s.hScale * tm[0];
    if (bytes.length === 0) {
      tm[4] += (s.charSpacing + extra) * advance;
      return;
    }
    const step = font.twoByte ? 2 : 1;
    if (bytes.length % step !== 0) throw new Unsupported('odd two-byte string');
    const scale = s.fontSize / 1000;
    const y = ctm[3] * tm[5] + ctm[5];
    for (let i = 0; i < bytes.length; i += step) {
      const code = step === 2 ? (bytes[i]! << 8) | bytes[i + 1]! : bytes[i]!;
      const kind = font.kind(code);
      let spacing = s.charSpacing + (i + step >= bytes.length ? extra : 0);
      const width = font.widths[code]! * scale;
      // pdf.js adds the word spacing to code 32 of any font, one byte or two.
      if (code === 32) spacing += s.wordSpacing;
      if (kind === 2) {
        tm[4] += (spacing + width) * advance;
        this.saveLastChar(true);
        continue;
      }
      if (!this.place(ctm[0] * tm[4] + ctm[4], y, width)) {
        tm[4] += width * advance;
        continue;
      }
      if (!this.itemOpen) {
        this.itemOpen = true;
        this.itemScale = Math.abs(ctm[0]) * Math.hypot(s.tlm[0], s.tlm[1]);
        this.itemHeight = Math.abs(s.fontSize * tm[3] * ctm[3]);
        this.itemFontSize = s.fontSize;
      }
      tm[4] += width * advance;
      if (width !== 0) {
        this.prevX = ctm[0] * tm[4] + ctm[4];
        this.prevY = y;
      }
      if (this.saveLastChar(false)) this.emitBreak(32);
      this.emit(font.chars[code]!);
      if (spacing !== 0) tm[4] += spacing * advance;
    }
  }

  run(content: Uint8Array, resources: Dict): void {
    const lexer = new Lexer(content);
    const stack: (Obj | Op)[] = [];
    const saved: State[] = [];
    let s: State = {
      ctm: IDENTITY,
      font: null,
      fontSize: 0,
      charSpacing: 0,
      wordSpacing: 0,
      hScale: 1,
      leading: 0,
      rise: 0,
      tm: [...IDENTITY],
      tlm: [...IDENTITY],
    };
    const num = (i: number): number => {
      const v = stack[stack.length - i];
      if (typeof v !== 'number') throw new Unsupported('operand');
      return v;
    };
    const moveLine = (tx: number, ty: number) => {
      const m = s.tlm;
      m[4] += tx * m[0] + ty * m[2];
      m[5] += tx * m[1] + ty * m[3];
      s.tm = [...m];
    };
    for (;;) {
      const token = lexer.read(false);
      if (token === undefined) break;
      if (!(token instanceof Op)) {
        if (stack.length >= MAX_OPERANDS) throw new Unsupported('too many operands');
        stack.push(token);
        continue;
      }
      switch (token.op) {
        case 'q':
          if (saved.length >= 1000) throw new Unsupported('q nested too deeply');
          saved.push({ ...s, tm: [...s.tm], tlm: [...s.tlm] });
          break;
        case 'Q':
          s = saved.pop() ?? s;
          break;
        case 'cm':
          s.ctm = multiply([num(6), num(5), num(4), num(3), num(2), num(1)], s.ctm);
          break;
        case 'BT':
          s.tm = [...IDENTITY];
          s.tlm = [...IDENTITY];
          break;
        case 'Tf':
          s.fontSize = num(1);
          this.font(s, stack[stack.length - 2], resources);
          break;
        case 'Tc':
          s.charSpacing = num(1);
          break;
        case 'Tw':
          s.wordSpacing = num(1);
          break;
        case 'Tz':
          s.hScale = num(1) / 100;
          break;
        case 'TL':
          s.leading = num(1);
          break;
        case 'Ts':
          s.rise = num(1);
          break;
        case 'Td':
          moveLine(num(2), num(1));
          break;
        case 'TD':
          s.leading = -num(1);
          moveLine(num(2), num(1));
          break;
        case 'Tm':
          s.tm = [num(6), num(5), num(4), num(3), num(2), num(1)];
          s.tlm = [...s.tm];
          break;
        case 'T*':
          moveLine(0, -s.leading);
          break;
        case 'Tj': {
          const str = stack[stack.length - 1];
          if (!(str instanceof Uint8Array)) throw new Unsupported('bad Tj');
          this.show(s, str, 0);
          break;
        }
        case "'": {
          const str = stack[stack.length - 1];
          if (!(str instanceof Uint8Array)) throw new Unsupported("bad '");
          moveLine(0, -s.leading);
          this.show(s, str, 0);
          break;
        }
        case '"': {
          const str = stack[stack.length - 1];
          if (!(str instanceof Uint8Array)) throw new Unsupported('bad "');
          s.wordSpacing = num(3);
          s.charSpacing = num(2);
          moveLine(0, -s.leading);
          this.show(s, str, 0);
          break;
        }
        case 'TJ': {
          const array = stack[stack.length - 1];
          if (!Array.isArray(array)) throw new Unsupported('bad TJ');
          const factor = -s.fontSize / 1000;
          const pending: Uint8Array[] = [];
          const joined = () => (pending.length === 1 ? pending[0]! : Buffer.concat(pending));
          for (const item of array) {
            if (item instanceof Uint8Array) pending.push(item);
            else if (typeof item === 'number') {
              if (item === 0) continue;
              this.show(s, pending.length === 0 ? new Uint8Array(0) : joined(), item * factor);
              pending.length = 0;
            } else throw new Unsupported('bad TJ');
          }
          if (pending.length > 0) this.show(s, joined(), 0);
          break;
        }
        case 'Do': {
          const xobjects = this.doc.get(resources.get('XObject'));
          const xobject = xobjects instanceof Map ? this.doc.get(xobjects.get(String(stack[stack.length - 1]))) : undefined;
          if (!(xobject instanceof Stream) || this.doc.get(xobject.dict.get('Subtype')) !== 'Image') throw new Unsupported('form XObject');
          this.itemOpen = false;
          break;
        }
        case 'gs': {
          const states = this.doc.get(resources.get('ExtGState'));
          const state = states instanceof Map ? this.doc.get(states.get(String(stack[stack.length - 1]))) : undefined;
          if (state instanceof Map && state.has('Font')) throw new Unsupported('font in a graphics state');
          break;
        }
        case 'BMC':
        case 'BDC':
        case 'EMC':
          this.itemOpen = false;
          break;
        case 'BI':
          this.skipInlineImage(lexer);
          break;
        case 'd0':
        case 'd1':
          throw new Unsupported('Type3 glyph procedure');
      }
      stack.length = 0;
    }
  }

  /** Past an inline image's data, to the `EI` that ends it (between blank space, as pdf.js finds it). */
  private skipInlineImage(lexer: Lexer): void {
    const b = lexer.b;
    const id = indexOf(b, 'ID', lexer.pos);
    if (id < 0) throw new Unsupported('inline image without data');
    for (let i = id + 3; i + 1 < b.length; i++) {
      if (b[i] === 69 && b[i + 1] === 73 && SPACE[b[i - 1]!] && (i + 2 >= b.length || SPACE[b[i + 2]!])) {
        lexer.pos = i + 2;
        return;
      }
    }
    throw new Unsupported('inline image without EI');
  }
}

function box(obj: Obj | undefined, doc: Document): [number, number, number, number] | null {
  const v = doc.get(obj);
  if (!Array.isArray(v) || v.length !== 4) return null;
  const n = v.map((x) => doc.get(x));
  if (!n.every((x) => typeof x === 'number')) return null;
  const [a, b, c, d] = n as number[];
  return [Math.min(a!, c!), Math.min(b!, d!), Math.max(a!, c!), Math.max(b!, d!)];
}

interface PageRef {
  dict: Dict;
  resources: Dict;
  view: [number, number, number, number];
}

/** The pages in order, with what they inherit, as pdf.js counts them; unsupported when the tree and its Count disagree. */
function pages(doc: Document): PageRef[] {
  const root = doc.get(doc.trailer.get('Root'));
  if (!(root instanceof Map)) throw new Unsupported('no catalog');
  const top = doc.get(root.get('Pages'));
  if (!(top instanceof Map)) throw new Unsupported('no page tree');
  const out: PageRef[] = [];
  const seen = new Set<Dict>();
  const walk = (node: Dict, resources: Obj | undefined, media: Obj | undefined, crop: Obj | undefined, depth: number) => {
    if (seen.has(node) || seen.size > MAX_PAGE_NODES || depth > MAX_DEPTH) throw new Unsupported('page tree loop');
    seen.add(node);
    const res = node.get('Resources') ?? resources;
    const mediaBox = node.get('MediaBox') ?? media;
    const cropBox = node.get('CropBox') ?? crop;
    const kids = doc.get(node.get('Kids'));
    if (doc.get(node.get('Type')) === 'Pages' || Array.isArray(kids)) {
      if (!Array.isArray(kids)) throw new Unsupported('bad page tree');
      for (const kid of kids) {
        const child = doc.get(kid);
        if (!(child instanceof Map)) throw new Unsupported('bad page tree');
        walk(child, res, mediaBox, cropBox, depth + 1);
      }
      return;
    }
    const r = doc.get(res);
    const mb = box(mediaBox, doc) ?? [0, 0, 612, 792];
    const cb = box(cropBox, doc);
    let view = mb;
    if (cb) {
      const v: [number, number, number, number] = [
        Math.max(mb[0], cb[0]),
        Math.max(mb[1], cb[1]),
        Math.min(mb[2], cb[2]),
        Math.min(mb[3], cb[3]),
      ];
      if (v[0] < v[2] && v[1] < v[3]) view = v;
    }
    if (node.has('UserUnit')) throw new Unsupported('user unit');
    out.push({ dict: node, resources: r instanceof Map ? r : new Map(), view });
  };
  walk(top, undefined, undefined, undefined, 0);
  if (doc.get(top.get('Count')) !== out.length) throw new Unsupported('page count disagrees');
  return out;
}

/**
 * The text of a PDF's pages joined by line breaks, up to `maxPages` pages and until `maxTextBytes` characters,
 * as extract.ts's pdf.js reading gives it; null when this reader cannot promise the same words.
 */
export function ownPdfText(bytes: Uint8Array, maxTextBytes: number, maxPages: number): string | null {
  try {
    const doc = new Document(bytes);
    const list = pages(doc);
    const texts: string[] = [];
    let length = 0;
    for (let n = 0; n < Math.min(list.length, maxPages) && length < maxTextBytes; n++) {
      const page = list[n]!;
      const contents = doc.get(page.dict.get('Contents'));
      const streams = Array.isArray(contents)
        ? contents.map((c) => doc.get(c))
        : contents === undefined || contents === null
          ? []
          : [contents];
      const parts: Uint8Array[] = [];
      for (const stream of streams) {
        if (!(stream instanceof Stream)) throw new Unsupported('bad contents');
        parts.push(doc.decode(stream), Uint8Array.of(10));
      }
      const reader = new PageText(doc, page.view);
      reader.run(parts.length === 2 ? parts[0]! : Buffer.concat(parts), page.resources);
      const raw = reader.text();
      const text = !reader.beyondAscii
        ? raw
        : raw.replace(NORMALIZE, (_, compat: string | undefined, st: string | undefined) =>
            compat ? compat.normalize('NFKC') : 'ſt'.repeat(st!.length),
          );
      texts.push(text);
      length += text.length;
    }
    return texts.join('\n');
  } catch (err) {
    if (err instanceof Unsupported) return null;
    throw err;
  }
}
