import { describe, expect, test } from 'bun:test';
import { movieHeader } from '../../src/services/thumbnails/movie-header.ts';

const QUICKTIME_EPOCH_OFFSET = 2_082_844_800;
const NOW = Date.UTC(2026, 10, 27);
const WHEN = Date.UTC(2019, 4, 4, 10, 20, 30);

function box(type: string, body: Uint8Array = new Uint8Array(0)): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.byteLength);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}

/**
 * A movie header of `version` 0 (32-bit times) or 1 (64-bit), created at `ms` (Unix milliseconds), `units`
 * long at `timescale` units a second (none: 0, an unknown length).
 */
function mvhd(ms: number, version: 0 | 1 = 0, timescale = 0, units = 0): Buffer {
  const seconds = ms / 1000 + QUICKTIME_EPOCH_OFFSET;
  const body = Buffer.alloc(version === 1 ? 112 : 100);
  body.writeUInt8(version, 0);
  if (version === 1) {
    body.writeBigUInt64BE(BigInt(seconds), 4);
    body.writeUInt32BE(timescale, 20);
    body.writeBigUInt64BE(BigInt(units), 24);
  } else {
    body.writeUInt32BE(seconds, 4);
    body.writeUInt32BE(timescale, 12);
    body.writeUInt32BE(units, 16);
  }
  return box('mvhd', body);
}

/** A file given as pieces at offsets, zeros between them: a 5 GiB file without 5 GiB of memory. Counts the reads. */
function sparse(pieces: Array<[number, Uint8Array]>) {
  const file = {
    reads: 0,
    read: async (start: number, length: number) => {
      file.reads++;
      const out = new Uint8Array(length);
      for (const [at, bytes] of pieces) {
        const from = Math.max(start, at);
        const to = Math.min(start + length, at + bytes.byteLength);
        if (from < to) out.set(bytes.subarray(from - at, to - at), from - start);
      }
      return out;
    },
  };
  return file;
}

const whole = (bytes: Buffer) => sparse([[0, bytes]]).read;
const header = (bytes: Buffer, now = NOW) => movieHeader(bytes.byteLength, whole(bytes), now);
const recorded = async (bytes: Buffer, now = NOW) => (await header(bytes, now)).recordedAt;

describe('a video’s recording date and duration from its MP4 or QuickTime movie header', () => {
  test('moov first (faststart) or after the media data; mvhd version 0 or 1', async () => {
    const ftyp = box('ftyp', Buffer.from('isom\0\0\x02\0isomiso2mp41', 'latin1'));
    const moov = (v: 0 | 1) => box('moov', Buffer.concat([mvhd(WHEN, v), box('trak', Buffer.alloc(40))]));
    const mdat = box('mdat', Buffer.alloc(5000, 7));
    expect(await recorded(Buffer.concat([ftyp, moov(0), mdat]))).toBe(WHEN);
    expect(await recorded(Buffer.concat([ftyp, mdat, box('free'), moov(1)]))).toBe(WHEN);
    // QuickTime: a `wide` placeholder first, then the media data.
    expect(await recorded(Buffer.concat([box('wide'), mdat, moov(0)]))).toBe(WHEN);
  });

  test('after 5 GiB of media data (a 64-bit box size), in a few reads of headers only', async () => {
    const big = 5 * 1024 ** 3;
    const mdatHead = Buffer.alloc(16);
    mdatHead.writeUInt32BE(1);
    mdatHead.write('mdat', 4, 'latin1');
    mdatHead.writeBigUInt64BE(BigInt(big), 8);
    const ftyp = box('ftyp', Buffer.from('isom\0\0\x02\0', 'latin1'));
    const moov = box('moov', mvhd(WHEN, 1));
    const file = sparse([
      [0, ftyp],
      [ftyp.length, mdatHead],
      [ftyp.length + big, moov],
    ]);
    expect((await movieHeader(ftyp.length + big + moov.length, file.read, NOW)).recordedAt).toBe(WHEN);
    expect(file.reads).toBeLessThanOrEqual(5);
  });

  test('its duration: units over the timescale, in either version; none when unknown, zero or absurd', async () => {
    const file = (header: Buffer) => Buffer.concat([box('ftyp', Buffer.alloc(8)), box('moov', header)]);
    expect(await header(file(mvhd(WHEN, 0, 1000, 10_500)))).toEqual({ recordedAt: WHEN, duration: 10.5 });
    expect((await header(file(mvhd(WHEN, 1, 90_000, 90_000 * 3725)))).duration).toBe(3725);
    expect((await header(file(mvhd(0, 0, 600, 1234)))).duration).toBe(2.057);
    expect((await header(file(mvhd(WHEN, 0, 0, 500)))).duration).toBeNull();
    expect((await header(file(mvhd(WHEN, 0, 1000, 0)))).duration).toBeNull();
    expect((await header(file(mvhd(WHEN, 0, 1000, 0xffffffff)))).duration).toBeNull();
    expect((await header(file(mvhd(WHEN, 0, 1, 8 * 86_400)))).duration).toBeNull();
  });

  test('a last box of size 0 reaches to the end of the file', async () => {
    const moov = box('moov', mvhd(WHEN));
    moov.writeUInt32BE(0);
    expect(await recorded(Buffer.concat([box('ftyp', Buffer.alloc(8)), moov]))).toBe(WHEN);
  });

  test('no date: unset (0), before 1990, more than a day ahead, or a version it does not know', async () => {
    const file = (header: Buffer) => Buffer.concat([box('ftyp', Buffer.alloc(8)), box('moov', header)]);
    const unset = mvhd(WHEN);
    unset.writeUInt32BE(0, 12);
    expect(await recorded(file(unset))).toBeNull();
    expect(await recorded(file(mvhd(Date.UTC(1970, 0, 1))))).toBeNull();
    expect(await recorded(file(mvhd(Date.UTC(1989, 11, 31))))).toBeNull();
    expect(await recorded(file(mvhd(NOW + 2 * 86_400_000)))).toBeNull();
    expect(await recorded(file(mvhd(NOW + 3_600_000)))).toBe(NOW + 3_600_000);
    const v2 = mvhd(WHEN);
    v2.writeUInt8(2, 8);
    expect(await recorded(file(v2))).toBeNull();
  });

  test('not an MP4, or a malformed one: null, never an error', async () => {
    const webm = Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0, 0, 0, 0, 0, 0, 0]);
    expect(await recorded(webm)).toBeNull();
    expect(await recorded(Buffer.alloc(0))).toBeNull();
    expect(await recorded(Buffer.from('hello'))).toBeNull();
    // A box claiming more than the file holds, one claiming less than its own header, a moov without mvhd.
    const long = box('ftyp', Buffer.alloc(8));
    long.writeUInt32BE(10_000);
    expect(await recorded(Buffer.concat([long, box('moov', mvhd(WHEN))]))).toBeNull();
    const short = box('ftyp', Buffer.alloc(8));
    short.writeUInt32BE(4);
    expect(await recorded(Buffer.concat([short, box('moov', mvhd(WHEN))]))).toBeNull();
    expect(await recorded(Buffer.concat([box('ftyp', Buffer.alloc(8)), box('moov', box('trak', Buffer.alloc(20)))]))).toBeNull();
    // Cut off inside the movie header.
    const cut = Buffer.concat([box('ftyp', Buffer.alloc(8)), box('moov', mvhd(WHEN))]);
    expect(await recorded(cut.subarray(0, cut.length - 96))).toBeNull();
  });

  test('a hostile file of many tiny boxes is walked no further than 64 of them', async () => {
    const many = Buffer.concat([...Array.from({ length: 10_000 }, () => box('free')), box('moov', mvhd(WHEN))]);
    const file = sparse([[0, many]]);
    expect(await movieHeader(many.length, file.read, NOW)).toEqual({ recordedAt: null, duration: null });
    expect(file.reads).toBeLessThanOrEqual(64);
    const few = Buffer.concat([...Array.from({ length: 60 }, () => box('free')), box('moov', mvhd(WHEN))]);
    expect(await recorded(few)).toBe(WHEN);
  });
});
