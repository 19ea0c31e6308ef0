import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

/** A photo as a camera writes it: maker and model (the model repeating the maker), lens, time and place. */
const cameraJpeg = () =>
  sharp({ create: { width: 320, height: 240, channels: 3, background: '#2a6' } })
    .jpeg()
    .withExif({
      IFD0: { Make: 'Canon', Model: 'Canon EOS R6' },
      IFD2: { DateTimeOriginal: '2024:08:15 18:30:00', LensModel: 'RF24-105mm F4 L IS USM' },
      IFD3: { GPSLatitudeRef: 'S', GPSLatitude: '33/1 51/1 36/1', GPSLongitudeRef: 'E', GPSLongitude: '151/1 12/1 36/1' },
    })
    .toBuffer();

/** The file's details once its thumbnail is made. */
async function details(o: seed.SeededLogin, id: string) {
  return eventually(async () => {
    const info = await json(await o.client.get(`/api/files/${id}/info`));
    expect(info.photo).toBeDefined();
    return info;
  });
}

describe('a photo’s details, read from its EXIF with its thumbnail', () => {
  test('date taken, camera, lens and GPS position; the maker said once', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'opera.jpg', await cameraJpeg(), { type: 'image/jpeg' });
    const { photo } = await details(o, file.id);
    expect(photo).toMatchObject({ width: 320, height: 240, camera: 'Canon EOS R6', lens: 'RF24-105mm F4 L IS USM' });
    expect(photo.takenAt).toBe((await json(await o.client.get('/api/files/photos')))[0].takenAt);
    expect(photo.location.latitude).toBeCloseTo(-33.86, 2);
    expect(photo.location.longitude).toBeCloseTo(151.21, 2);
  });

  test('a maker alone, a sideways photo with GPS: upright size and the position, no date or lens', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'sideways.jpg', await img.rotatedJpegWithGps(400, 300), { type: 'image/jpeg' });
    const { photo } = await details(o, file.id);
    expect(photo).toEqual({
      takenAt: null,
      width: 300,
      height: 400,
      camera: 'Coffer test camera',
      lens: null,
      location: { latitude: 51.5, longitude: expect.closeTo(-0.1167, 3) },
    });
  });

  test('pictures that say nothing of themselves have only their size; a file with no thumbnail has no photo details', async () => {
    const o = await seed.owner(t);
    const plain = await upload(o.client, 'plain.jpg', await img.jpeg(64, 48), { type: 'image/jpeg' });
    const png = await upload(o.client, 'shot.png', await img.png(40, 30), { type: 'image/png' });
    const none = { takenAt: null, camera: null, lens: null, location: null };
    expect((await details(o, plain.id)).photo).toEqual({ ...none, width: 64, height: 48 });
    expect((await details(o, png.id)).photo).toEqual({ ...none, width: 40, height: 30 });
    const text = await upload(o.client, 'notes.txt', 'words', { type: 'text/plain' });
    expect((await json(await o.client.get(`/api/files/${text.id}/info`))).photo).toBeUndefined();
  });

  test('a date that is no date (0000:00:00, blank, 30 February, month 13, the year 2100) is left out: the photo sorts by its modification time', async () => {
    const o = await seed.owner(t);
    const dates = ['0000:00:00 00:00:00', '    :  :     :  :  ', '2024:02:30 10:00:00', '2024:13:45 99:99:99', '2100:01:01 00:00:00'];
    const files = [];
    for (const [i, date] of dates.entries())
      files.push(await upload(o.client, `odd-${i}.jpg`, await img.jpegTakenAt(date), { type: 'image/jpeg' }));
    for (const file of files) expect((await details(o, file.id)).photo.takenAt).toBeNull();
    const photos = await json(await o.client.get('/api/files/photos'));
    expect(photos).toHaveLength(dates.length);
    for (const p of photos) expect(p.takenAt).toBe(p.modified);
  });

  test('a phone’s offset (OffsetTimeOriginal) places the moment: 23:30 at +09:00 is 14:30 UTC, whatever the server’s zone', async () => {
    const o = await seed.owner(t);
    const bytes = await sharp({ create: { width: 60, height: 40, channels: 3, background: '#2a6' } })
      .jpeg()
      .withExif({ IFD2: { DateTimeOriginal: '2024:08:15 23:30:00', OffsetTimeOriginal: '+09:00' } })
      .toBuffer();
    const file = await upload(o.client, 'tokyo.jpg', bytes, { type: 'image/jpeg' });
    expect((await details(o, file.id)).photo.takenAt).toBe('2024-08-15T14:30:00.000Z');
  });

  test('no place for a GPS of 0,0 (no fix), one without its hemisphere or one out of range', async () => {
    const o = await seed.owner(t);
    const gps = (tags: Record<string, string>) =>
      sharp({ create: { width: 60, height: 40, channels: 3, background: '#2a6' } })
        .jpeg()
        .withExif({ IFD3: tags })
        .toBuffer();
    const bogus: Array<Record<string, string>> = [
      { GPSLatitudeRef: 'N', GPSLatitude: '0/1 0/1 0/1', GPSLongitudeRef: 'E', GPSLongitude: '0/1 0/1 0/1' },
      { GPSLatitude: '45/1 0/1 0/1', GPSLongitude: '10/1 0/1 0/1' },
      { GPSLatitudeRef: 'N', GPSLatitude: '95/1 0/1 0/1', GPSLongitudeRef: 'E', GPSLongitude: '10/1 0/1 0/1' },
      { GPSLatitudeRef: 'N', GPSLatitude: '45/1 90/1 0/1', GPSLongitudeRef: 'E', GPSLongitude: '10/1 0/1 7000/1' },
    ];
    for (const [i, tags] of bogus.entries()) {
      const file = await upload(o.client, `nowhere-${i}.jpg`, await gps(tags), { type: 'image/jpeg' });
      expect((await details(o, file.id)).photo.location).toBeNull();
    }
  });
});
