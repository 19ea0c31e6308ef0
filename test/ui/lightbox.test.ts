import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Locator, Page } from 'playwright-core';
import {
  acquireBrowser,
  eventStreamOpen,
  expectAccessible,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
} from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, listAll, upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import { uploadPhoto } from '../helpers/photos.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let owner: seed.SeededLogin;
let album: { id: string };
const PHOTOS = 240;
const nameOf = (i: number) => `P${String(i + 1).padStart(4, '0')}.jpg`;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  owner = await seed.owner(t);
  album = await folder(owner.client, 'Album');
  for (let i = 0; i < PHOTOS; i += 24)
    await Promise.all(
      Array.from({ length: Math.min(24, PHOTOS - i) }, async (_, n) =>
        upload(owner.client, nameOf(i + n), await img.photo(i + n, 160, 120), { type: 'image/jpeg', parentId: album.id }),
      ),
    );
}, 300_000);
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

// Page source: the names of the items wholly inside the scroller's view, top to bottom.
const FULLY_SHOWN = `(() => {
  const box = document.querySelector('.scroller').getBoundingClientRect();
  return [...document.querySelectorAll('.scroller [data-index]')]
    .filter((el) => { const r = el.getBoundingClientRect(); return r.top >= box.top && r.bottom <= box.bottom && r.height > 0; })
    .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index))
    .map((el) => el.getAttribute('aria-label') || el.textContent);
})()`;

const scrollTop = (page: Page) => page.locator('.scroller').evaluate((el: any) => el.scrollTop as number);
// Page source: the name of the focused element and whether it is inside the list.
const FOCUSED = `(() => ({ label: (document.activeElement.getAttribute('aria-label') || document.activeElement.textContent || '').trim(), inList: !!document.activeElement.closest('.scroller') }))()`;

/**
 * Scrolls far down, opens the third photo wholly in view, moves three to the right, presses Esc: the
 * list is where it was, and focus is back on the photo that was opened.
 */
async function scrollOpenMoveEscape(page: Page, open: (tile: Locator) => Promise<void>) {
  await page.locator('.scroller').evaluate((el: any) => el.scrollTo(0, el.scrollHeight * 0.7));
  const names = await eventually(async () => {
    const shown = (await page.evaluate(FULLY_SHOWN)) as string[];
    return shown.length > 4 && shown;
  });
  const picked = names[2]!.match(/P\d{4}\.jpg/)![0];
  const before = await scrollTop(page);
  expect(before).toBeGreaterThan(2000);
  await open(
    page
      .getByRole('option', { name: new RegExp(picked.replace('.', '\\.')) })
      .or(page.getByRole('row', { name: new RegExp(picked.replace('.', '\\.')) })),
  );
  await page.getByRole('dialog', { name: picked }).waitFor();
  let shown = picked;
  for (let i = 0; i < 3; i++) {
    await page.keyboard.press('ArrowRight');
    const next = await eventually(async () => {
      const name = await page.getByRole('dialog').getByRole('heading').textContent();
      return name !== shown && name;
    });
    shown = next!;
  }
  expect(shown).not.toBe(picked);
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  expect(await scrollTop(page)).toBe(before);
  const focused = (await page.evaluate(FOCUSED)) as { label: string; inList: boolean };
  expect(focused.inList).toBe(true);
  expect(focused.label).toContain(picked);
}

describe('the lightbox', () => {
  test('Share, Get info and Delete beside Download, the file manager’s own actions; light, dark and phone', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto(`/files/${album.id}`);
    await page
      .getByRole('option', { name: /P0002\.jpg/ })
      .or(page.getByRole('row', { name: /P0002\.jpg/ }))
      .dblclick();
    const viewer = page.getByRole('dialog', { name: 'P0002.jpg' });
    await viewer.getByRole('img', { name: 'P0002.jpg' }).waitFor();
    const tools = viewer.locator('.preview-tools').getByRole('button');
    expect(await tools.evaluateAll((b: any[]) => b.map((el) => el.getAttribute('aria-label')))).toEqual(['Share', 'Get info', 'Delete']);
    expect(await viewer.getByRole('link', { name: 'Download' }).isVisible()).toBe(true);

    // Get info: the file manager's details, beside the picture.
    await viewer.getByRole('button', { name: 'Get info' }).click();
    await viewer.locator('.info-panel').getByText('Location').waitFor();
    expect(await viewer.getByRole('button', { name: 'Get info' }).getAttribute('aria-pressed')).toBe('true');
    await expectAccessible(page, 'lightbox with its tools and details');
    await screenshot(page, 'lightbox-tools-info-light-desktop');
    await viewer.getByRole('button', { name: 'Get info' }).click();
    await viewer.locator('.info-panel').waitFor({ state: 'detached' });
    await screenshot(page, 'lightbox-tools-light-desktop');

    // Share: the file manager's share dialog, over the lightbox; closing it comes back to the picture.
    await viewer.getByRole('button', { name: 'Share' }).click();
    const share = page.getByRole('dialog', { name: 'Share “P0002.jpg”' });
    await share.waitFor();
    // The arrows belong to the dialog on top: the lightbox stays on its photo.
    await page.keyboard.press('ArrowRight');
    await share.getByRole('button', { name: 'Close' }).click();
    await share.waitFor({ state: 'detached' });
    expect(await viewer.isVisible()).toBe(true);
    expect(await viewer.getByRole('img', { name: 'P0002.jpg' }).isVisible()).toBe(true);

    // Delete: to the trash, and the lightbox goes on to the next photo.
    await viewer.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'P0003.jpg' }).waitFor();
    await eventually(async () => (await listAll(owner.client, `/api/files?parentId=${album.id}`)).every((i) => i.name !== 'P0002.jpg'));
    expect((await listAll(owner.client, '/api/files/trash')).map((i) => i.name)).toContain('P0002.jpg');
    // The file manager's Undo, pressed above the lightbox: the photo is back in its folder.
    await page.getByRole('status').filter({ hasText: 'Moved “P0002.jpg” to the trash' }).getByRole('button', { name: 'Undo' }).click();
    await eventually(async () => (await listAll(owner.client, `/api/files?parentId=${album.id}`)).some((i) => i.name === 'P0002.jpg'));
    expect((await listAll(owner.client, '/api/files/trash')).map((i) => i.name)).not.toContain('P0002.jpg');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await page
      .getByRole('option', { name: /P0002\.jpg/ })
      .or(page.getByRole('row', { name: /P0002\.jpg/ }))
      .waitFor();
    expect(errors).toEqual([]);
    await context.close();

    for (const [name, options] of [
      ['lightbox-tools-dark-desktop', { dark: true }],
      ['lightbox-tools-dark-phone', { dark: true, viewport: PHONE, touch: true }],
      ['lightbox-tools-light-phone', { viewport: PHONE, touch: true }],
    ] as const) {
      const other = await signedInContext(browser, t.url, owner, options);
      await other.page.goto(`/files/${album.id}`);
      const tile = other.page.getByRole('option', { name: /P0005\.jpg/ }).or(other.page.getByRole('row', { name: /P0005\.jpg/ }));
      // A tap opens on a touch screen; a double click with a mouse.
      await ('touch' in options ? tile.tap() : tile.dblclick());
      const picture = other.page.getByRole('dialog', { name: 'P0005.jpg' }).getByRole('img', { name: 'P0005.jpg' });
      await eventually(async () => (await picture.evaluate((i: any) => i.complete && i.naturalWidth)) === 160);
      await screenshot(other.page, name);
      if (name === 'lightbox-tools-dark-phone') {
        await other.page.getByRole('button', { name: 'Get info' }).click();
        await other.page.locator('.info-panel').getByText('Location').waitFor();
        await expectAccessible(other.page, 'lightbox with details, dark, phone');
        await screenshot(other.page, 'lightbox-tools-info-dark-phone');
      }
      expect(other.errors).toEqual([]);
      await other.context.close();
    }
  }, 120_000);

  test('Esc returns the folder list to the same scroll position, focus on the photo opened', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto(`/files/${album.id}`);
    const toggle = page.getByRole('button', { name: 'List view' });
    if ((await toggle.getAttribute('aria-pressed')) !== 'true') await toggle.click();
    await eventually(async () => (await page.locator('.scroller [data-index]').count()) > 0);
    await eventually(async () => (await page.locator('.scroller').evaluate((el: any) => el.scrollHeight)) > 8000);
    await scrollOpenMoveEscape(page, (row) => row.dblclick());
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  test('Esc returns the Photos view to the same scroll position, focus on the photo opened', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto('/photos');
    await eventually(async () => (await page.locator('.scroller').evaluate((el: any) => el.scrollHeight)) > 6000);
    await scrollOpenMoveEscape(page, (tile) => tile.click());
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});

describe('focus after the photo opened or focused leaves', () => {
  test('trashed in the lightbox or on another device, Esc puts the focus on the photo now in its place, not the page', async () => {
    const o = await seed.owner(t);
    const ids: string[] = [];
    // Each waited for until its EXIF date is read, so the order is the taken one from the start.
    for (let i = 0; i < 4; i++)
      ids.push((await uploadPhoto(o.client, `F${i}.jpg`, await img.photo(i, 160, 120, `2024:05:1${i} 12:00:00`), 160)).id);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/photos');
    const grid = page.getByRole('listbox', { name: 'Photos' });
    const focusedName = () => page.evaluate('document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.tagName');
    // Newest taken first: F3, F2, F1, F0.
    await grid.getByRole('option', { name: 'F2.jpg', exact: true }).click();
    const viewer = page.getByRole('dialog', { name: 'F2.jpg' });
    await viewer.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'F1.jpg' }).waitFor();
    // By its label, not its role: behind the modal lightbox the grid is out of the accessibility tree.
    await grid.locator('[aria-label="F2.jpg"]').waitFor({ state: 'detached' });
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await eventually(async () => (await focusedName()) === 'F1.jpg');

    // The one opened goes to the trash from another device while it shows.
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'F1.jpg' }).waitFor();
    await eventStreamOpen(page);
    expect((await o.client.post('/api/files/delete', { ids: [ids[1]] })).status).toBe(200);
    await grid.locator('[aria-label="F1.jpg"]').waitFor({ state: 'detached' });
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await eventually(async () => (await focusedName()) === 'F0.jpg');
    await page.keyboard.press('ArrowLeft');
    await eventually(async () => (await focusedName()) === 'F3.jpg');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('in the grid, a focused photo trashed on another device or with the toolbar leaves the focus on the photo now in its place', async () => {
    const o = await seed.owner(t);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await uploadPhoto(o.client, `G${i}.jpg`, await img.photo(i, 160, 120, `2024:06:1${i} 12:00:00`), 160)).id);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/photos');
    const grid = page.getByRole('listbox', { name: 'Photos' });
    const focusedName = () => page.evaluate('document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.tagName');
    // Newest taken first: G3, G2, G1, G0.
    await grid.getByRole('option', { name: 'G3.jpg', exact: true }).focus();
    await page.keyboard.press('ArrowRight');
    await eventually(async () => (await focusedName()) === 'G2.jpg');
    await eventStreamOpen(page);
    expect((await o.client.post('/api/files/delete', { ids: [ids[2]] })).status).toBe(200);
    await grid.locator('[aria-label="G2.jpg"]').waitFor({ state: 'detached' });
    await eventually(async () => (await focusedName()) === 'G1.jpg');

    await page.keyboard.press(' ');
    await page.getByText('1 selected').waitFor();
    await page.getByRole('toolbar').getByRole('button', { name: 'Delete' }).focus();
    await page.keyboard.press('Enter');
    await grid.locator('[aria-label="G1.jpg"]').waitFor({ state: 'detached' });
    await eventually(async () => (await focusedName()) === 'G0.jpg');
    await page.keyboard.press('ArrowLeft');
    await eventually(async () => (await focusedName()) === 'G3.jpg');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('the photo shown, trashed on another device, leaves the lightbox: it goes on to the next one and counts one fewer', async () => {
    const o = await seed.owner(t);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await uploadPhoto(o.client, `H${i}.jpg`, await img.photo(i, 160, 120, `2024:07:1${i} 12:00:00`), 160)).id);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/photos');
    // Newest taken first: H3, H2, H1, H0.
    await page.getByRole('listbox', { name: 'Photos' }).getByRole('option', { name: 'H2.jpg', exact: true }).click();
    const counter = page.locator('.viewer-counter');
    await page.getByRole('dialog', { name: 'H2.jpg' }).waitFor();
    expect(await counter.textContent()).toStartWith('2 of 4');
    await eventStreamOpen(page);
    expect((await o.client.post('/api/files/delete', { ids: [ids[2]] })).status).toBe(200);
    await page.getByRole('dialog', { name: 'H1.jpg' }).waitFor();
    await eventually(async () => (await counter.textContent())!.startsWith('2 of 3'));
    await page.keyboard.press('End');
    await page.getByRole('dialog', { name: 'H0.jpg' }).waitFor();
    expect(await counter.textContent()).toStartWith('3 of 3');
    expect(errors).toEqual([]);
    await context.close();
  });
});
