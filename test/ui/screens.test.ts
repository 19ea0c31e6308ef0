import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { acquireBrowser, DESKTOP, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { folder, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let o: seed.SeededLogin;
let photos: { id: string };
let empty: { id: string };

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  await seed.admin(t);
  o = await seed.owner(t);
  photos = await folder(o.client, 'Photos 2024');
  empty = await folder(o.client, 'Empty folder');
  await folder(o.client, 'Документы и договоры');
  await folder(o.client, 'Φωτογραφίες οικογένειας');
  const names = [
    'holiday-2024-lisbon-portugal-with-the-whole-family-final-version-edited.jpg',
    'Quarterly report Q3.pdf',
    'budget.xlsx',
    'presentation.pptx',
    'notes.md',
    'backup.tar.gz',
    'main.ts',
    'song.mp3',
    'clip.mp4',
    'Überweisung.txt',
    'README',
  ];
  for (const [n, name] of names.entries()) await upload(o.client, name, 'x'.repeat(1000 * (n + 1) ** 3));
  for (let i = 0; i < 6; i++) await upload(o.client, `IMG_${2040 + i}.jpg`, 'y'.repeat(2_000_000 + i), { parentId: photos.id });
  const star = await upload(o.client, 'starred-plan.md', 'plan');
  await o.client.post('/api/files/star', { ids: [star.id], starred: true });
  await o.client.post('/api/files/share', { ids: [photos.id], shared: true, expiry: '30d' });
  const gone = await upload(o.client, 'old draft.docx', 'old');
  await o.client.post('/api/files/delete', { ids: [gone.id] });
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

const VARIANTS = [
  { tag: 'light-desktop', viewport: DESKTOP, dark: false, touch: false },
  { tag: 'dark-desktop', viewport: DESKTOP, dark: true, touch: false },
  { tag: 'light-phone', viewport: PHONE, dark: false, touch: true },
  { tag: 'dark-phone', viewport: PHONE, dark: true, touch: true },
];

describe('every screen, light and dark, desktop and phone', () => {
  test('home, a folder with long and non-Latin names, an empty folder, a shared folder, grid, trash, an error: screenshots and axe-core', async () => {
    for (const v of VARIANTS) {
      const { context, page, errors } = await signedInContext(browser, t.url, o, v);
      const shots: [string, string, () => Promise<unknown>][] = [
        ['home', '/', () => page.getByRole('heading', { name: 'Recent files' }).waitFor()],
        ['folder', '/files', () => page.getByRole('row', { name: /^budget\.xlsx/ }).waitFor()],
        ['empty', `/files/${empty.id}`, () => page.getByText('This folder is empty.').waitFor()],
        ['shared-folder', `/files/${photos.id}`, () => page.getByRole('note').waitFor()],
        ['trash', '/trash', () => page.getByRole('row', { name: /^old draft\.docx/ }).waitFor()],
        ['shared', '/shared', () => page.getByRole('row', { name: /^Photos 2024/ }).waitFor()],
        ['settings', '/settings', () => page.getByRole('heading', { name: 'Appearance' }).waitFor()],
      ];
      for (const [name, path, ready] of shots) {
        await page.goto(path);
        await ready();
        await expectAccessible(page, `${name} (${v.tag})`);
        await screenshot(page, `${name}-${v.tag}`);
      }
      // Grid view, remembered across reloads.
      await page.goto('/files');
      await page.getByRole('button', { name: 'Grid view' }).click();
      await page.getByRole('option', { name: /^budget\.xlsx/ }).waitFor();
      await page.reload();
      await page.getByRole('option', { name: /^budget\.xlsx/ }).waitFor();
      await expectAccessible(page, `grid (${v.tag})`);
      await screenshot(page, `grid-${v.tag}`);
      await page.getByRole('button', { name: 'List view' }).click();

      // Selecting: on a phone the actions sit in a bar at the bottom.
      await page
        .getByRole('row', { name: /^budget\.xlsx/ })
        .getByRole('checkbox')
        .click();
      await page.getByText('1 selected').waitFor();
      const bar = await page.getByRole('toolbar', { name: 'Selection actions' }).boundingBox();
      if (v.touch) expect(bar!.y + bar!.height).toBeGreaterThan(v.viewport.height - 5);
      await screenshot(page, `selection-${v.tag}`);

      if (v.touch) {
        expect(await page.getByRole('link', { name: 'Trash' }).isVisible()).toBe(false);
        await page.getByRole('button', { name: 'Open navigation' }).click();
        await page.getByRole('link', { name: 'Trash' }).waitFor();
        await screenshot(page, `navigation-${v.tag}`);
        await page.getByRole('link', { name: 'Trash' }).click();
        await page.getByRole('heading', { name: 'Trash' }).waitFor();
      }

      // An error state: the listing fails; the page says so and offers to try again.
      await page.route('**/api/files?*', (route) =>
        route.fulfill({
          status: 503,
          contentType: 'application/json',
          body: JSON.stringify({ message: 'Background worker queue is unavailable' }),
        }),
      );
      await page.goto(`/files/${photos.id}`);
      await page.getByRole('alert').filter({ hasText: 'Background worker queue is unavailable' }).waitFor();
      await page.getByRole('button', { name: 'Try again' }).waitFor();
      await screenshot(page, `error-${v.tag}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});
