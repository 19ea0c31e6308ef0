import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import {
  acquireBrowser,
  apiSettled,
  eventStreamOpen,
  expectAccessible,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
} from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, listAll, upload } from '../helpers/files.ts';
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

  test('at 390 px the selection bar fits the screen: every action is in it or under More, Delete and More within reach', async () => {
    for (const dark of [false, true]) {
      const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, dark, touch: true });
      await page.goto('/files');
      await page
        .getByRole('row', { name: /^report-03\.txt,/ })
        .getByRole('checkbox')
        .click();
      const bar = page.getByRole('toolbar', { name: 'Selection actions' });
      await bar.getByText('1 selected').waitFor();
      const [scrollWidth, clientWidth] = await bar.evaluate((el: any) => [el.scrollWidth, el.clientWidth]);
      expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
      for (const button of await bar.getByRole('button').all()) {
        const box = (await button.boundingBox())!;
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
      }
      const inBar = (await bar
        .getByRole('button')
        .evaluateAll((els: any[]) => els.map((e) => e.textContent.trim() || e.getAttribute('aria-label')))) as string[];
      expect(inBar).toContain('Delete');
      expect(inBar).toContain('More actions');
      await screenshot(page, `layout-selection-${dark ? 'dark' : 'light'}-390`);
      if (!dark) await expectAccessible(page, 'selection bar at 390 px');

      // What did not fit is under More, and works from there.
      await bar.getByRole('button', { name: 'More actions' }).click();
      const menu = page.getByRole('menu', { name: 'More actions' });
      for (const label of ['Move', 'Copy', 'Cut']) await menu.getByRole('menuitem', { name: label, exact: true }).waitFor();
      await screenshot(page, `layout-selection-more-${dark ? 'dark' : 'light'}-390`);
      await menu.getByRole('menuitem', { name: /^(Star|Unstar)/ }).click();
      await eventually(async () => {
        const starred = (await listAll(o.client, '/api/files/starred')).map((i) => i.name);
        return dark ? starred.length === 0 : starred.join() === 'report-03.txt';
      });
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test('at 390 px a toast naming a long file without spaces stays on the screen, its words broken, Undo and Dismiss within reach', async () => {
    const name = `${'Holiday_in_Lisbon_with_the_whole_family_'.repeat(3).slice(0, 96)}.txt`;
    await upload(o.client, name, 'long');
    const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, touch: true });
    await page.goto('/files');
    await page
      .getByRole('row', { name: new RegExp(`^${name.slice(0, 30)}`) })
      .getByRole('checkbox')
      .click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const toast = page.getByRole('status').filter({ hasText: 'to the trash' });
    await toast.waitFor();
    await screenshot(page, 'layout-toast-long-name-light-390');
    for (const part of [toast, toast.getByRole('button', { name: 'Undo' }), toast.getByRole('button', { name: 'Dismiss' })]) {
      const box = (await part.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    }
    await toast.getByRole('button', { name: 'Undo' }).click();
    await page.getByRole('row', { name: new RegExp(`^${name.slice(0, 30)}`) }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('at 390 px a shared name keeps room to be read, and its link badge sits beside it, not over it', async () => {
    const owner = await seed.owner(t);
    t.server.ctx.db.$client.query("UPDATE users SET name = 'Maria Fernanda Lopez Hernandez' WHERE id = ?").run(owner.id);
    const trip = await folder(owner.client, 'Lisbon trip 2024');
    await owner.client.post('/api/files/share', { ids: [trip.id], shared: true, expiry: '30d' });
    await owner.client.post(`/api/files/${trip.id}/members`, { email: o.email, role: 'editor' });
    for (const dark of [false, true]) {
      const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, dark, touch: true });
      await page.goto('/shared-with-me');
      const row = page.getByRole('row', { name: /^Lisbon trip 2024,/ });
      await row.waitFor();
      await screenshot(page, `layout-shared-with-me-${dark ? 'dark' : 'light'}-390`);
      const name = row.locator('.tname');
      const nameBox = (await name.boundingBox())!;
      const badgeBox = (await row.locator('.badge.shared').boundingBox())!;
      expect(nameBox.x + nameBox.width).toBeLessThanOrEqual(badgeBox.x);
      // Its start keeps at least six letters' room ("Lisbon"), its end ("p 2024") stays whole.
      const head = (await row.locator('.tname-head').boundingBox())!;
      expect(head.width).toBeGreaterThanOrEqual(6 * 8);
      const tail = (await row.locator('.tname-tail').boundingBox())!;
      expect(tail.x + tail.width).toBeLessThanOrEqual(nameBox.x + nameBox.width + 0.5);
      expect(await row.getByText('Maria Fernanda Lopez Hernandez').isVisible()).toBe(true);
      if (dark) await expectAccessible(page, 'Shared with me at 390 px');
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test('a right-to-left name reads in its own direction, whole or losing its middle (desktop and 390 px)', async () => {
    const short = 'מסמך חשוב.txt';
    const long = `${'תמונות מהחופשה בפורטוגל '.repeat(3)}סוף.txt`;
    await upload(o.client, short, 'x');
    await upload(o.client, long, 'x');
    for (const [name, opts] of [
      ['light-desktop', {}],
      ['dark-390', { dark: true, viewport: PHONE, touch: true }],
    ] as const) {
      const { context, page, errors } = await signedInContext(browser, t.url, o, opts);
      await page.goto('/files');
      for (const n of [short, long]) {
        const row = page.getByRole('row', { name: new RegExp(`^${n.replace('.', '\\.')},`) });
        await row.scrollIntoViewIfNeeded();
        // Its end (the tail, with the extension) is at the left of its start, as the name is read.
        const head = (await row.locator('.tname-head').boundingBox())!;
        const tail = (await row.locator('.tname-tail').boundingBox())!;
        expect(tail.x + tail.width).toBeLessThanOrEqual(head.x + 0.5);
      }
      await screenshot(page, `layout-rtl-names-${name}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test('at 390 px the last row scrolls clear of the floating New button and of the selection bar, in the list and the grid', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, touch: true });
    await page.goto('/files');
    // Nothing covers the point a finger would press: the element there is the control itself.
    const reachable = async (control: ReturnType<Page['locator']>) => {
      const box = (await control.boundingBox())!;
      return control.evaluate(
        (el: any, [x, y]) => el.contains((globalThis as any).document.elementFromPoint(x, y)),
        [box.x + box.width / 2, box.y + box.height / 2],
      );
    };
    const toBottom = () => page.locator('.scroller').evaluate((el: any) => el.scrollTo(0, el.scrollHeight));
    await page.getByRole('row', { name: /^report-00\.txt,/ }).waitFor();
    await toBottom();
    const row = page.locator('.scroller').getByRole('row').last();
    await eventually(() => reachable(row.getByRole('button', { name: /^More actions for / })));
    await screenshot(page, 'layout-last-row-clear-of-new-390');
    await row.getByRole('checkbox').click();
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByText('1 selected').waitFor();
    await toBottom();
    await eventually(() => reachable(row.getByRole('button', { name: /^More actions for / })));
    await screenshot(page, 'layout-last-row-clear-of-selection-390');
    await page.getByRole('button', { name: 'Clear selection' }).click();
    await page.getByRole('button', { name: 'Grid view' }).click();
    await page.getByRole('option', { name: /^report-00\.txt/ }).waitFor();
    await toBottom();
    await eventually(() => reachable(page.getByRole('option').last()));
    await screenshot(page, 'layout-last-tile-clear-of-new-390');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('Home when the server fails', () => {
  test('the reason is said once on the page with Try again, not as a toast per call (again on each file event)', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    let failing = true;
    await page.route(/\/api\/files\/(stats|recent)/, (r) =>
      failing
        ? r.fulfill({
            status: 503,
            contentType: 'application/json',
            body: JSON.stringify({ message: 'The database is locked; try again.' }),
          })
        : r.fallback(),
    );
    await page.goto('/');
    await page.getByRole('alert').filter({ hasText: 'The database is locked; try again.' }).waitFor();
    // Home reads again once its stream is live (that read fails too): Try again is what mends it.
    await eventStreamOpen(page);
    await apiSettled(page);
    expect(await page.getByText('The database is locked; try again.').count()).toBe(1);
    failing = false;
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('alert').waitFor({ state: 'detached' });
    expect(await page.locator('.stat-value').first().textContent()).not.toBe('–');
    expect(errors).toEqual([]);
    await context.close();
  });
});
