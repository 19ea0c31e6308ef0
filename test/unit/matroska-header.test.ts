import { describe, expect, test } from 'bun:test';
import { isMatroska, matroskaHeader } from '../../src/services/thumbnails/matroska-header.ts';
import { ffmpegMissing, video } from '../helpers/images.ts';
import { skipWithout } from '../helpers/prerequisites.ts';

const NOW = Date.UTC(2026, 10, 27);
const RECORDED = '2019-05-04T10:20:30.000Z';

/** An EBML element: its id's bytes (marker included), then its size as an 8-byte vint (or unknown), then its body. */
function el(id: number[], body: Uint8Array | number[] = [], unknownSize = false): Buffer {
  const size = Buffer.alloc(8);
  if (unknownSize) size.fill(0xff, 0, 8).writeUInt8(0x01, 0);
  else size.writeBigUInt64BE(BigInt(body.length) | (1n << 56n));
  return Buffer.concat([Buffer.from(id), size, Buffer.from(body)]);
}
const f64 = (v: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return b;
};
const f32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeFloatBE(v);
  return b;
};
const uint = (v: number, bytes = 3) => {
  const b = Buffer.alloc(bytes);
  b.writeUIntBE(v, 0, bytes);
  return b;
};
const EBML = [0x1a, 0x45, 0xdf, 0xa3];
const SEGMENT = [0x18, 0x53, 0x80, 0x67];
const INFO = [0x15, 0x49, 0xa9, 0x66];
const CLUSTER = [0x1f, 0x43, 0xb6, 0x75];
const SEEK_HEAD = [0x11, 0x4d, 0x9b, 0x74];
const VOID = [0xec];
const SCALE = [0x2a, 0xd7, 0xb1];
const DURATION = [0x44, 0x89];
const DATE_UTC = [0x44, 0x61];
const header = el(EBML, el([0x42, 0x82], Buffer.from('webm')));

function file(...segmentChildren: Buffer[]): Buffer {
  return Buffer.concat([header, el(SEGMENT, Buffer.concat(segmentChildren))]);
}
function reader(bytes: Buffer) {
  const r = {
    reads: 0,
    longest: 0,
    read: async (start: number, length: number) => {
      r.reads++;
      r.longest = Math.max(r.longest, length);
      return new Uint8Array(bytes.subarray(start, Math.min(bytes.length, start + length)));
    },
  };
  return r;
}
const parse = (bytes: Buffer) => matroskaHeader(bytes.length, reader(bytes).read, NOW);

describe('WebM and Matroska headers', () => {
  test('Duration × TimecodeScale, as a 64- or 32-bit float, after a SeekHead and Void, in a Segment of unknown size', async () => {
    expect(await parse(file(el(INFO, el(DURATION, f64(2500)))))).toEqual({ recordedAt: null, duration: 2.5 });
    const minutes = await parse(file(el(INFO, Buffer.concat([el(SCALE, uint(1_000_000_000, 4)), el(DURATION, f32(90))]))));
    expect(minutes.duration).toBe(90);
    expect(await parse(file(el(SEEK_HEAD, [1, 2, 3]), el(VOID, new Uint8Array(40)), el(INFO, el(DURATION, f64(1234.5)))))).toEqual({
      recordedAt: null,
      duration: 1.235,
    });
    const unknown = Buffer.concat([header, el(SEGMENT, [], true), el(INFO, el(DURATION, f64(4000)))]);
    expect((await parse(unknown)).duration).toBe(4);
    // DateUTC: nanoseconds from 2001-01-01.
    const ns = BigInt(Date.parse(RECORDED) - Date.UTC(2001, 0, 1)) * 1_000_000n;
    const date = Buffer.alloc(8);
    date.writeBigInt64BE(ns);
    expect((await parse(file(el(INFO, Buffer.concat([el(DATE_UTC, date), el(DURATION, f64(1000))]))))).recordedAt).toBe(
      Date.parse(RECORDED),
    );
  });

  test('no duration: none written, zero, negative, NaN, longer than a week, a zero scale, or Info after the first Cluster', async () => {
    const none = { recordedAt: null, duration: null };
    expect(await parse(file(el(INFO, el(SCALE, uint(1_000_000)))))).toEqual(none);
    for (const units of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, 8 * 86_400_000])
      expect(await parse(file(el(INFO, el(DURATION, f64(units)))))).toEqual(none);
    expect(await parse(file(el(INFO, Buffer.concat([el(SCALE, uint(0)), el(DURATION, f64(5000))]))))).toEqual(none);
    expect(await parse(file(el(CLUSTER, [1, 2, 3]), el(INFO, el(DURATION, f64(5000)))))).toEqual(none);
    // A date before 1990 or more than a day ahead is no date.
    const date = Buffer.alloc(8);
    date.writeBigInt64BE(-BigInt(12 * 365 * 86_400) * 1_000_000_000n);
    expect((await parse(file(el(INFO, el(DATE_UTC, date))))).recordedAt).toBeNull();
  });

  test('malformed input: null, never an error or a hang; a hostile walk stops after 64 elements', async () => {
    const good = file(el(SEEK_HEAD, [1, 2]), el(INFO, Buffer.concat([el(SCALE, uint(1_000_000)), el(DURATION, f64(2500))])));
    expect((await parse(good)).duration).toBe(2.5);
    // Every truncation of a good file, and each byte of it flipped.
    for (let n = 0; n < good.length; n++) {
      const cut = good.subarray(0, n);
      expect((await matroskaHeader(cut.length, reader(cut).read, NOW)).duration).toBeNull();
    }
    for (let i = 0; i < good.length; i++) {
      const bad = Buffer.from(good);
      bad[i] = bad[i]! ^ 0xff;
      await parse(bad);
    }
    // Random bytes behind a real EBML header.
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) & 0xff;
    for (let k = 0; k < 200; k++) await parse(Buffer.concat([header, Buffer.from(Array.from({ length: 64 }, random))]));
    expect(await parse(Buffer.from('not a video at all'))).toEqual({ recordedAt: null, duration: null });
    expect(await parse(Buffer.alloc(0))).toEqual({ recordedAt: null, duration: null });
    // 10,000 Void elements before Info: the walk gives up after 64, in as many reads.
    const voids = Array.from({ length: 10_000 }, () => el(VOID));
    const hostile = file(...voids, el(INFO, el(DURATION, f64(1000))));
    const r = reader(hostile);
    expect((await matroskaHeader(hostile.length, r.read, NOW)).duration).toBeNull();
    expect(r.reads).toBeLessThanOrEqual(2 + 64);
    // An Info that claims to be huge is not read.
    const huge = Buffer.concat([header, el(SEGMENT, [], true), Buffer.from(INFO), Buffer.from([0x01, 0, 0, 0, 0x10, 0, 0, 0])]);
    const h = reader(huge);
    expect((await matroskaHeader(2 ** 40, h.read, NOW)).duration).toBeNull();
    expect(h.longest).toBe(12);
  });
});

if (!skipWithout(ffmpegMissing(), 'WebM and MKV durations of real files (ffmpeg)')) {
  describe('WebM and Matroska made by ffmpeg', () => {
    test('ffmpeg’s WebM and MKV: the duration (10.5 s), and the recording date when it was given', async () => {
      for (const format of ['webm', 'mkv'] as const) {
        const plain = video(format, 160, 90);
        expect(isMatroska(plain.subarray(0, 4))).toBe(true);
        const r = reader(plain);
        expect(await matroskaHeader(plain.length, r.read, NOW), format).toEqual({ recordedAt: null, duration: 10.5 });
        // Headers only: a handful of reads, not the media.
        expect(r.reads).toBeLessThan(10);
        const dated = video(format, 160, 90, RECORDED);
        expect(await parse(dated), format).toEqual({ recordedAt: Date.parse(RECORDED), duration: 10.5 });
      }
      expect(isMatroska(video('mp4', 160, 90).subarray(0, 4))).toBe(false);
    });
  });
}
