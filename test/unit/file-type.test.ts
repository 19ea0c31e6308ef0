import { describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { FileTypeParser, fileTypeFromBuffer } from 'file-type';
import { detectMimeType } from '../../src/lib/file-type.ts';

/** `head` followed by `size` bytes in all, the rest zeros. */
function file(head: Uint8Array | string, size = 4096): Uint8Array {
  const out = new Uint8Array(size);
  out.set(typeof head === 'string' ? Buffer.from(head, 'latin1') : head);
  return out;
}

const utf16be = (text: string) => Buffer.from(text, 'utf16le').swap16();

const samples: Array<[string, Uint8Array]> = [
  ['a PNG signature alone', file(Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))],
  ['JPEG', file(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]))],
  ['PDF', file('%PDF-1.7\n')],
  ['MP3 with ID3', file('ID3\x04\x00\x00\x00\x00\x00\x00')],
  ['FLIF', file('FLIF')],
  ['Musepack', file('MP+\x07')],
  ['EPS', file(Uint8Array.from([0x25, 0x21, ...Buffer.from('PS-Adobe-3.0 EPSF-3.0')]))],
  ['tar', file(Buffer.concat([Buffer.alloc(257), Buffer.from('ustar\x0000')]))],
  ['UTF-16 BE XML', file(Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be('<?xml version="1.0"?>')]))],
  ['UTF-16 BE text that is not XML', file(Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be('<?xmk ')]))],
  ['plain text', file('hello, world\n', 13)],
  ['random bytes', randomBytes(4096)],
  ['an MPEG frame header', file('\xff\xfeID3')],
];

describe('type detection (src/lib/file-type.ts)', () => {
  test('answers what file-type itself answers, for signatures checked as strings in each encoding and for none', async () => {
    for (const [name, bytes] of samples) {
      const expected = (await fileTypeFromBuffer(bytes))?.mime ?? null;
      expect({ name, mime: await detectMimeType(bytes) }).toEqual({ name, mime: expected });
      // Twice: the second check reads the signatures' bytes the first one kept.
      expect({ name, mime: await detectMimeType(bytes) }).toEqual({ name, mime: expected });
    }
    const detected = Object.fromEntries(await Promise.all(samples.map(async ([name, bytes]) => [name, await detectMimeType(bytes)])));
    expect(detected).toMatchObject({
      EPS: 'application/eps',
      FLIF: 'image/flif',
      Musepack: 'audio/x-musepack',
      tar: 'application/x-tar',
      'UTF-16 BE XML': 'application/xml',
      'UTF-16 BE text that is not XML': null,
    });
  });

  test('overlapping calls each answer for their own bytes', async () => {
    const answers = await Promise.all(samples.map(([, bytes]) => detectMimeType(bytes)));
    const expected = await Promise.all(samples.map(async ([, bytes]) => (await fileTypeFromBuffer(bytes))?.mime ?? null));
    expect(answers).toEqual(expected);
  });

  test('compares bytes without the per-check copy of the options file-type makes: its own check is never reached', async () => {
    // The library's own comparison, which copies its options object and builds an iterator at every check.
    const proto = FileTypeParser.prototype as unknown as { check(this: unknown, ...args: unknown[]): boolean };
    const original = proto.check;
    let calls = 0;
    proto.check = function (this: unknown, ...args: unknown[]) {
      calls++;
      return original.apply(this, args);
    };
    try {
      for (const [, bytes] of samples) await detectMimeType(bytes);
    } finally {
      proto.check = original;
    }
    expect(calls).toBe(0);
  });

  test('answers what file-type answers for masked and offset signatures over random bytes', async () => {
    // MPEG frames are checked under bit masks; the rest fill offsets past the start with random bytes.
    const heads = [
      [0xff],
      [0xff, 0xe2],
      [0xff, 0xf1],
      [0xff, 0xfb],
      [0x49, 0x44, 0x33],
      [0x52, 0x49, 0x46, 0x46],
      [0x00, 0x00, 0x00, 0x18, 0x66, 0x74, 0x79, 0x70],
    ];
    for (let i = 0; i < 400; i++) {
      const bytes = randomBytes(64 + (i % 7) * 300);
      const head = heads[i % heads.length]!;
      bytes.set(head);
      if (head.length === 1) bytes[1] = i & 0xff;
      const expected = (await fileTypeFromBuffer(bytes))?.mime ?? null;
      expect({ i, mime: await detectMimeType(bytes) }).toEqual({ i, mime: expected });
    }
  });
});
