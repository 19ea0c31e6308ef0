import { afterEach, describe, expect, test } from 'bun:test';
import { makeDocument } from '../../bench/search-docs.ts';
import { extractText } from '../../src/services/search/extract.ts';
import { plainClone } from '../../src/services/search/plain-clone.ts';
import { searchable } from '../helpers/search-documents.ts';

const native = globalThis.structuredClone;
afterEach(() => {
  globalThis.structuredClone = native;
});

describe('plainClone', () => {
  test('copies arrays and plain objects all the way down, sharing nothing with the original', () => {
    const original = {
      items: [{ str: 'a', transform: [1, 0, 0, 1, 72, 740], hasEOL: false }],
      styles: { f1: { ascent: 0.7 } },
      n: -0,
      u: undefined,
    };
    const copy = plainClone(original);
    expect(copy).toEqual(native(original));
    expect(Object.is(copy.n, -0)).toBe(true);
    expect('u' in copy).toBe(true);
    expect(copy.items).not.toBe(original.items);
    expect(copy.items[0]!.transform).not.toBe(original.items[0]!.transform);
    expect(copy.styles.f1).not.toBe(original.styles.f1);
    const own = plainClone(JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(own)).toBe(Object.prototype);
    expect(Object.keys(own)).toEqual(['__proto__']);
    expect(own.polluted).toBeUndefined();
  });

  test("leaves typed arrays, maps, dates, class instances, deep cycles and transfers to the runtime's clone", () => {
    const bytes = new Uint8Array([1, 2, 3]);
    class Point {
      constructor(readonly x: number) {}
    }
    const value = { bytes, map: new Map([['k', [1]]]), when: new Date(5), point: new Point(2) };
    const copy = plainClone(value);
    expect(copy).toEqual(native(value));
    expect(copy.bytes).not.toBe(bytes);
    expect(copy.map.get('k')).toEqual([1]);
    expect(copy.point).not.toBeInstanceOf(Point);
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    // A cycle is copied level by level down to the depth bound, where the runtime's clone keeps the rest of it.
    let at = plainClone(cyclic) as { self: unknown };
    for (let i = 0; i < 100; i++) at = at.self as { self: unknown };
    expect(at).toBeDefined();
    const buffer = new ArrayBuffer(8);
    expect(plainClone({ buffer }, { transfer: [buffer] }).buffer.byteLength).toBe(8);
    expect(buffer.byteLength).toBe(0);
    expect(() => plainClone({ f: () => 1 })).toThrow();
  });

  test("pdf.js gives the same text with it as with the runtime's clone", async () => {
    const limits = { maxTextBytes: 1024 ** 2 };
    const pdfs = [
      ...Array.from({ length: 4 }, (_, i) => makeDocument('pdf', i * 4 + 1, 100 * 1024)),
      searchable.pdf('the boiler pressure was checked on Tuesday, and the invoice paid'),
      searchable.pdfPages(['first page', 'second page (with parentheses)', 'third']),
    ];
    const texts = async () => Promise.all(pdfs.map((pdf) => extractText('doc.pdf', pdf, limits)));
    const before = await texts();
    globalThis.structuredClone = plainClone;
    const after = await texts();
    expect(after).toEqual(before);
    expect(before.every((text) => text.length > 0)).toBe(true);
  });
});
