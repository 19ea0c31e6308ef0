import { expect, test } from 'bun:test';
import { decodeHeicReduced } from '../../src/services/thumbnails/heic.ts';
import * as img from '../helpers/images.ts';
import { skipWithout } from '../helpers/prerequisites.ts';

const pixel = (data: Buffer, width: number, x: number, y: number) => [...data.subarray((y * width + x) * 3, (y * width + x) * 3 + 3)];

if (!skipWithout(img.heifEncMissing(), 'HEIC tile decoding')) {
  test('a grid is reduced by the largest power of two that divides its tiles, and refused when that leaves too many pixels', async () => {
    // Tiles of 136 px (8 × 17) halve three times at most: 2040 × 1632 reaches 255 × 204, not the 127 × 102 asked for.
    const bytes = await img.heicGrid(2040, 1632, 136);
    const r = decodeHeicReduced(bytes, { maxPixels: 100_000_000, minLongEdge: 100 });
    expect([r.width, r.height, r.fullWidth, r.fullHeight]).toEqual([255, 204, 2040, 1632]);
    // The red top-left tile is the first 17 × 17 reduced pixels; blue from there.
    const red = pixel(r.data, r.width, 16, 16);
    const blue = pixel(r.data, r.width, 17, 17);
    expect(red[0]! > 200 && red[2]! < 60).toBe(true);
    expect(blue[2]! > 200 && blue[0]! < 60).toBe(true);
    expect(() => decodeHeicReduced(bytes, { maxPixels: 100_000_000, minLongEdge: 100, maxReduced: 50_000 })).toThrow(
      'tiles of 136×136 pixels cannot be reduced to 50000 pixels or fewer',
    );
    expect(() => decodeHeicReduced(bytes, { maxPixels: 3_000_000, minLongEdge: 100 })).toThrow('more than 3000000');
  });
}
