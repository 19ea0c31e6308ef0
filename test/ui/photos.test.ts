import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, listAll, upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let owner: seed.SeededLogin;
// Newest month first; midday on days 10 and on, so no time zone moves a photo into another month.
const MONTHS = [
  { label: 'November 2026', exif: '2026:11', tag: 'nov' },
  { label: 'October 2026', exif: '2026:10', tag: 'oct' },
  { label: 'July 2025', exif: '2025:07', tag: 'jul' },
  { label: 'March 2024', exif: '2024:03', tag: 'mar' },
];
const PER_MONTH = 14;
// Newest taken first: within a month, the later day first.
const ORDER = MONTHS.flatMap((m) => Array.from({ length: PER_MONTH }, (_, n) => `${m.tag}-${String(PER_MONTH - n).padStart(2, '0')}.jpg`));

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  owner = await seed.owner(t);
  const trip = await folder(owner.client, 'Trips');
  const uploads = MONTHS.flatMap((m, mi) =>
    Array.from({ length: PER_MONTH }, (_, n) => async () => {
      const day = String(10 + n + 1).padStart(2, '0');
      const bytes = await img.photo(mi * PER_MONTH + n, 480, 360, `${m.exif}:${day} 12:00:00`);
      return upload(owner.client, `${m.tag}-${String(n + 1).padStart(2, '0')}.jpg`, bytes, { type: 'image/jpeg', parentId: trip.id });
    }),
  );
  for (let i = 0; i < uploads.length; i += 14) await Promise.all(uploads.slice(i, i + 14).map((u) => u()));
  await upload(owner.client, 'notes.txt', 'not a picture', { type: 'text/plain' });
  await upload(owner.client, 'report.pdf', img.pdf(1), { type: 'application/pdf' });
  // Their EXIF times are known once their thumbnails are made (in the background).
  await eventually(async () => (await listAll(owner.client, '/api/files/photos')).map((p) => p.name).join() === ORDER.join(), {
    timeoutMs: 120_000,
  });
}, 300_000);
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

// Page source: whether the photos on screen all have their pixels.
const TILES_PAINTED = `(() => {
  const shown = [...document.querySelectorAll('.photo img.thumb')].filter((i) => {
    const r = i.getBoundingClientRect();
    return r.bottom > 0 && r.top < innerHeight;
  });
  return shown.length > 0 && shown.every((i) => i.complete && i.naturalWidth > 0);
})()`;

// evaluateAll, not evaluate: a photo the virtualised grid has not rendered is not in view, rather than waited for (30 s).
const inView = (page: Page, name: string) =>
  page.getByRole('option', { name, exact: true }).evaluateAll((els: any[]) =>
    els.some((el) => {
      const r = el.getBoundingClientRect();
      const box = el.closest('.scroller').getBoundingClientRect();
      return r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
    }),
  );

/** Scrolls the grid from the top until the photo is rendered (the grid is virtualised, a day header over each day). */
async function reveal(page: Page, name: string) {
  const option = page.getByRole('listbox', { name: 'Photos' }).getByRole('option', { name, exact: true });
  await page.locator('.photo-grid').evaluate((el: any) => el.scrollTo(0, 0));
  await eventually(async () => {
    if ((await option.count()) > 0) return true;
    await page.locator('.photo-grid').evaluate((el: any) => el.scrollBy(0, 300));
    return false;
  });
  await option.scrollIntoViewIfNeeded();
  return option;
}

describe('Photos', () => {
  test('the sidebar view: every photo by month, newest first, a sticky month and the scrubber; light, dark and phone', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto('/files');
    await page.getByRole('link', { name: 'Photos', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/photos');
    const grid = page.getByRole('listbox', { name: 'Photos' });
    await grid.getByRole('option', { name: 'nov-14.jpg', exact: true }).waitFor();
    await eventually(async () => (await page.evaluate(TILES_PAINTED)) === true);
    // Newest first; the text file and the PDF are not photos.
    const shown = await grid.getByRole('option').evaluateAll((els: any[]) => els.map((e) => e.getAttribute('aria-label')));
    expect(shown).toEqual(ORDER.slice(0, shown.length));
    expect(shown.length).toBeLessThan(ORDER.length);
    const scrubber = page.getByRole('navigation', { name: 'Jump to month' });
    expect(await scrubber.getByRole('button').allTextContents()).toEqual(MONTHS.map((m) => m.label));
    expect(await page.locator('.photo-month.sticky').textContent()).toBe('November 2026');
    await expectAccessible(page, 'Photos');
    await screenshot(page, 'photos-light-desktop');

    // The scrubber jumps to a month not on screen; the sticky header names it.
    expect(await inView(page, 'jul-14.jpg')).toBe(false);
    await scrubber.getByRole('button', { name: 'July 2025' }).click();
    await eventually(() => inView(page, 'jul-14.jpg'));
    await eventually(async () => (await page.locator('.photo-month.sticky').textContent()) === 'July 2025');
    expect(await scrubber.getByRole('button', { name: 'July 2025' }).getAttribute('aria-current')).toBe('true');
    await eventually(async () => (await page.evaluate(TILES_PAINTED)) === true);
    await screenshot(page, 'photos-jumped-light-desktop');
    expect(errors).toEqual([]);
    await context.close();

    const dark = await signedInContext(browser, t.url, owner, { dark: true, viewport: PHONE, touch: true });
    await dark.page.goto('/photos');
    await dark.page.getByRole('option', { name: 'nov-14.jpg', exact: true }).waitFor();
    await eventually(async () => (await dark.page.evaluate(TILES_PAINTED)) === true);
    await expectAccessible(dark.page, 'Photos, dark, phone');
    await screenshot(dark.page, 'photos-dark-phone');
    expect(dark.errors).toEqual([]);
    await dark.context.close();
  }, 120_000);

  test('a click opens the lightbox, which moves through the Photos order; selection gets the file actions', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto('/photos');
    const grid = page.getByRole('listbox', { name: 'Photos' });
    await (await reveal(page, 'nov-01.jpg')).click();
    const viewer = page.getByRole('dialog', { name: 'nov-01.jpg' });
    await viewer.getByRole('img', { name: 'nov-01.jpg' }).waitFor();
    // The next photo in the Photos order is the newest of the month before, not the folder's next file.
    await page.keyboard.press('ArrowRight');
    await page.getByRole('dialog', { name: 'oct-14.jpg' }).getByRole('img', { name: 'oct-14.jpg' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    await (await reveal(page, 'nov-14.jpg')).click({ modifiers: ['Control'] });
    await (await reveal(page, 'nov-12.jpg')).click({ modifiers: ['Control'] });
    expect(await grid.getByRole('option', { selected: true }).count()).toBe(2);
    const toolbar = page.getByRole('toolbar', { name: 'Selection actions' });
    await toolbar.getByText('2 selected').waitFor();
    await screenshot(page, 'photos-selection-light-desktop');
    await toolbar.getByRole('button', { name: 'Star' }).click();
    await eventually(async () => {
      const starred = (await listAll(owner.client, '/api/files/photos')).filter((p) => p.starred).map((p) => p.name);
      return starred.join() === 'nov-14.jpg,nov-12.jpg';
    });
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
  test("a photo's details say when it was taken, read from the picture, beside when the file was modified; light and dark", async () => {
    for (const [opts, tag] of [
      [{}, 'light-desktop'],
      [{ dark: true, viewport: PHONE, touch: true }, 'dark-phone'],
    ] as const) {
      const { context, page, errors } = await signedInContext(browser, t.url, owner, opts);
      await page.goto('/photos');
      await (await reveal(page, 'nov-01.jpg')).click();
      const viewer = page.getByRole('dialog', { name: 'nov-01.jpg' });
      await viewer.getByRole('img', { name: 'nov-01.jpg' }).waitFor();
      await viewer.getByRole('button', { name: 'Get info' }).click();
      const details = viewer.locator('.info-panel');
      await details.getByText('Location').waitFor();
      // nov-01.jpg says 2026:11:11 12:00:00; it was uploaded by this test, on another day.
      expect(await details.locator('dt:text-is("Taken") + dd').textContent()).toContain('November 11, 2026');
      expect(await details.locator('dt:text-is("Modified") + dd').textContent()).not.toContain('November 11, 2026');
      await screenshot(page, `photos-details-taken-${tag}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  }, 120_000);
});
