import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import {
  acquireBrowser,
  apiSettled,
  expectAccessible,
  holdRequests,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
} from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let owner: seed.SeededLogin;
const NAMES = ['dawn.jpg', 'noon.jpg', 'dusk.jpg'];

beforeAll(async () => {
  // 201 albums are shared with one person below; the limit on adding people is tested in the sharing tests.
  [t, browser] = await Promise.all([startTestServer({ env: { COFFER_MEMBER_LOOKUP_RATE_LIMIT: '1000' } }), acquireBrowser()]);
  owner = await seed.owner(t);
  for (const [i, name] of NAMES.entries())
    await upload(owner.client, name, await img.photo(i, 480, 360, `2025:06:1${i + 1} 12:00:00`), { type: 'image/jpeg' });
  await eventually(async () => {
    const photos = await json(await owner.client.get('/api/files/photos'));
    expect(photos.filter((p: { width: number | null }) => p.width === 480)).toHaveLength(3);
  });
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });
const tile = (page: Page, name: string) => page.getByRole('option', { name, exact: true });

/**
 * Records the message of every toast the page shows from now on: one that has left after its 4 s (a loaded machine
 * can take that long to settle the page) is still counted. Returns what has been shown so far.
 */
async function recordToasts(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const g = globalThis as any;
    const shown: string[] = (g.__toastsShown = []);
    new g.MutationObserver((records: any[]) => {
      for (const r of records)
        for (const n of r.addedNodes)
          if (n.nodeType === 1)
            for (const el of [n, ...n.querySelectorAll('.toast-text')]) if (el.matches('.toast-text')) shown.push(el.textContent);
    }).observe(g.document.body, { childList: true, subtree: true });
  });
  return () => page.evaluate(() => (globalThis as any).__toastsShown as string[]);
}

describe('albums', () => {
  test('a selection in Photos makes an album; its page shows them with Photos’ tools; cover, remove, rename and delete (light, dark, phone)', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto('/photos');
    await tile(page, 'dusk.jpg').click({ modifiers: ['Control'] });
    await tile(page, 'dawn.jpg').click({ modifiers: ['Control'] });
    await button(page, 'Add to album').click();
    const dialog = page.getByRole('dialog', { name: 'Add 2 items to an album' });
    await dialog.getByLabel('Name of the new album').fill('Summer');
    await expectAccessible(page, 'add to album');
    await screenshot(page, 'albums-add-dialog');
    await dialog.getByRole('button', { name: 'Create album' }).click();
    await page.getByText('Added to “Summer”').waitFor();

    await page.getByRole('navigation', { name: 'Photos views' }).getByRole('link', { name: 'Albums' }).click();
    const card = page.getByRole('link', { name: 'Summer 2 items' });
    await card.waitFor();
    await expectAccessible(page, 'albums');
    await screenshot(page, 'albums-list');
    await card.click();
    await page.getByRole('heading', { name: 'Summer' }).waitFor();
    const grid = page.getByRole('listbox', { name: 'Photos in Summer' });
    await grid.getByRole('option', { name: 'dusk.jpg' }).waitFor();
    expect(await grid.getByRole('option').allInnerTexts()).toHaveLength(2);
    expect(await grid.getByRole('option', { name: 'noon.jpg' }).count()).toBe(0);
    await expectAccessible(page, 'album');
    await screenshot(page, 'album-page');

    // Add the third from Photos into the existing album.
    await page.getByRole('link', { name: 'All photos' }).click();
    await tile(page, 'noon.jpg').click({ modifiers: ['Control'] });
    await button(page, 'Add to album').click();
    const again = page.getByRole('dialog', { name: 'Add 1 item to an album' });
    // The newest album is chosen once the list has arrived.
    await again.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('Added to “Summer”').first().waitFor();
    await page.getByRole('button', { name: 'Open album' }).last().click();
    await page.getByRole('heading', { name: 'Summer' }).waitFor();
    await grid.getByRole('option', { name: 'noon.jpg' }).waitFor();

    await grid.getByRole('option', { name: 'noon.jpg' }).click({ modifiers: ['Control'] });
    await button(page, 'Use as cover').click();
    await page.getByText('Album cover set').waitFor();
    const album = (await json(await owner.client.get('/api/albums'))).albums[0];
    expect(album.coverItemId).toBe(album.coverId);

    await grid.getByRole('option', { name: 'dawn.jpg' }).click({ modifiers: ['Control'] });
    await button(page, 'Remove from album').click();
    await page.getByText('1 item removed from the album; they stay in your files').waitFor();
    await eventually(async () => (await grid.getByRole('option').count()) === 2);
    expect((await json(await owner.client.get('/api/files/photos'))).length).toBe(3);

    await button(page, 'Rename').click();
    const rename = page.getByRole('dialog', { name: 'Rename album' });
    await rename.getByLabel('Album name').fill('Summer 2025');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: 'Summer 2025' }).waitFor();

    // Dark, then a phone.
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'album, dark');
    await screenshot(page, 'album-page-dark');
    await page.setViewportSize(PHONE);
    await apiSettled(page);
    await expectAccessible(page, 'album, phone');
    await screenshot(page, 'album-page-phone-dark');
    await page.getByRole('link', { name: 'Albums', exact: true }).click();
    await page.getByRole('link', { name: 'Summer 2025 2 items' }).waitFor();
    await screenshot(page, 'albums-list-phone-dark');
    await page.getByRole('link', { name: 'Summer 2025 2 items' }).click();

    await button(page, 'Delete album').click();
    const confirm = page.getByRole('dialog', { name: 'Delete the album “Summer 2025”?' });
    await confirm.getByText('stay where they are').waitFor();
    await confirm.getByRole('button', { name: 'Delete album' }).click();
    await page.getByText('No albums yet.').waitFor();
    expect((await json(await owner.client.get('/api/files/photos'))).length).toBe(3);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a sub-user without Modify sees albums but no way to change them', async () => {
    const photos = await json(await owner.client.get('/api/files/photos'));
    await owner.client.post('/api/albums', { name: 'Read only', ids: [photos[0].id] });
    const sub = await seed.subUser(t, { id: owner.id }, ['files.download']);
    const { context, page, errors } = await signedInContext(browser, t.url, sub);
    await page.goto('/photos/albums');
    await page.getByRole('link', { name: 'Read only 1 item' }).click();
    await page.getByRole('listbox', { name: 'Photos in Read only' }).getByRole('option').first().waitFor();
    expect(await button(page, 'Rename').count()).toBe(0);
    expect(await button(page, 'Delete album').count()).toBe(0);
    await page.getByRole('link', { name: 'All photos' }).click();
    await tile(page, photos[0].name).click({ modifiers: ['Control'] });
    await page.getByText('1 selected').waitFor();
    expect(await button(page, 'Add to album').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('past the first 200, More albums shows the older ones, on the Albums page and when adding to an album', async () => {
    const everyAlbum = async () => {
      const all: { name: string; itemCount: number }[] = [];
      let cursor = '';
      do {
        const page = await json(await owner.client.get(`/api/albums?limit=200${cursor ? `&cursor=${cursor}` : ''}`));
        all.push(...page.albums);
        cursor = page.nextCursor ?? '';
      } while (cursor);
      return all;
    };
    for (let i = 0; i < 205; i++) await owner.client.post('/api/albums', { name: `Roll ${String(i).padStart(3, '0')}` });
    const every = await everyAlbum();
    expect(every.length).toBeGreaterThan(200);
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto('/photos/albums');
    const grid = page.getByRole('list', { name: 'Albums', exact: true });
    await grid.getByRole('link', { name: 'Roll 204 0 items' }).waitFor();
    expect(await grid.getByRole('listitem').count()).toBe(200);
    expect(await grid.getByText(every.at(-1)!.name, { exact: true }).count()).toBe(0);
    await button(page, 'More albums').scrollIntoViewIfNeeded();
    await screenshot(page, 'albums-more');
    await button(page, 'More albums').click();
    await grid.getByText(every.at(-1)!.name, { exact: true }).waitFor();
    expect(await grid.getByRole('listitem').count()).toBe(every.length);
    expect(await button(page, 'More albums').count()).toBe(0);

    await page.getByRole('link', { name: 'All photos' }).click();
    await tile(page, 'dawn.jpg').click({ modifiers: ['Control'] });
    await button(page, 'Add to album').click();
    const dialog = page.getByRole('dialog', { name: 'Add 1 item to an album' });
    await dialog.getByRole('option', { name: 'Roll 204 (0 items)' }).waitFor({ state: 'attached' });
    expect(await dialog.getByRole('option', { name: 'Roll 000 (0 items)' }).count()).toBe(0);
    await expectAccessible(page, 'add to album, more albums');
    await screenshot(page, 'albums-add-dialog-more');
    await dialog.getByRole('button', { name: 'More albums' }).click();
    await dialog.getByRole('option', { name: 'Roll 000 (0 items)' }).waitFor({ state: 'attached' });
    await dialog.getByLabel('Album', { exact: true }).selectOption({ label: 'Roll 000 (0 items)' });
    await dialog.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('Added to “Roll 000”').waitFor();
    expect((await everyAlbum()).find((a) => a.name === 'Roll 000')?.itemCount).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('past the first 200 albums shared with you, More albums shared with you shows the older ones', async () => {
    const friend = await seed.owner(t, undefined, 'Friend');
    for (let i = 0; i < 201; i++) {
      const { album } = await json(await friend.client.post('/api/albums', { name: `Trip ${String(i).padStart(3, '0')}` }));
      expect((await friend.client.post(`/api/albums/${album.id}/members`, { accountId: owner.id, role: 'viewer' })).status).toBe(201);
    }
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto('/photos/albums');
    const grid = page.getByRole('list', { name: 'Albums shared with you' });
    await grid.getByText('Trip 200', { exact: true }).waitFor();
    expect(await grid.getByRole('listitem').count()).toBe(200);
    await button(page, 'More albums shared with you').click();
    await grid.getByText('Trip 000', { exact: true }).waitFor();
    expect(await grid.getByRole('listitem').count()).toBe(201);
    expect(await button(page, 'More albums shared with you').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('an album named with a long word (no spaces): its name breaks in the page head, Share, Rename and Delete album stay on the screen (desktop, phone)', async () => {
    const name = `Summer${'0123456789'.repeat(12)}END`;
    const [photo] = await json(await owner.client.get('/api/files/photos'));
    const album = (await json(await owner.client.post('/api/albums', { name, ids: [photo.id] }))).album;
    for (const opts of [{}, { viewport: PHONE, dark: true, touch: true }]) {
      const { context, page, errors } = await signedInContext(browser, t.url, owner, opts);
      const width = page.viewportSize()!.width;
      await page.goto(`/photos/albums/${album.id}`);
      const title = page.getByRole('heading', { name, level: 1 });
      await title.waitFor();
      expect(await title.evaluate((el: any) => el.scrollWidth <= el.clientWidth)).toBe(true);
      for (const control of [title, button(page, 'Share'), button(page, 'Rename'), button(page, 'Delete album')]) {
        const box = (await control.boundingBox())!;
        expect(box.x + box.width).toBeLessThanOrEqual(width);
      }
      await screenshot(page, `album-long-name-${opts.dark ? 'dark-phone' : 'light-desktop'}`);
      expect(errors).toEqual([]);
      await context.close();
    }
    await owner.client.delete(`/api/albums/${album.id}`);
  });

  test('Remove from album and Use as cover, pressed again while the server answers, send nothing more', async () => {
    const photos = await json(await owner.client.get('/api/files/photos'));
    const album = (await json(await owner.client.post('/api/albums', { name: 'Twice', ids: photos.map((p: { id: string }) => p.id) })))
      .album;
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto(`/photos/albums/${album.id}`);
    await tile(page, 'dawn.jpg').click({ modifiers: ['Control'] });
    const cover = await holdRequests(page, `**/api/albums/${album.id}`, 'PATCH');
    await button(page, 'Use as cover').click();
    await eventually(() => cover.count() === 1);
    // Held: aria-disabled, which Playwright would wait out, so the press is forced as a person's would land.
    await button(page, 'Use as cover').click({ force: true });
    cover.release();
    await page.getByRole('status').filter({ hasText: 'Album cover set' }).first().waitFor();
    await apiSettled(page);
    expect(cover.count()).toBe(1);

    await tile(page, 'noon.jpg').click({ modifiers: ['Control'] });
    const toasts = await recordToasts(page);
    const removal = await holdRequests(page, `**/api/albums/${album.id}/items`, 'DELETE');
    await button(page, 'Remove from album').click();
    await eventually(() => removal.count() === 1);
    await button(page, 'Remove from album').click({ force: true });
    removal.release();
    await tile(page, 'noon.jpg').waitFor({ state: 'detached' });
    await apiSettled(page);
    expect(removal.count()).toBe(1);
    expect((await toasts()).filter((m) => m.includes('removed from the album'))).toEqual([
      '1 item removed from the album; they stay in your files',
    ]);
    expect(errors).toEqual([]);
    await context.close();
    await owner.client.delete(`/api/albums/${album.id}`);
  });
});
