import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, listAll, upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import { skipWithout } from '../helpers/prerequisites.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let owner: seed.SeededLogin;
const noVideo = img.ffmpegMissing();
// Photos over six months (two a month, newest first as Photos shows them), one with camera, lens and place.
const MONTHS = ['2025:06', '2025:05', '2025:04', '2025:03', '2025:02', '2025:01'];
const names = MONTHS.flatMap((m) => [`${m.replace(':', '-')}-b.jpg`, `${m.replace(':', '-')}-a.jpg`]);

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  owner = await seed.owner(t);
  const trip = await folder(owner.client, 'Trip');
  await Promise.all(
    MONTHS.flatMap((m, i) =>
      (['a', 'b'] as const).map(async (half, n) =>
        upload(owner.client, `${m.replace(':', '-')}-${half}.jpg`, await img.photo(i * 2 + n, 320, 240, `${m}:${n ? 20 : 10} 10:00:00`), {
          type: 'image/jpeg',
          parentId: trip.id,
        }),
      ),
    ),
  );
  const exif = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3a7' } })
    .jpeg()
    .withExif({
      IFD0: { Make: 'FUJIFILM', Model: 'X-T5' },
      IFD2: { DateTimeOriginal: '2025:07:15 18:30:00', LensModel: 'XF16-80mmF4 R OIS WR' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 30/1', GPSLongitudeRef: 'E', GPSLongitude: '2/1 17/1 40/1' },
    })
    .toBuffer();
  const paris = await upload(owner.client, 'paris.jpg', exif, { type: 'image/jpeg', parentId: trip.id });
  await eventually(async () => (await json(await owner.client.get(`/api/files/${paris.id}/info`))).photo !== undefined, {
    timeoutMs: 30_000,
  });
  if (!noVideo) {
    const clip = await upload(owner.client, 'clip.mp4', img.video('mp4', 320, 180), { type: 'video/mp4', parentId: trip.id });
    await eventually(async () => (await listAll(owner.client, '/api/files/photos')).find((p) => p.id === clip.id)?.duration === 10.5, {
      timeoutMs: 60_000,
    });
  }
}, 180_000);
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

const heading = (page: Page) => page.getByRole('dialog').getByRole('heading').first().textContent();
const scaleOf = (page: Page) =>
  page
    .locator('.zoom-area img')
    .evaluate((el: any) => new (globalThis as any).DOMMatrix((globalThis as any).getComputedStyle(el).transform).a as number);

async function openPhoto(page: Page, name: string) {
  await page.goto('/photos');
  await page.getByRole('listbox', { name: 'Photos' }).getByRole('option', { name, exact: true }).click();
  const viewer = page.getByRole('dialog', { name });
  await eventually(async () => (await viewer.locator('.zoom-area img').evaluate((i: any) => i.complete && i.naturalWidth)) > 0);
  return viewer;
}

describe('the photo viewer', () => {
  test('a dark stage in the light theme; ←/→ step, Esc closes and gives focus back; wheel zoom fetches the original; double-click fits again', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    const viewer = await openPhoto(page, names[0]!);
    const stage = await viewer.evaluate((el: any) => (globalThis as any).getComputedStyle(el).backgroundColor as string);
    expect(stage).toBe('rgb(14, 16, 20)');
    // After the video (uploaded today: the newest) and paris.jpg (July), then the months.
    expect(await viewer.locator('.viewer-counter').textContent()).toContain(`${noVideo ? 2 : 3} of ${names.length + (noVideo ? 1 : 2)}`);
    expect(await viewer.getByRole('navigation', { name: 'Filmstrip' }).isVisible()).toBe(true);
    expect(
      await viewer.getByRole('navigation', { name: 'Filmstrip' }).getByRole('button', { name: names[0]! }).getAttribute('aria-current'),
    ).toBe('true');
    await expectAccessible(page, 'photo viewer, light');
    await screenshot(page, 'viewer-light-desktop');
    await page.keyboard.press('ArrowRight');
    await eventually(async () => (await heading(page)) === names[1]);
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await eventually(async () => (await heading(page)) === 'paris.jpg');

    // Wheel up over the picture: zoomed in towards the pointer, the original (not the thumbnail) on screen.
    const box = (await page.locator('dialog.viewer').locator('.zoom-area img').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    expect(await page.locator('dialog.viewer').locator('.zoom-area img').getAttribute('src')).toContain('/thumbnail');
    for (let i = 0; i < 3; i++) await page.mouse.wheel(0, -120);
    await eventually(async () => (await scaleOf(page)) > 2);
    await eventually(async () =>
      (await page.locator('dialog.viewer').locator('.zoom-area img').getAttribute('src'))!.includes('/download'),
    );
    await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
    await eventually(async () => (await scaleOf(page)) === 1);
    // Double-click zooms in again; the wheel back down returns to the fitted size.
    await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
    await eventually(async () => (await scaleOf(page)) > 2);
    for (let i = 0; i < 10; i++) await page.mouse.wheel(0, 120);
    await eventually(async () => (await scaleOf(page)) === 1);

    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label'))).toBe(names[0]!);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  test('on a phone: a swipe steps, a double tap zooms, a counter instead of the filmstrip (dark, 390 px, touch)', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner, { dark: true, viewport: PHONE, touch: true });
    await page.goto('/photos');
    await page.getByRole('listbox', { name: 'Photos' }).getByRole('option', { name: names[0]!, exact: true }).tap();
    const viewer = page.getByRole('dialog', { name: names[0]! });
    await viewer.locator('.zoom-area img').waitFor();
    expect(await viewer.getByRole('navigation', { name: 'Filmstrip' }).isVisible()).toBe(false);
    expect(await viewer.locator('.viewer-counter').isVisible()).toBe(true);
    const cdp = await context.newCDPSession(page);
    const swipe = async (from: number, to: number) => {
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: from, y: 420 }] });
      for (let s = 1; s <= 5; s++)
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: from + ((to - from) * s) / 5, y: 420 }] });
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    };
    await swipe(320, 60);
    await eventually(async () => (await heading(page)) === names[1]);
    await swipe(60, 320);
    await eventually(async () => (await heading(page)) === names[0]);
    // A double tap zooms in where it lands, and another fits the picture again. The four touches are sent
    // without waiting between them, so a loaded machine cannot stretch the two taps apart.
    const doubleTap = () =>
      Promise.all(
        ['touchStart', 'touchEnd', 'touchStart', 'touchEnd'].map((type) =>
          cdp.send('Input.dispatchTouchEvent', {
            type: type as 'touchStart',
            touchPoints: type === 'touchStart' ? [{ x: 195, y: 420 }] : [],
          }),
        ),
      );
    await doubleTap();
    await eventually(async () => (await scaleOf(page)) > 2);
    await doubleTap();
    await eventually(async () => (await scaleOf(page)) === 1);
    await expectAccessible(page, 'photo viewer, dark phone');
    await screenshot(page, 'viewer-dark-phone');
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test('details: when, camera, lens, pixels, size, place, folder and sharing; none of the EXIF ones for a photo without', async () => {
    for (const [opts, tag] of [
      [{}, 'light-desktop'],
      [{ dark: true }, 'dark-desktop'],
      [{ viewport: PHONE, touch: true }, 'light-phone'],
    ] as const) {
      const { context, page, errors } = await signedInContext(browser, t.url, owner, opts);
      const viewer = await openPhoto(page, 'paris.jpg');
      await viewer.getByRole('button', { name: 'Get info' }).click();
      // The details stay open as the viewer steps (its name changes with the photo).
      const details = page.locator('.viewer .info-panel');
      await details.getByText('Camera').waitFor();
      const value = (term: string) => details.locator(`dt:text-is("${term}") + dd`).textContent();
      expect(await value('Taken')).toContain('2025');
      expect(await value('Camera')).toBe('FUJIFILM X-T5');
      expect(await value('Lens')).toBe('XF16-80mmF4 R OIS WR');
      expect(await value('Dimensions')).toBe('640 × 480 px (0.3 MP)');
      expect(await value('Place')).toBe('48.85833° N, 2.29444° E');
      // The folder's path is read apart from the photo's details (its crumbs): it may come a moment later.
      await eventually(async () => expect(await value('Location')).toBe('My files / Trip'));
      expect(await value('Sharing')).toBe('Not shared');
      expect(await value('Size')).toMatch(/KiB/);
      // No tile server configured: no map, and no request leaves the server.
      expect(await details.locator('img').count()).toBe(0);
      await expectAccessible(page, `viewer details ${tag}`);
      await screenshot(page, `viewer-details-${tag}`);
      // The next photo (a plain one): its details have no camera, lens or place.
      await page.keyboard.press('ArrowRight');
      await eventually(async () => (await heading(page)) !== 'paris.jpg');
      await details.locator('dt:text-is("Dimensions")').waitFor();
      expect(await details.locator('dt:text-is("Camera"), dt:text-is("Lens"), dt:text-is("Place")').count()).toBe(0);
      expect(errors).toEqual([]);
      await context.close();
    }
  }, 120_000);

  if (!skipWithout(noVideo, 'the video tile and viewer (ffmpeg)'))
    test('a video: a play badge and its running time on its tile; in the viewer it plays muted over its poster', async () => {
      for (const [opts, tag] of [
        [{}, 'light-desktop'],
        [{ dark: true, viewport: PHONE, touch: true }, 'dark-phone'],
      ] as const) {
        const { context, page, errors } = await signedInContext(browser, t.url, owner, opts);
        await page.goto('/photos');
        const tile = page.getByRole('listbox', { name: 'Photos' }).getByRole('option', { name: 'clip.mp4', exact: true });
        expect(await tile.locator('.video-duration').getAttribute('data-time')).toBe('0:11');
        expect(await tile.locator('.sr-only').textContent()).toMatch(/^Video, 11 s, /);
        await screenshot(page, `video-tile-${tag}`);
        await ('touch' in opts ? tile.tap() : tile.click());
        const video = page.getByRole('dialog', { name: 'clip.mp4' }).locator('video');
        await video.waitFor();
        expect(await video.evaluate((v: any) => v.muted)).toBe(true);
        expect(await video.getAttribute('poster')).toContain('/thumbnail?size=large');
        expect(await video.evaluate((v: any) => v.controls && v.playsInline)).toBe(true);
        await expectAccessible(page, `video in the viewer ${tag}`);
        expect(errors).toEqual([]);
        await context.close();
      }
      // In the folder's grid, the video's tile has the play badge and its running time too (the listing carries it).
      const trip = (await listAll(owner.client, '/api/files')).find((i) => i.name === 'Trip')!;
      for (const [opts, tag] of [
        [{}, 'light-desktop'],
        [{ dark: true }, 'dark-desktop'],
        [{ viewport: PHONE, touch: true }, 'light-phone'],
      ] as const) {
        const { context, page, errors } = await signedInContext(browser, t.url, owner, opts);
        await page.goto(`/files/${trip.id}`);
        const toggle = page.getByRole('button', { name: 'Grid view' });
        if ((await toggle.getAttribute('aria-pressed')) !== 'true') await toggle.click();
        const badge = page.getByRole('option', { name: /clip\.mp4/ }).locator('.video-badge');
        await badge.waitFor();
        expect(await badge.locator('.video-duration').getAttribute('data-time')).toBe('0:11');
        // A screen reader hears it after the name, as in Photos.
        await page.getByRole('option', { name: /^clip\.mp4 Video, 11 s, / }).waitFor();
        await expectAccessible(page, `video tile in the folder grid ${tag}`);
        await screenshot(page, `video-tile-grid-${tag}`);
        expect(errors).toEqual([]);
        await context.close();
      }
    }, 180_000);

  test('Photos at 390 px: the months are a thin rail whose handle is dragged, its month in a bubble; a slider to keyboards', async () => {
    for (const [opts, tag] of [
      [{ viewport: PHONE, touch: true }, 'light-phone'],
      [{ dark: true, viewport: PHONE, touch: true }, 'dark-phone'],
    ] as const) {
      const { context, page, errors } = await signedInContext(browser, t.url, owner, opts);
      await page.goto('/photos');
      const rail = page.getByRole('slider', { name: 'Jump to month' });
      await rail.waitFor();
      expect(await page.getByRole('navigation', { name: 'Jump to month' }).isVisible()).toBe(false);
      const railBox = (await rail.boundingBox())!;
      expect(railBox.width).toBeLessThanOrEqual(32);
      const grid = (await page.locator('.photo-grid').boundingBox())!;
      expect(grid.width).toBeGreaterThan(360);
      // The newest month: the video's (uploaded now, it says no recording date), else paris.jpg's.
      const newest = noVideo
        ? 'July 2025'
        : await page.evaluate(() => new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric' }).format(new Date()));
      expect(await rail.getAttribute('aria-valuetext')).toBe(newest);
      // Drag the handle to the bottom: the bubble names the month, the grid is there.
      const cdp = await context.newCDPSession(page);
      const x = railBox.x + railBox.width / 2;
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y: railBox.y + 4 }] });
      for (let s = 1; s <= 6; s++)
        await cdp.send('Input.dispatchTouchEvent', {
          type: 'touchMove',
          touchPoints: [{ x, y: railBox.y + 4 + ((railBox.height - 8) * s) / 6 }],
        });
      await eventually(async () => (await page.locator('.photo-rail-bubble').textContent()) === 'January 2025');
      await screenshot(page, `photos-rail-dragging-${tag}`);
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
      await page.locator('.photo-rail-bubble').waitFor({ state: 'detached' });
      await eventually(async () => (await page.locator('.photo-grid').evaluate((el: any) => el.scrollTop)) > 100);
      await eventually(async () => (await page.getByRole('option', { name: names.at(-1)!, exact: true }).isVisible()) === true);
      // Keys: Home goes back to the newest month.
      await rail.focus();
      await page.keyboard.press('Home');
      await eventually(async () => (await page.locator('.photo-grid').evaluate((el: any) => el.scrollTop)) === 0);
      await eventually(async () => (await rail.getAttribute('aria-valuetext')) === newest);
      await expectAccessible(page, `photos rail ${tag}`);
      await screenshot(page, `photos-rail-${tag}`);
      expect(errors).toEqual([]);
      await context.close();
    }
    // On a desktop the list of months stays, and the rail is not shown.
    const { context, page } = await signedInContext(browser, t.url, owner);
    await page.goto('/photos');
    await page.getByRole('navigation', { name: 'Jump to month' }).waitFor();
    expect(await page.getByRole('slider', { name: 'Jump to month' }).count()).toBe(0);
    await context.close();
  }, 90_000);

  test('with MAP_TILE_URL, the place is drawn on one tile of that server (allowed by the page’s CSP); without, no map', async () => {
    const asked: string[] = [];
    const png = await sharp({ create: { width: 256, height: 256, channels: 3, background: '#cde' } })
      .png()
      .toBuffer();
    const tiles = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req) => {
        asked.push(new URL(req.url).pathname);
        return new Response(png, { headers: { 'Content-Type': 'image/png' } });
      },
    });
    const mapped = await startTestServer({ env: { MAP_TILE_URL: `http://127.0.0.1:${tiles.port}/{z}/{x}/{y}.png` } });
    try {
      const user = await seed.owner(mapped);
      const exif = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3a7' } })
        .jpeg()
        .withExif({ IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 30/1', GPSLongitudeRef: 'E', GPSLongitude: '2/1 17/1 40/1' } })
        .toBuffer();
      const file = await upload(user.client, 'tower.jpg', exif, { type: 'image/jpeg' });
      await eventually(async () => (await json(await user.client.get(`/api/files/${file.id}/info`))).photo?.location, {
        timeoutMs: 30_000,
      });
      expect((await user.client.get('/api/files')).headers.get('content-security-policy')).toContain(
        `img-src 'self' data: blob: http://127.0.0.1:${tiles.port}`,
      );
      expect((await json(await user.client.get('/api/user/signup-status'))).mapTileUrl).toBe(
        `http://127.0.0.1:${tiles.port}/{z}/{x}/{y}.png`,
      );
      const { context, page, errors } = await signedInContext(browser, mapped.url, user, { dark: true });
      const viewer = await openPhoto(page, 'tower.jpg');
      await viewer.getByRole('button', { name: 'Get info' }).click();
      const map = viewer.getByRole('img', { name: 'Map of the place the photo was taken' });
      await eventually(async () => (await map.evaluate((i: any) => i.complete && i.naturalWidth)) === 256);
      // The Eiffel Tower at zoom 14: tile 8296/5636.
      expect(asked).toEqual(['/14/8296/5636.png']);
      await expectAccessible(page, 'viewer details with a map tile, dark');
      await screenshot(page, 'viewer-details-map-dark-desktop');
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await mapped.stop();
      void tiles.stop(true);
    }
    // The main server has none configured: its pages allow no other image origin.
    expect((await owner.client.get('/api/files')).headers.get('content-security-policy')).toContain("img-src 'self' data: blob:;");
    expect('mapTileUrl' in (await json(await owner.client.get('/api/user/signup-status')))).toBe(false);
  }, 90_000);
});
