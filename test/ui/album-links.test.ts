import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { acquireBrowser, expectAccessible, openContext, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let ada: seed.SeededLogin;
let album: { id: string };

async function photo(o: seed.SeededLogin, name: string, i: number) {
  const file = await upload(o.client, name, await img.photo(i, 480, 360, `2025:06:1${i} 12:00:00`), { type: 'image/jpeg' });
  await eventually(async () =>
    (await json(await o.client.get('/api/files/photos'))).some(
      (p: { id: string; width: number | null }) => p.id === file.id && p.width === 480,
    ),
  );
  return file;
}

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  await seed.admin(t);
  ada = await seed.owner(t, seed.uniqueEmail('ada'), 'Ada Lovelace');
  const ids = [(await photo(ada, 'tram.jpg', 1)).id, (await photo(ada, 'tiles.jpg', 2)).id];
  await photo(ada, 'private.jpg', 3);
  album = (await json(await ada.client.post('/api/albums', { name: 'Lisbon', ids }))).album;
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
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
    await expectAccessible(page, 'album share dialog, Link part');
    await screenshot(page, 'album-link-light-desktop');

    // A visitor, signed in nowhere, at phone width in the dark.
    const visitor = await openContext(browser, t.url, { viewport: PHONE, dark: true, touch: true });
    await visitor.page.goto(url);
    await visitor.page.getByRole('heading', { name: 'Lisbon' }).waitFor();
    await visitor.page.getByText('Shared by Ada Lovelace').waitFor();
    await visitor.page.getByText('10 downloads left').waitFor();
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
    await eventually(async () => (await visitor.page.evaluate('location.hash')) === '');
    expect(visitor.errors).toEqual([]);

    await share.getByRole('button', { name: 'Remove link' }).click();
    await share.getByRole('status').filter({ hasText: 'Saved: Link removed' }).waitFor();
    await share.getByRole('button', { name: 'Create link' }).waitFor();
    expect((await visitor.page.goto(url))?.status()).toBe(404);
    await visitor.context.close();
    expect(errors).toEqual([]);
    await context.close();
  });
});
