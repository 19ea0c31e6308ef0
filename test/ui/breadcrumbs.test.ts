import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import {
  acquireBrowser,
  clippedRingSides,
  DESKTOP,
  expectAccessible,
  hasFocus,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
} from '../helpers/browser.ts';
import { folder } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let owner: seed.SeededLogin;
const NAMES = [
  'Projects and archived documents of the family',
  'Level two with a rather long name indeed',
  'three',
  'four-without-any-spaces-at-all-in-this-folder-name',
  'five',
  'six',
  'The final folder with a long name that goes on',
];
const ids: string[] = [];
beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  owner = await seed.owner(t);
  for (const name of NAMES) ids.push((await folder(owner.client, name, ids.at(-1))).id);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

/** Each crumb's box (its chevron, its link, button or heading) and the pairs of them that overlap. */
const overlaps = (page: Page) =>
  page.evaluate(() => {
    const d = (globalThis as any).document;
    const boxes = [...d.querySelectorAll('.breadcrumbs li > *')]
      .map((el: any) => ({ what: el.textContent || el.tagName, r: el.getBoundingClientRect() }))
      .filter((b: any) => b.r.width > 0);
    const out: string[] = [];
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i]!.r, boxes[j]!.r];
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5) out.push(`${boxes[i]!.what} / ${boxes[j]!.what}`);
      }
    return out;
  });

describe('a deep path in the breadcrumb', () => {
  for (const [tag, viewport, dark] of [
    ['desktop', DESKTOP, false],
    ['phone', PHONE, true],
  ] as const)
    test(`${tag}: no crumb runs under another, the current folder keeps a readable width, and "…" lists the folders between`, async () => {
      const { context, page, errors } = await signedInContext(browser, t.url, owner, { viewport, dark, touch: tag === 'phone' });
      await page.goto(`/files/${ids.at(-1)}`);
      const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
      const current = crumbs.getByRole('heading', { name: NAMES.at(-1) });
      await current.waitFor();
      await screenshot(page, `breadcrumbs-deep-${tag}`);
      expect(await overlaps(page)).toEqual([]);
      expect((await current.boundingBox())!.width).toBeGreaterThan(tag === 'phone' ? 90 : 300);
      // The parent stays one step away.
      expect(await crumbs.getByRole('link', { name: 'six' }).isVisible()).toBe(true);

      const more = crumbs.getByRole('button', { name: '5 more folders in the path' });
      await more.focus();
      await page.keyboard.press('Enter');
      const menu = page.getByRole('menu', { name: 'Folders in the path' });
      const between = NAMES.slice(0, 5);
      // On a phone My files leaves the row to the path and heads the menu instead.
      expect(await menu.getByRole('menuitem').allTextContents()).toEqual(tag === 'phone' ? ['My files', ...between] : between);
      await expectAccessible(page, `the path's menu (${tag})`);
      await menu.getByRole('menuitem', { name: 'three' }).press('Enter');
      await page.waitForURL(`**/files/${ids[2]}`);
      await crumbs.getByRole('heading', { name: 'three' }).waitFor();
      // Four folders or fewer show whole.
      expect(await crumbs.getByRole('button').count()).toBe(0);
      expect(await crumbs.getByRole('link').allTextContents()).toEqual(['My files', ...NAMES.slice(0, 2)]);
      expect(await overlaps(page)).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    }, 60_000);

  test('the first crumb, reached with Tab, shows its whole focus ring (the row clips its overflow)', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner);
    await page.goto(`/files/${ids[1]}`);
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
    const first = crumbs.getByRole('link', { name: 'My files' });
    await first.waitFor();
    // Reached with the keyboard, so the browser shows the ring (:focus-visible).
    await first.focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    expect(await hasFocus(first)).toBe(true);
    await screenshot(page, 'breadcrumbs-first-focused');
    expect(await clippedRingSides(first)).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
