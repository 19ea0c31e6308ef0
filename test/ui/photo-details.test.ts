import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import sharp from 'sharp';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let owner: seed.SeededLogin;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  owner = await seed.owner(t);
  const bytes = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3a7' } })
    .jpeg()
    .withExif({
      IFD0: { Make: 'FUJIFILM', Model: 'X-T5' },
      IFD2: { DateTimeOriginal: '2024:08:15 18:30:00', LensModel: 'XF16-80mmF4 R OIS WR' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 30/1', GPSLongitudeRef: 'E', GPSLongitude: '2/1 17/1 40/1' },
    })
    .toBuffer();
  const file = await upload(owner.client, 'paris.jpg', bytes, { type: 'image/jpeg' });
  await eventually(async () => expect((await json(await owner.client.get(`/api/files/${file.id}/info`))).photo).toBeDefined());
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

describe('the viewer’s details', () => {
  test('say the size in pixels, the camera, the lens and the place the picture was taken (light; dark phone)', async () => {
    for (const [opts, tag] of [
      [{}, 'light-desktop'],
      [{ dark: true, viewport: PHONE, touch: true }, 'dark-phone'],
    ] as const) {
      const { context, page, errors } = await signedInContext(browser, t.url, owner, opts);
      await page.goto('/photos');
      await page.getByRole('listbox', { name: 'Photos' }).getByRole('option', { name: 'paris.jpg', exact: true }).click();
      const viewer = page.getByRole('dialog', { name: 'paris.jpg' });
      await viewer.getByRole('button', { name: 'Get info' }).click();
      const details = viewer.locator('.info-panel');
      await details.getByText('Camera').waitFor();
      const value = (term: string) => details.locator(`dt:text-is("${term}") + dd`).textContent();
      expect(await value('Dimensions')).toBe('640 × 480 px (0.3 MP)');
      expect(await value('Camera')).toBe('FUJIFILM X-T5');
      expect(await value('Lens')).toBe('XF16-80mmF4 R OIS WR');
      expect(await value('Place')).toBe('48.85833° N, 2.29444° E');
      expect(await value('Taken')).toContain('August 15, 2024');
      await expectAccessible(page, `photo details ${tag}`);
      await screenshot(page, `photo-details-exif-${tag}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  }, 120_000);
});
