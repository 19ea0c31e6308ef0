import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let owner: seed.SeededLogin;
beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  owner = await seed.owner(t);
  await upload(owner.client, 'notes.txt', 'some notes', { type: 'text/plain' });
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

const more = (page: Page) => page.locator('nav.tabs').getAttribute('data-more');
/** The keyboard hint shown beside the first menu entry that has one, after a right click (a long press) on the file. */
async function menuHints(page: Page) {
  await page.goto('/files');
  await page.getByRole('row', { name: /^notes\.txt,/ }).click({ button: 'right' });
  const menu = page.getByRole('menu');
  await menu.waitFor();
  const shown = await menu.locator('.menu-item kbd').first().isVisible();
  await page.keyboard.press('Escape');
  return shown;
}

/** Pixels between the file browser's header and its list. */
const bandAboveList = (page: Page) =>
  page.evaluate(() => {
    const d = (globalThis as any).document;
    return d.querySelector('.browser-body').getBoundingClientRect().top - d.querySelector('.browser-head').getBoundingClientRect().bottom;
  });

describe('on a phone', () => {
  test('the current tab opens whole, clear of the fade at the edge of the row of tabs (Sessions, Webhooks, the last one)', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner, { viewport: PHONE, touch: true, dark: true });
    for (const [path, name] of [
      ['/settings/sessions', 'Sessions'],
      ['/settings/webhooks', 'Webhooks'],
      ['/settings/appearance', 'Appearance'],
    ]) {
      await page.goto(path!);
      const tab = page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name });
      await eventually(async () => (await tab.getAttribute('aria-current')) === 'page');
      // The fade is 48px wide on each side that has more tabs (web/ui/page.css).
      const shown = await tab.evaluate((el: any) => {
        const list = el.closest('ul');
        const fade = (side: string) => (['both', side].includes(el.closest('nav').dataset.more) ? 48 : 0);
        const r = el.getBoundingClientRect();
        const box = list.getBoundingClientRect();
        return r.left >= box.left + fade('left') - 1 && r.right <= box.right - fade('right') + 1;
      });
      await screenshot(page, `settings-tab-${name}-phone`);
      expect(`${name}: ${shown}`).toBe(`${name}: true`);
    }
    expect(errors).toEqual([]);
    await context.close();
  });

  test('Settings tabs fade out where more of them are; touch menus leave keyboard hints out; a floating New button (a desktop keeps its toolbar)', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner, { viewport: PHONE, touch: true, dark: true });
    await page.goto('/settings');
    await page.getByRole('navigation', { name: 'Settings sections' }).or(page.locator('nav.tabs')).first().waitFor();
    await eventually(async () => (await more(page)) === 'right');
    await page.locator('nav.tabs ul').evaluate((el: any) => el.scrollTo(el.scrollWidth / 2 - el.clientWidth / 2, 0));
    await eventually(async () => (await more(page)) === 'both');
    await page.locator('nav.tabs ul').evaluate((el: any) => el.scrollTo(el.scrollWidth, 0));
    await eventually(async () => (await more(page)) === 'left');
    await expectAccessible(page, 'settings tabs, phone');
    await screenshot(page, 'settings-tabs-scrolled-dark-phone');
    expect(await menuHints(page)).toBe(false);

    // One floating New button stands for the toolbar's upload and new-folder buttons.
    await page.goto('/files');
    await page.getByRole('row', { name: /^notes\.txt,/ }).waitFor();
    expect(await page.getByRole('button', { name: 'Upload files' }).isVisible()).toBe(false);
    // With its buttons in the floating one, the idle toolbar leaves no empty band: the list starts under the header.
    expect(await page.getByRole('toolbar', { name: 'Folder actions' }).count()).toBe(0);
    expect(await bandAboveList(page)).toBeLessThan(16);
    await page.getByRole('button', { name: 'New', exact: true }).click();
    const menu = page.getByRole('menu', { name: 'New' });
    expect(await menu.getByRole('menuitem').allTextContents()).toEqual(['New folder', 'Upload files', 'Upload folder']);
    await expectAccessible(page, 'New menu, phone');
    await screenshot(page, 'files-new-menu-dark-phone');
    await menu.getByRole('menuitem', { name: 'New folder' }).click();
    const dialog = page.getByRole('dialog', { name: 'New folder' });
    await dialog.getByRole('textbox').fill('From the phone');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('row', { name: /^From the phone,/ }).waitFor();
    expect(errors).toEqual([]);
    await context.close();

    const viewer = await seed.subUser(t, { id: owner.id }, ['files.download']);
    const sub = await signedInContext(browser, t.url, viewer, { viewport: PHONE, touch: true });
    await sub.page.goto('/files');
    await sub.page.getByRole('row', { name: /^notes\.txt,/ }).waitFor();
    expect(await sub.page.getByRole('button', { name: 'New', exact: true }).count()).toBe(0);
    expect(await bandAboveList(sub.page)).toBeLessThan(16);
    await sub.context.close();

    const desktop = await signedInContext(browser, t.url, owner);
    await desktop.page.goto('/settings');
    await desktop.page.locator('nav.tabs').waitFor();
    expect(await more(desktop.page)).toBe('');
    expect(await menuHints(desktop.page)).toBe(true);
    await desktop.page.goto('/files');
    await desktop.page.getByRole('row', { name: /^notes\.txt,/ }).waitFor();
    expect(await desktop.page.getByRole('button', { name: 'New', exact: true }).isVisible()).toBe(false);
    expect(await desktop.page.getByRole('button', { name: 'Upload files' }).isVisible()).toBe(true);
    expect(await desktop.page.getByRole('toolbar', { name: 'Folder actions' }).isVisible()).toBe(true);
    await desktop.context.close();
  });

  test('a toast leaves the selection bar and the New button within reach: each is pressed where it shows (light, dark)', async () => {
    for (const dark of [false, true]) {
      const { context, page, errors } = await signedInContext(browser, t.url, owner, { viewport: PHONE, dark });
      await page.goto('/files');
      await page.getByRole('row', { name: /^notes\.txt,/ }).click();
      await page.getByText('1 selected').waitFor();
      await page.keyboard.press('Control+x');
      await page.getByRole('status').filter({ hasText: 'Open a folder and paste' }).waitFor();
      await screenshot(page, `phone-toast-selection-${dark ? 'dark' : 'light'}`);
      const bar = page.getByRole('toolbar', { name: 'Selection actions' });
      const reachable = async (name: string) =>
        bar.getByRole('button', { name, exact: true }).evaluate((el: any) => {
          const r = el.getBoundingClientRect();
          return el.contains(el.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
        });
      for (const name of ['Clear selection', 'Download', 'Delete']) expect(`${name}: ${await reachable(name)}`).toBe(`${name}: true`);
      await bar.getByRole('button', { name: 'Clear selection' }).click();
      await page.getByText('1 selected').waitFor({ state: 'detached' });
      const fab = page.getByRole('button', { name: 'New', exact: true });
      expect(
        await fab.evaluate((el: any) => {
          const r = el.getBoundingClientRect();
          return el.contains(el.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
        }),
      ).toBe(true);
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});

describe('uploads on a phone', () => {
  test('the New button stays pressable while the upload panel shows (an upload going, one failed)', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, owner, { viewport: PHONE, touch: true });
    await page.goto('/files');
    await page.getByRole('row', { name: /^notes\.txt,/ }).waitFor();
    // One upload held unanswered (still going), the other refused.
    await page.route('**/api/files/upload*', async (r) => {
      if ((r.request().postDataBuffer()?.toString() ?? '').includes('refused.txt'))
        return r.fulfill({ status: 507, contentType: 'application/json', body: JSON.stringify({ message: 'The disk is full.' }) });
      await new Promise(() => {});
    });
    const fab = page.getByRole('button', { name: 'New', exact: true });
    const chooser = page.waitForEvent('filechooser');
    await fab.click();
    await page.getByRole('menuitem', { name: 'Upload files' }).click();
    await (await chooser).setFiles([
      { name: 'going.txt', mimeType: 'text/plain', buffer: Buffer.from('going') },
      { name: 'refused.txt', mimeType: 'text/plain', buffer: Buffer.from('refused') },
    ]);
    await page.getByRole('region', { name: 'Uploads' }).getByText('The disk is full.').waitFor();
    await screenshot(page, 'phone-upload-panel-new-button');
    expect(
      await fab.evaluate((el: any) => {
        const r = el.getBoundingClientRect();
        return el.contains(el.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
      }),
    ).toBe(true);
    await fab.click();
    await page.getByRole('menu', { name: 'New' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the navigation drawer on a phone', () => {
  test('opened from the keyboard it takes the focus and keeps Tab inside; Escape closes it, focus back on its button (light, dark)', async () => {
    for (const dark of [false, true]) {
      const { context, page, errors } = await signedInContext(browser, t.url, owner, { viewport: PHONE, touch: true, dark });
      await page.goto('/files');
      await page.getByRole('row', { name: /^notes\.txt,/ }).waitFor();
      const opener = page.getByRole('button', { name: 'Open navigation' });
      await opener.focus();
      await page.keyboard.press('Enter');
      const drawer = page.locator('aside.sidebar');
      const inDrawer = () => drawer.evaluate((el: any) => el.contains((globalThis as any).document.activeElement));
      await eventually(inDrawer);
      expect(await page.evaluate(() => (globalThis as any).document.activeElement.getAttribute('aria-current'))).toBe('page');
      await screenshot(page, `drawer-open-${dark ? 'dark' : 'light'}-390`);
      await expectAccessible(page, `navigation drawer, ${dark ? 'dark' : 'light'}`);
      // Every link of the drawer, and then not the page behind it.
      for (let i = 0; i < 10; i++) {
        await page.keyboard.press('Tab');
        expect(await page.evaluate(() => (globalThis as any).document.activeElement.closest('.main-column'))).toBeNull();
      }
      await page.keyboard.press('Escape');
      await eventually(async () => !(await drawer.isVisible()));
      await eventually(() => opener.evaluate((el: any) => el === (globalThis as any).document.activeElement));
      expect(await opener.getAttribute('aria-expanded')).toBe('false');
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});
