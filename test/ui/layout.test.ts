import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { acquireBrowser, apiSettled, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let o: seed.SeededLogin;

const WIDE = { width: 1440, height: 900 };

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  o = await seed.owner(t);
  for (let i = 0; i < 16; i++) await upload(o.client, `report-${String(i).padStart(2, '0')}.txt`, 'x'.repeat(100 * (i + 1)));
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

/** How many tiles the grid's first row holds, counted by where they are on screen. */
async function tilesInFirstRow(page: Page): Promise<number> {
  const tops = await page
    .getByRole('listbox')
    .getByRole('option')
    .evaluateAll((els: any[]) => els.map((e) => Math.round(e.getBoundingClientRect().top)));
  return tops.filter((y) => y === Math.min(...tops)).length;
}

describe('file manager layout at desktop and phone widths', () => {
  test('switching from list to grid at 1440 px fills the width with tiles at once, as a reload does', async () => {
    for (const dark of [false, true]) {
      const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: WIDE, dark });
      // A new profile starts in the list; the grid switched to from it is the first grid many people see.
      await page.goto('/files');
      await page.getByRole('row', { name: /^report-00\.txt,/ }).waitFor();
      await page.getByRole('button', { name: 'Grid view' }).click();
      await page.getByRole('option', { name: /^report-00\.txt/ }).waitFor();
      await apiSettled(page);
      const switched = await tilesInFirstRow(page);
      await screenshot(page, `layout-grid-after-list-${dark ? 'dark' : 'light'}-1440`);
      await page.reload();
      await page.getByRole('option', { name: /^report-00\.txt/ }).waitFor();
      await eventually(async () => (await tilesInFirstRow(page)) > 4, { message: 'the reloaded grid fills the width' });
      expect(switched).toBe(await tilesInFirstRow(page));
      await page.getByRole('button', { name: 'List view' }).click();
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});
