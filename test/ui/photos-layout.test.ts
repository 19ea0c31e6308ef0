import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { seedRows, upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let owner: seed.SeededLogin;
// Two days of one month: wide, tall and square pictures, at midday so no time zone moves a day.
const SHOTS = [
  ...Array.from({ length: 9 }, (_, i) => ({
    name: `beach-${i}.jpg`,
    taken: `2025:08:14 12:${10 + i}:00`,
    w: i % 3 === 0 ? 300 : 480,
    h: i % 3 === 0 ? 480 : 320,
  })),
  ...Array.from({ length: 3 }, (_, i) => ({ name: `town-${i}.jpg`, taken: `2025:08:12 12:${10 + i}:00`, w: 400, h: 400 })),
];

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  owner = await seed.owner(t);
  for (const [i, s] of SHOTS.entries()) await upload(owner.client, s.name, await img.photo(i, s.w, s.h, s.taken), { type: 'image/jpeg' });
  await eventually(async () => {
    const photos = await json(await owner.client.get('/api/files/photos'));
    expect(photos.filter((p: { width: number | null }) => p.width !== null)).toHaveLength(SHOTS.length);
  });
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

/** Each tile's box, by name, in the order shown. */
const boxes = (page: Page) =>
  page
    .getByRole('listbox', { name: 'Photos' })
    .getByRole('option')
    .evaluateAll((els: any[]) =>
      els.map((e) => {
        const r = e.getBoundingClientRect();
        return { name: e.getAttribute('aria-label'), x: r.left, y: Math.round(r.top), w: r.width, h: r.height };
      }),
    );

describe('Photos: days and rows', () => {
  test('day headers under the month with counts; rows at each photo’s own ratio, a full row as wide as the grid; the size control', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto('/photos');
    const grid = page.getByRole('listbox', { name: 'Photos' });
    await grid.getByRole('option', { name: 'beach-8.jpg', exact: true }).waitFor();
    expect(await page.locator('.photo-month:not(.sticky)').first().textContent()).toBe('August 2025 12 items');
    const days = await page.locator('.photo-day').allTextContents();
    expect(days).toHaveLength(2);
    expect(days[0]).toMatch(/14.*9 items$/);
    expect(days[1]).toMatch(/12.*3 items$/);

    let tiles = await boxes(page);
    const firstRow = tiles.filter((b) => b.y === tiles[0]!.y);
    expect(firstRow.length).toBeGreaterThan(1);
    // One height per row, widths at the pictures' ratios (tall 300×480, wide 480×320).
    expect(new Set(firstRow.map((b) => Math.round(b.h))).size).toBe(1);
    for (const b of firstRow) {
      const s = SHOTS.find((x) => x.name === b.name)!;
      expect(Math.abs(b.w / b.h - s.w / s.h)).toBeLessThan(0.05);
    }
    const gridBox = (await grid.boundingBox())!;
    const right = Math.max(...firstRow.map((b) => b.x + b.w));
    expect(gridBox.x + gridBox.width - right).toBeLessThan(24);

    // The date is said with each photo.
    const described = await grid
      .getByRole('option', { name: 'town-0.jpg', exact: true })
      .evaluate((e: any) => e.ownerDocument.getElementById(e.getAttribute('aria-describedby'))?.textContent);
    expect(described).toContain('2025');
    expect(described).toContain('12');

    // ↓ goes to the row below, to the tile under this one.
    await grid.getByRole('option', { name: tiles[0]!.name, exact: true }).focus();
    await page.keyboard.press('ArrowDown');
    const below = await page.evaluate('document.activeElement?.getAttribute("aria-label")');
    expect(tiles.find((b) => b.name === below)?.y).toBeGreaterThan(tiles[0]!.y);

    await expectAccessible(page, 'Photos by day');
    await screenshot(page, 'photos-days-light-desktop');
    const medium = firstRow[0]!.h;
    await page.getByLabel('Size').selectOption('large');
    await eventually(async () => ((await boxes(page))[0]?.h ?? 0) > medium);
    await page.getByLabel('Size').selectOption('small');
    await eventually(async () => ((await boxes(page))[0]?.h ?? medium) < medium);
    tiles = await boxes(page);
    expect(tiles.filter((b) => b.y === tiles[0]!.y).length).toBeGreaterThan(firstRow.length);
    await screenshot(page, 'photos-days-small-light-desktop');
    await page.getByLabel('Size').selectOption('medium');
    expect(errors).toEqual([]);
    await context.close();

    const phone = await signedInContext(browser, t.url, owner, { dark: true, viewport: PHONE, touch: true });
    await phone.page.goto('/photos');
    await phone.page.getByRole('option', { name: 'beach-8.jpg', exact: true }).waitFor();
    const phoneTiles = await boxes(phone.page);
    expect(Math.max(...phoneTiles.map((b) => b.x + b.w))).toBeLessThanOrEqual(PHONE.width);
    await expectAccessible(phone.page, 'Photos by day, dark, phone');
    await screenshot(phone.page, 'photos-days-dark-phone');
    expect(phone.errors).toEqual([]);
    await phone.context.close();
  }, 120_000);
});

describe('Photos: a library of more than one page', () => {
  test('every page is read in the background, so the count reaches the oldest photo without scrolling (a page asked for during the first load was dropped)', async () => {
    const many = await seed.owner(t);
    // Rows only (no bytes, no thumbnails: their tiles show the icon): 450 is the first page of 200 and a next one.
    const day = Date.UTC(2024, 5, 15, 12);
    seedRows(t, many.id, null, 450, (i) => ({
      name: `shot-${String(i).padStart(3, '0')}.jpg`,
      mimeType: 'image/jpeg',
      modifiedAt: day - i * 86_400_000,
    }));
    const { context, page, errors } = await signedInContext(browser, t.url, many);
    await page.goto('/photos');
    await page.getByText('450 photos', { exact: true }).waitFor({ timeout: 15_000 });
    expect(await page.getByText(/more on the way/).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});
