import { beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { expectAccessible, openContext, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import * as img from '../helpers/images.ts';
import { uploadPhoto } from '../helpers/photos.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;
let ada: seed.SeededLogin;
let album: { id: string };

const photo = async (o: seed.SeededLogin, name: string, i: number) =>
  uploadPhoto(o.client, name, await img.photo(i, 480, 360, `2025:06:1${i} 12:00:00`), 480);

serverAndBrowser((s) => ({ t, browser } = s));
beforeAll(async () => {
  ada = await seed.owner(t, seed.uniqueEmail('ada'), 'Ada Lovelace');
  const ids = [(await photo(ada, 'tram.jpg', 1)).id, (await photo(ada, 'tiles.jpg', 2)).id];
  await photo(ada, 'private.jpg', 3);
  album = (await json(await ada.client.post('/api/albums', { name: 'Lisbon', ids }))).album;
});

describe('album links', () => {
  test('the album’s Share makes a link in its Link part, each option saved as made; a visitor sees the gallery; Remove link ends it', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, ada);
    await page.goto(`/photos/albums/${album.id}`);
    await page.getByRole('heading', { name: 'Lisbon' }).waitFor();
    await page.getByRole('button', { name: 'Share' }).click();
    const share = page.getByRole('dialog', { name: 'Share the album “Lisbon”' });
    await share.getByRole('tab', { name: 'Link' }).click();
    await share.getByText('No public link yet').waitFor();
    await share.getByRole('radio', { name: 'Never' }).check();
    await share.getByRole('button', { name: 'Create link' }).click();
    await share.getByRole('status').filter({ hasText: 'Saved: Link created' }).waitFor();
    const url = await share.getByLabel('Album link').inputValue();
    expect(url).toStartWith(`${t.url}/s/album/`);
    await share.getByText('Never expires').waitFor();
    await share.getByRole('checkbox', { name: 'Limit downloads' }).check();
    await share.getByRole('status').filter({ hasText: 'Saved: Link settings saved' }).waitFor();
    await eventually(async () => (await json(await ada.client.get(`/api/albums/${album.id}/link`))).link.maxDownloads === 10);
    // The link as a QR code, as a file link's.
    await share.getByRole('button', { name: 'Show QR code' }).click();
    const qr = share.getByRole('img', { name: 'QR code of the link to “Lisbon”' });
    await qr.waitFor();
    expect(await qr.evaluate((i: { naturalWidth: number }) => i.naturalWidth)).toBe(240);
    await expectAccessible(page, 'album share dialog, Link part');
    await screenshot(page, 'album-link-light-desktop');
    // The same part in the dark at phone width: the link row, its QR code and Remove link fit.
    const phone = await signedInContext(browser, t.url, ada, { viewport: PHONE, dark: true, touch: true });
    await phone.page.goto(`/photos/albums/${album.id}`);
    await phone.page.getByRole('heading', { name: 'Lisbon' }).waitFor();
    await phone.page.getByRole('button', { name: 'Share' }).click();
    const small = phone.page.getByRole('dialog', { name: 'Share the album “Lisbon”' });
    await small.getByRole('tab', { name: 'Link' }).click();
    await small.getByRole('button', { name: 'Show QR code' }).click();
    await small.getByRole('img', { name: 'QR code of the link to “Lisbon”' }).waitFor();
    const width = await phone.page.evaluate('document.documentElement.scrollWidth');
    expect(width).toBeLessThanOrEqual(390);
    await expectAccessible(phone.page, 'album share dialog, Link part, dark phone');
    await screenshot(phone.page, 'album-link-dark-phone');
    expect(phone.errors).toEqual([]);
    await phone.context.close();

    // A visitor, signed in nowhere, at phone width in the dark.
    const visitor = await openContext(browser, t.url, { viewport: PHONE, dark: true, touch: true });
    await visitor.page.goto(url);
    await visitor.page.getByRole('heading', { name: 'Lisbon' }).waitFor();
    await visitor.page.getByText('Shared by Ada Lovelace').waitFor();
    await visitor.page.getByText('10 downloads left').waitFor();
    expect(await visitor.page.getByRole('link', { name: 'Download all (ZIP)' }).getAttribute('href')).toBe(`${new URL(url).pathname}/zip`);
    const gallery = visitor.page.getByRole('list', { name: 'Photos' });
    expect(await gallery.getByRole('img').count()).toBe(2);
    expect(await visitor.page.getByRole('img', { name: 'private.jpg' }).count()).toBe(0);
    await expectAccessible(visitor.page, 'album link gallery');
    await screenshot(visitor.page, 'album-link-gallery-dark-phone');
    await gallery.getByRole('link').first().click();
    const viewer = visitor.page.getByRole('dialog', { name: 'tiles.jpg' });
    await viewer.getByText('1 of 2').waitFor();
    await visitor.page.keyboard.press('ArrowRight');
    await visitor.page.getByRole('dialog', { name: 'tram.jpg' }).getByText('2 of 2').waitFor();
    await visitor.page.keyboard.press('Escape');
    // Closing lands on the picture last shown, as its own fragment.
    await eventually(
      async () =>
        (await visitor.page.evaluate('document.getElementById(location.hash.slice(1))?.querySelector("img")?.alt')) === 'tram.jpg',
    );
    expect(visitor.errors).toEqual([]);

    await share.getByRole('button', { name: 'Remove link' }).click();
    await share.getByRole('status').filter({ hasText: 'Saved: Link removed' }).waitFor();
    await share.getByRole('button', { name: 'Create link' }).waitFor();
    expect((await visitor.page.goto(url))?.status()).toBe(404);
    await visitor.context.close();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('the gallery’s viewer: wheel, double-click and keys zoom, a drag pans; on a touch phone a swipe steps and a double tap zooms', async () => {
    const { link } = await json(await ada.client.post(`/api/albums/${album.id}/link`, { expiry: 'never' }));
    const scaleOf = async (page: Page, name: string) => {
      const t = await page
        .getByRole('dialog', { name })
        .locator('figure img')
        .evaluate((i: { style: { transform: string } }) => i.style.transform);
      return Number(/scale\(([\d.]+)\)/.exec(t)?.[1] ?? 1);
    };

    const desk = await openContext(browser, t.url);
    await desk.page.goto(
      `${link.url}#view-${(await json(await fetch(link.url, { headers: { accept: 'application/json' } }))).items[0].id}`,
    );
    const first = desk.page.getByRole('dialog', { name: 'tiles.jpg' });
    await first.getByText('1 of 2').waitFor();
    const box = (await first.locator('figure').boundingBox())!;
    await desk.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const picture = first.locator('figure img');
    expect(await picture.getAttribute('src')).toContain('/thumbnail/');
    for (let i = 0; i < 3; i++) await desk.page.mouse.wheel(0, -120);
    await eventually(async () => (await scaleOf(desk.page, 'tiles.jpg')) > 1.5);
    // No download cap: zoomed, the picture becomes the original (a download, on the record), still zoomed where it was.
    await eventually(async () => ((await picture.getAttribute('src')) ?? '').includes('/file/'));
    expect(await picture.getAttribute('src')).toEndWith('?inline=1');
    expect(await scaleOf(desk.page, 'tiles.jpg')).toBeGreaterThan(1.5);
    await eventually(async () => (await json(await ada.client.get(`/api/albums/${album.id}/link`))).link.downloads === 1);
    // A drag pans the zoomed picture instead of stepping to the next one.
    const before = await first.locator('figure img').evaluate((i: { style: { transform: string } }) => i.style.transform);
    await desk.page.mouse.down();
    await desk.page.mouse.move(box.x + box.width / 2 - 120, box.y + box.height / 2, { steps: 5 });
    await desk.page.mouse.up();
    expect(await first.locator('figure img').evaluate((i: { style: { transform: string } }) => i.style.transform)).not.toBe(before);
    expect(await desk.page.evaluate('location.hash')).toContain('view-');
    await first.getByText('1 of 2').waitFor();
    await desk.page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
    await eventually(async () => (await scaleOf(desk.page, 'tiles.jpg')) === 1);
    await desk.page.keyboard.press('+');
    await eventually(async () => (await scaleOf(desk.page, 'tiles.jpg')) > 1);
    await desk.page.keyboard.press('0');
    await eventually(async () => (await scaleOf(desk.page, 'tiles.jpg')) === 1);
    // Stepping starts the next picture fitted.
    await desk.page.keyboard.press('+');
    await desk.page.keyboard.press('ArrowRight');
    await desk.page.getByRole('dialog', { name: 'tram.jpg' }).getByText('2 of 2').waitFor();
    expect(await scaleOf(desk.page, 'tram.jpg')).toBe(1);
    expect(desk.errors).toEqual([]);
    await desk.context.close();

    // With a download cap the viewer zooms the large thumbnail: the original would spend a download.
    await ada.client.send('PATCH', `/api/albums/${album.id}/link`, { maxDownloads: 5 });
    const capped = await openContext(browser, t.url);
    await capped.page.goto(
      `${link.url}#view-${(await json(await fetch(link.url, { headers: { accept: 'application/json' } }))).items[0].id}`,
    );
    const kept = capped.page.getByRole('dialog', { name: 'tiles.jpg' });
    await kept.getByText('1 of 2').waitFor();
    await capped.page.keyboard.press('+');
    await capped.page.keyboard.press('+');
    await eventually(async () => (await scaleOf(capped.page, 'tiles.jpg')) > 1.5);
    await capped.page.waitForTimeout(300);
    expect(await kept.locator('figure img').getAttribute('src')).toContain('/thumbnail/');
    expect(await kept.locator('figure img').getAttribute('data-full')).toBeNull();
    expect((await json(await ada.client.get(`/api/albums/${album.id}/link`))).link.downloads).toBe(1);
    expect(capped.errors).toEqual([]);
    await capped.context.close();
    await ada.client.send('PATCH', `/api/albums/${album.id}/link`, { maxDownloads: null });

    const phone = await openContext(browser, t.url, { viewport: PHONE, dark: true, touch: true });
    await phone.page.goto(link.url);
    await phone.page.getByRole('list', { name: 'Photos' }).getByRole('link').first().tap();
    await phone.page.getByRole('dialog', { name: 'tiles.jpg' }).getByText('1 of 2').waitFor();
    const cdp = await phone.context.newCDPSession(phone.page);
    const swipe = async (from: number, to: number) => {
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: from, y: 420 }] });
      for (let s = 1; s <= 5; s++)
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: from + ((to - from) * s) / 5, y: 420 }] });
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    };
    await swipe(320, 60);
    await phone.page.getByRole('dialog', { name: 'tram.jpg' }).getByText('2 of 2').waitFor();
    await swipe(60, 320);
    await phone.page.getByRole('dialog', { name: 'tiles.jpg' }).getByText('1 of 2').waitFor();
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
    await eventually(async () => (await scaleOf(phone.page, 'tiles.jpg')) > 2);
    await expectAccessible(phone.page, 'album link viewer, zoomed, dark phone');
    await screenshot(phone.page, 'album-link-viewer-dark-phone');
    await doubleTap();
    await eventually(async () => (await scaleOf(phone.page, 'tiles.jpg')) === 1);
    expect(phone.errors).toEqual([]);
    await phone.context.close();
  });
});
