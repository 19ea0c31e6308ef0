import { describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
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
});
