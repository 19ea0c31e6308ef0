import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { json } from '../../helpers/client.ts';
import { upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let owner: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer();
  owner = await seed.owner(t);
});
afterAll(() => t.stop());

const thumb = (id: string, size = 'large') => owner.client.get(`/api/files/${id}/thumbnail?size=${size}`);

/** The thumbnail's size and the colour (red, blue or other) at a point given as fractions of its width and height. */
async function picture(res: Response, points: Array<[number, number]> = []) {
  expect(res.status).toBe(200);
  const { data, info } = await sharp(Buffer.from(await res.arrayBuffer()))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const colour = ([fx, fy]: [number, number]) => {
    const o = (Math.floor(fy * (info.height - 1)) * info.width + Math.floor(fx * (info.width - 1))) * 3;
    const [r, , b] = [data[o]!, data[o + 1]!, data[o + 2]!];
    return r > 200 && b < 60 ? 'red' : b > 200 && r < 60 ? 'blue' : `rgb(${[...data.subarray(o, o + 3)]})`;
  };
  return { size: [info.width, info.height], colours: points.map(colour) };
}

const solid = (width: number, height: number, colour: string) =>
  sharp({ create: { width, height, channels: 3, background: colour } })
    .png()
    .toBuffer();

/** Blue with a red square at the top left: the orientation shows. */
async function marked(width: number, height: number) {
  const square = await solid(Math.round(width / 4), Math.round(height / 4), '#ff0000');
  return sharp(await solid(width, height, '#0000ff')).composite([{ input: square, left: 0, top: 0 }]);
}

async function noThumbnail(file: { id: string }) {
  const res = await thumb(file.id);
  expect(res.status).toBe(404);
  expect((await json(res)).message).toBe('This file has no thumbnail');
}

describe('thumbnails of unusual sources', () => {
  test('a 16-bit PNG, with and without alpha: upright, in its colours', async () => {
    for (const alpha of [false, true]) {
      let pic = (await marked(800, 400)).toColourspace('rgb16');
      if (alpha) pic = pic.ensureAlpha(1);
      const bytes = await pic.png().toBuffer();
      expect((await sharp(bytes).metadata()).depth).toBe('ushort');
      const file = await upload(owner.client, `deep-${alpha}.png`, bytes, { type: 'image/png' });
      expect(file.hasThumbnail).toBe(true);
      expect(
        await picture(await thumb(file.id), [
          [0.05, 0.05],
          [0.9, 0.9],
        ]),
      ).toEqual({ size: [800, 400], colours: ['red', 'blue'] });
      expect((await picture(await thumb(file.id, 'small'))).size).toEqual([256, 128]);
    }
  });

  test('a PDF page turned by /Rotate is drawn turned, as viewers show it', async () => {
    for (const [rotate, size, corner] of [
      [90, [1600, 1200], [0.97, 0.03]],
      [180, [1200, 1600], [0.97, 0.97]],
      [270, [1600, 1200], [0.03, 0.97]],
      [0, [1200, 1600], [0.03, 0.03]],
    ] as const) {
      const file = await upload(owner.client, `turned-${rotate}.pdf`, img.pdfRotated(rotate), { type: 'application/pdf' });
      expect({ rotate, ...(await picture(await thumb(file.id), [corner as [number, number], [0.5, 0.5]])) }).toEqual({
        rotate,
        size: [...size],
        colours: ['red', 'blue'],
      });
    }
  });

  test('a PDF that needs a password, one without pages and TIFFs (multi-page, CMYK, 1-bit) have no thumbnail: 404, the server healthy', async () => {
    const red = await solid(60, 40, '#ff0000');
    const tiffs = [
      await sharp([red, await solid(60, 40, '#0000ff')], { join: { animated: true } })
        .tiff()
        .toBuffer(),
      await sharp(red).toColourspace('cmyk').tiff().toBuffer(),
      await sharp(red).toColourspace('b-w').tiff({ bitdepth: 1 }).toBuffer(),
    ];
    const files = [
      await upload(owner.client, 'locked.pdf', img.pdfEncrypted(), { type: 'application/pdf' }),
      await upload(owner.client, 'empty.pdf', img.pdfWithoutPages(), { type: 'application/pdf' }),
      ...(await Promise.all(tiffs.map((bytes, i) => upload(owner.client, `scan-${i}.tiff`, bytes, { type: 'image/tiff' })))),
    ];
    for (const file of files) await noThumbnail(file);
    for (const file of files.slice(2)) expect({ type: file.mimeType, has: file.hasThumbnail }).toEqual({ type: 'image/tiff', has: false });
    expect((await t.client().get('/health')).status).toBe(200);
    // The workers still make the next one.
    const after = await upload(owner.client, 'after.pdf', img.pdf(1), { type: 'application/pdf' });
    expect((await picture(await thumb(after.id))).size).toEqual([1200, 1600]);
  });

  test('content of a format other than the picture types (an SVG sent as image/png or image/webp) is never drawn: 404', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="red"/></svg>';
    for (const type of ['image/png', 'image/webp', 'image/gif']) {
      const file = await upload(owner.client, `drawing.${type.slice(6)}`, svg, { type });
      expect(file.mimeType).toBe(type);
      await noThumbnail(file);
    }
    const real = await upload(owner.client, 'real.png', await solid(400, 300, '#ff0000'), { type: 'image/png' });
    expect((await picture(await thumb(real.id))).size).toEqual([400, 300]);
  });
});
