import { describe, expect, test } from 'bun:test';
import { ascii, XmlBytes } from '../../src/http/dav/xml-bytes.ts';
import { escapeXml } from '../../src/lib/xml.ts';

const joined = (chunks: Uint8Array[]) => Buffer.concat(chunks);
const encoded = (text: string) => Buffer.from(new TextEncoder().encode(text));

describe('XmlBytes', () => {
  test('writes what TextEncoder makes of the same text, escaped as escapeXml, lone surrogates as U+FFFD', () => {
    const texts = ['plain', 'a & b <c> "d" \'e\'', 'Ünïcødé 名前 🎉', 'lone \ud800 high, lone \udc00 low, end \ud83c', '', '\u07ff\u0800\uffff'];
    for (const text of texts) {
      const out = new XmlBytes();
      out.raw(text);
      out.escaped(text);
      expect(joined(out.take(true))).toEqual(encoded(text + escapeXml(text)));
    }
  });

  test('writes whole numbers as String does, any other number too', () => {
    const numbers = [0, 7, 10, 99, 100, 4096, 1_000_000, Number.MAX_SAFE_INTEGER, -1, 1.5, 2 ** 60];
    const out = new XmlBytes();
    for (const n of numbers) {
      out.number(n);
      out.bytes(ascii(','));
    }
    expect(joined(out.take(true)).toString()).toBe(numbers.map((n) => `${n},`).join(''));
  });

  test('hands out 64 KiB chunks as they fill, no character split between two, and the rest at the end', () => {
    const out = new XmlBytes();
    const piece = '🎉 名 & x';
    let text = '';
    while (!out.ready) {
      out.escaped(piece);
      text += escapeXml(piece);
    }
    const first = out.take();
    expect(first.length).toBe(1);
    expect(first[0]!.length).toBeLessThanOrEqual(64 * 1024);
    expect(first[0]!.length).toBeGreaterThan(64 * 1024 - 6);
    new TextDecoder('utf-8', { fatal: true }).decode(first[0]);
    out.raw('end');
    const rest = out.take(true);
    expect(joined([...first, ...rest])).toEqual(encoded(`${text}end`));
    expect(out.written).toBe(Buffer.byteLength(`${text}end`));
    expect(out.take(true)).toEqual([]);
  });
});
