import { beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { apiSettled, eventStreamOpen, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import * as img from '../helpers/images.ts';
import { uploadPhoto } from '../helpers/photos.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;
let ada: seed.SeededLogin;
let grace: seed.SeededLogin;
let album: { id: string };
let mine: { id: string };
let theirs: { id: string };

const photo = async (o: seed.SeededLogin, name: string, i: number) =>
  uploadPhoto(o.client, name, await img.photo(i, 480, 360, `2025:06:1${i} 12:00:00`), 480);

serverAndBrowser((s) => ({ t, browser } = s));
beforeAll(async () => {
  ada = await seed.owner(t, seed.uniqueEmail('ada'), 'Ada Lovelace');
  grace = await seed.owner(t, seed.uniqueEmail('grace'), 'Grace Hopper');
  mine = await photo(ada, 'mine.jpg', 1);
  album = (await json(await ada.client.post('/api/albums', { name: 'Together', ids: [mine.id] }))).album;
  await ada.client.post(`/api/albums/${album.id}/members`, { accountId: grace.id, role: 'editor' });
  theirs = await photo(grace, 'theirs.jpg', 2);
  await grace.client.post(`/api/albums/${album.id}/items`, { ids: [theirs.id] });
});

/** Opens the viewer on a tile of the album's page; answers the viewer and its Download link's address. */
async function view(page: Page, tileName: RegExp, name: string) {
  await page.getByRole('option', { name: tileName }).click();
  const viewer = page.getByRole('dialog', { name });
  const download = viewer.getByRole('link', { name: 'Download' });
  await download.waitFor();
  const href = (await download.getAttribute('href'))!;
  // The address the viewer offers answers the file, not a 404.
  expect(await page.evaluate(`fetch(${JSON.stringify(href)}).then((r) => r.status)`)).toBe(200);
  return { viewer, href };
}

describe('album files through the album’s door', () => {
  test('the owner’s album marks an editor’s photo as theirs: only looked at and downloaded, through the album', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, ada);
    await page.goto(`/photos/albums/${album.id}`);
    await page.getByRole('option', { name: 'theirs.jpg, shared by Grace Hopper' }).waitFor();
    await page.getByRole('option', { name: /^mine\.jpg$/ }).waitFor();
    const { viewer, href } = await view(page, /^theirs\.jpg, shared by Grace Hopper$/, 'theirs.jpg');
    expect(href).toBe(`/api/albums/${album.id}/items/${theirs.id}/download`);
    expect(await viewer.getByRole('button', { name: /Share|Move to trash|Get info/ }).count()).toBe(0);
    await screenshot(page, 'album-editor-photo-viewer-light-desktop');
    await page.keyboard.press('Escape');
    // The owner's own photo keeps the file manager's tools.
    const own = await view(page, /^mine\.jpg$/, 'mine.jpg');
    expect(await own.viewer.getByRole('button', { name: /Share/ }).count()).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a member downloads the owner’s photo from the viewer through the album (its own door is 404 to them)', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, grace, { dark: true });
    await page.goto(`/photos/albums/${album.id}`);
    const { viewer, href } = await view(page, /^mine\.jpg, shared by Ada Lovelace$/, 'mine.jpg');
    expect(href).toBe(`/api/albums/${album.id}/items/${mine.id}/download`);
    expect(await page.evaluate(`fetch('/api/files/${mine.id}/download').then((r) => r.status)`)).toBe(404);
    expect(await viewer.getByRole('button', { name: /Share|Move to trash/ }).count()).toBe(0);
    await screenshot(page, 'album-member-viewer-dark-desktop');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('Photos that fail to load', () => {
  test('the timeline says the load failed and offers Try again; it does not claim there are no photos', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, ada);
    await page.route('**/api/files/photos?*', (r) =>
      r.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ message: 'The photo index is being rebuilt.' }) }),
    );
    await page.goto('/photos');
    await page.getByRole('alert').filter({ hasText: 'The photo index is being rebuilt.' }).waitFor();
    await page.getByText('Nothing to show until this loads. The reason is above.').waitFor();
    expect(await page.getByText(/No photos or videos yet|0 photos/).count()).toBe(0);
    // The page reads Photos again once its stream is live (150 ms after): that read fails too, and Try again is what mends it.
    await eventStreamOpen(page);
    await page.waitForTimeout(300);
    await apiSettled(page);
    await page.unroute('**/api/files/photos?*');
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('option', { name: /^mine\.jpg/ }).waitFor();
    expect(await page.getByText('1 photo', { exact: true }).count()).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });
});
