import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { acquireBrowser, DESKTOP, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, upload } from '../helpers/files.ts';
import { DAY, rowWithoutObject, strayObject } from '../helpers/stored-files.ts';
import * as seed from '../helpers/seed.ts';
import type { Permission } from '../../src/contract/permissions.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;
let o: seed.SeededLogin;
let photos: { id: string };

async function person(name: string, email: string, owner?: { id: string; permissions: Permission[] }): Promise<seed.SeededLogin> {
  const row = await t.server.ctx.services.accounts.createLogin({ email, password: 'correct horse battery', name, owner });
  return { id: row.id, email, password: 'correct horse battery', client: await seed.login(t, email) };
}
let empty: { id: string };

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  // People with names, as the pictures in docs/ show them.
  admin = await seed.admin(t, 'alex@home.lan');
  t.server.ctx.db.$client.query("UPDATE users SET name = 'Alex Morgan' WHERE id = ?").run(admin.id);
  o = await person('Maria Lopez', 'maria@home.lan');
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

// axe-core in light at desktop width and dark at phone width: each theme and each width is checked once.
const VARIANTS = [
  { tag: 'light-desktop', viewport: DESKTOP, dark: false, touch: false, axe: true },
  { tag: 'dark-desktop', viewport: DESKTOP, dark: true, touch: false, axe: false },
  { tag: 'light-phone', viewport: PHONE, dark: false, touch: true, axe: false },
  { tag: 'dark-phone', viewport: PHONE, dark: true, touch: true, axe: true },
];

describe('every screen, light and dark, desktop and phone', () => {
  test('home, a folder with long and non-Latin names, an empty folder, a shared folder, grid, trash, an error: screenshots, and axe-core in light at desktop width and dark at phone width', async () => {
    for (const v of VARIANTS) {
      const { context, page, errors } = await signedInContext(browser, t.url, o, v);
      const shots: [string, string, () => Promise<unknown>][] = [
        ['home', '/', () => page.getByRole('heading', { name: 'Recent files' }).waitFor()],
        ['folder', '/files', () => page.getByRole('row', { name: /^budget\.xlsx/ }).waitFor()],
        ['empty', `/files/${empty.id}`, () => page.getByText('This folder is empty.').waitFor()],
        ['shared-folder', `/files/${photos.id}`, () => page.getByRole('note').waitFor()],
        ['trash', '/trash', () => page.getByRole('row', { name: /^old draft\.docx/ }).waitFor()],
        ['shared', '/shared', () => page.getByRole('row', { name: /^Photos 2024/ }).waitFor()],
      ];
      for (const [name, path, ready] of shots) {
        await page.goto(path);
        await ready();
        if (v.axe) await expectAccessible(page, `${name} (${v.tag})`);
        await screenshot(page, `${name}-${v.tag}`);
      }
      if (v.touch) {
        // A long name loses its middle, not its end: the extension stays in view, the full name is the row's.
        await page.goto('/files');
        const long = page.getByRole('row', { name: /^holiday-2024-lisbon-portugal-with-the-whole-family-final-version-edited\.jpg, / });
        const tail = long.locator('.tname-tail');
        expect(await tail.textContent()).toBe('edited.jpg');
        const box = (await tail.boundingBox())!;
        expect(box.x + box.width).toBeLessThan(v.viewport.width - 100);
        expect(await long.locator('.tname-head').evaluate((el: any) => el.scrollWidth > el.clientWidth)).toBe(true);
        expect(await long.locator('.tname').getAttribute('title')).toBe(
          'holiday-2024-lisbon-portugal-with-the-whole-family-final-version-edited.jpg',
        );
      }

      // Grid view, remembered across reloads.
      await page.goto('/files');
      await page.getByRole('button', { name: 'Grid view' }).click();
      await page.getByRole('option', { name: /^budget\.xlsx/ }).waitFor();
      await page.reload();
      await page.getByRole('option', { name: /^budget\.xlsx/ }).waitFor();
      if (v.axe) await expectAccessible(page, `grid (${v.tag})`);
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
    // Six screens at two widths in two themes with axe-core: 28–36 s quiet, past a minute on a loaded two-core box.
  }, 180_000);
});

describe('settings and the admin console, light and dark, desktop and phone', () => {
  // Every settings and admin screen at two widths in two themes, with axe-core: over a minute on a loaded two-core box.
  test('every settings tab and admin screen: screenshots of each, axe-core in light at desktop width and dark at phone width', async () => {
    await person('Sam Lopez', 'sam@home.lan', { id: o.id, permissions: ['files.download', 'files.upload'] });
    await person('Document scanner', 'scanner@home.lan', { id: admin.id, permissions: ['files.upload'] });
    await person('Jordan Lee', 'jordan@home.lan');
    await o.client.post('/api/user/client-heartbeat', { appVersion: '1.4.2', platform: 'windows-x64' }, { 'X-Desktop-Client': '1' });
    await strayObject(t.server.ctx, { ageMs: 2 * DAY, size: 5000 });
    rowWithoutObject(t.server.ctx, o.id, { name: 'Tax return 2023 – scanned copy.pdf', size: 812_000, createdAt: Date.now() - 3 * DAY });
    await t.server.ctx.services.users.setStorageLimit(o.id, 50 * 1024 ** 3, 'cli');
    const screens: [string, string, seed.SeededLogin, (page: Page) => Promise<unknown>][] = [
      ['settings-profile', '/settings/profile', o, (p) => p.getByText('Member since').waitFor()],
      ['settings-security', '/settings/security', o, (p) => p.getByRole('button', { name: 'Enable two-factor authentication' }).waitFor()],
      [
        'settings-two-factor-setup',
        '/settings/security',
        o,
        async (p) => {
          await p.getByRole('button', { name: 'Enable two-factor authentication' }).click();
          await p.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
        },
      ],
      ['settings-sessions', '/settings/sessions', o, (p) => p.getByText('Current').waitFor()],
      [
        'settings-sub-users',
        '/settings/sub-users',
        o,
        (p) =>
          p
            .getByText(/^May: /)
            .first()
            .waitFor(),
      ],
      ['settings-appearance', '/settings/appearance', o, (p) => p.getByRole('radio', { name: 'Dark' }).waitFor()],
      ['admin-users', '/admin/users', admin, (p) => p.getByText('Administrator').waitFor()],
      [
        'admin-instance',
        '/admin/instance',
        admin,
        (p) => eventually(async () => expect(await p.getByRole('textbox', { name: 'Maximum upload size' }).inputValue()).toBe('10G')),
      ],
      [
        'admin-orphans',
        '/admin/orphans',
        admin,
        async (p) => {
          await p.getByRole('button', { name: 'Start scan' }).click();
          await p.getByText('/Tax return 2023 – scanned copy.pdf').waitFor();
          await p.getByRole('checkbox', { name: /^Select all: Stored/ }).check();
        },
      ],
      ['admin-backups', '/admin/backups', admin, (p) => p.getByText('No backup has run yet.').waitFor()],
      ['admin-clients', '/admin/clients', admin, (p) => p.getByText('1.4.2').waitFor()],
      ['admin-about', '/admin/about', admin, (p) => p.getByText('Update checks are not configured').waitFor()],
      ['admin-refused', '/admin/users', o, (p) => p.getByRole('heading', { name: 'The admin console is not available to you' }).waitFor()],
    ];
    for (const width of [DESKTOP, PHONE]) {
      const phone = width === PHONE;
      const pages = new Map<seed.SeededLogin, Awaited<ReturnType<typeof signedInContext>>>();
      for (const login of [o, admin]) pages.set(login, await signedInContext(browser, t.url, login, { viewport: width, touch: phone }));
      for (const [name, path, login, ready] of screens) {
        const { page } = pages.get(login)!;
        await page.emulateMedia({ colorScheme: 'light' });
        await page.goto(path);
        await ready(page);
        for (const dark of [false, true]) {
          await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
          // Light at desktop width, dark at phone width: each theme and each width meets axe-core once.
          if (dark === phone) await expectAccessible(page, `${name} (${dark ? 'dark' : 'light'}, ${phone ? 'phone' : 'desktop'})`);
          await screenshot(page, `${name}-${dark ? 'dark' : 'light'}-${phone ? 'phone' : 'desktop'}`);
        }
      }
      for (const { context, errors } of pages.values()) {
        expect(errors).toEqual([]);
        await context.close();
      }
    }
  }, 180_000);
});
