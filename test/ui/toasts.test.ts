import { describe, expect, test } from 'bun:test';
import { generate } from 'otplib';
import type { Browser, Locator, Page } from 'playwright-core';
import { apiSettled, eventStreamOpen, expectAccessible, hasFocus, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, listAll, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { DAY, strayObjectsFast } from '../helpers/stored-files.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;

serverAndBrowser((s) => ({ t, browser, admin } = s));

const CONFIGS = [
  ['light-desktop', {}],
  ['dark-desktop', { dark: true }],
  ['light-phone', { viewport: PHONE }],
] as const;

/** Whether the centre of what `target` finds is what a press there reaches (nothing, a toast included, over it). */
const reachable = (target: Locator) =>
  target.evaluate((el: any) => {
    const r = el.getBoundingClientRect();
    return el.contains(el.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
  });

/**
 * What a toast over `dialog` hides, read at once: how many toasts show, whether one overlaps the dialog's box at all,
 * and the dialog's buttons whose centre a toast takes (a press there would reach the toast).
 */
const overDialog = (dialog: Locator) =>
  dialog.evaluate((d: any) => {
    const doc = d.ownerDocument;
    const toasts = [...doc.querySelectorAll('.toast')];
    const box = d.getBoundingClientRect();
    const overlaps = toasts.some((el: any) => {
      const r = el.getBoundingClientRect();
      return r.left < box.right && r.right > box.left && r.top < box.bottom && r.bottom > box.top;
    });
    const covered = [...d.querySelectorAll('button')]
      .filter((b: any) => !b.closest('.toast'))
      .filter((b: any) => {
        const r = b.getBoundingClientRect();
        return doc.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)?.closest('.toast');
      })
      .map((b: any) => b.textContent.trim() || b.ariaLabel);
    return { toasts: toasts.length, overlaps, covered };
  });

/** The page's clock, installed before it loads (see `pauseClock`). */
const installClock = (page: Page) => page.clock.install();

/** Stops the page's timers, so a toast stays until the test moves time on (a loaded machine cannot outrun it). */
async function pauseClock(page: Page): Promise<void> {
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 10_000);
}

/** A toast that the server causes on any screen: another account shares a folder with `to`, once `page` hears of it. */
async function shareWith(page: Page, to: seed.SeededLogin, name: string): Promise<void> {
  await eventStreamOpen(page);
  const sharer = await seed.owner(t);
  const f = await folder(sharer.client, name);
  await sharer.client.post(`/api/files/${f.id}/members`, { email: to.email, role: 'viewer' });
}

/** The toast with `text` and `part` do not overlap, and `part`'s button takes a press; read at once, while the toast shows. */
async function clear(page: Page, text: string, part: string, button: string) {
  return page.evaluate(
    ([text, part, button]) => {
      const d = (globalThis as any).document;
      const toast = [...d.querySelectorAll('.toast')].find((e: any) => e.textContent.includes(text));
      if (!toast) return 'the toast is gone';
      const a = toast.getBoundingClientRect();
      const b = d.querySelector(part).getBoundingClientRect();
      const overlap = a.left < b.right && a.right > b.left && a.top < b.bottom && a.bottom > b.top;
      const el = [...d.querySelectorAll(`${part} button`)].find((e: any) => e.textContent.trim() === button || e.ariaLabel === button);
      const r = el.getBoundingClientRect();
      const pressable = el.contains(d.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
      return overlap ? 'the toast covers the bar' : pressable ? 'clear' : 'the button is covered';
    },
    [text, part, button],
  );
}

describe('toasts', () => {
  test("a toast shown while a modal dialog is open is above it: its Undo is pressed there, the dialog's field keeps the focus, the result is announced inside the dialog", async () => {
    const o = await seed.owner(t);
    for (const [name, opts] of CONFIGS) {
      const file = `draft-${name}.txt`;
      await upload(o.client, file, 'words');
      const { context, page, errors } = await signedInContext(browser, t.url, o, opts);
      await page.goto('/files');
      await page.getByRole('row', { name: new RegExp(`^${file.replace('.', '\\.')},`) }).click();
      await page.keyboard.press('Delete');
      const moved = page.getByRole('status').filter({ hasText: `Moved “${file}” to the trash` });
      await moved.waitFor();
      await page.keyboard.press('Escape');
      // Shift+N, the New folder key: the same on a phone, where the button is in the New menu.
      await page.keyboard.press('Shift+N');
      const dialog = page.getByRole('dialog', { name: 'New folder' });
      const field = dialog.getByLabel('Name');
      await eventually(async () => expect(await hasFocus(field)).toBe(true));
      const undo = moved.getByRole('button', { name: 'Undo' });
      expect(await reachable(undo)).toBe(true);
      await screenshot(page, `toast-over-dialog-${name}`);
      await undo.click();
      // Said from inside the dialog, where a screen reader keeps while it is open.
      await dialog
        .getByRole('region', { name: 'Notifications' })
        .getByRole('status')
        .filter({ hasText: 'Moved back from the trash' })
        .waitFor();
      expect(await hasFocus(field)).toBe(true);
      await eventually(async () => expect((await listAll(o.client, '/api/files')).map((i) => i.name)).toContain(file));
      await expectAccessible(page, 'a toast over a dialog');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      // Back on the page with the dialog closed: the next toast shows there.
      await page.getByRole('row', { name: new RegExp(`^${file.replace('.', '\\.')},`) }).waitFor();
      expect(await page.locator('dialog .toasts').count()).toBe(0);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test("a toast shown while a dialog is open covers none of its controls: Share's Copy link, at desktop and phone width", async () => {
    const o = await seed.owner(t);
    for (const [name, opts] of CONFIGS) {
      const box = `Trip ${name}`;
      await folder(o.client, box);
      const { context, page, errors } = await signedInContext(browser, t.url, o, opts);
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await installClock(page);
      await page.goto('/files');
      await page.getByRole('row', { name: new RegExp(`^${box},`) }).click({ button: 'right' });
      await page
        .getByRole('menuitem', { name: /^Share/ })
        .first()
        .click();
      const dialog = page.getByRole('dialog', { name: `Share “${box}”` });
      await dialog.getByRole('tab', { name: 'Link' }).click();
      await dialog.getByRole('button', { name: 'Create link' }).click();
      const copy = dialog.getByRole('button', { name: 'Copy link' });
      await copy.waitFor();
      await apiSettled(page);
      const before = await dialog.boundingBox();
      await pauseClock(page);
      await copy.click();
      await page.getByRole('status').filter({ hasText: 'Link copied' }).waitFor();
      // The share dialog is as tall as the window allows: below 800 px it makes room for the toast at its foot.
      expect(await overDialog(dialog)).toEqual({ toasts: 1, overlaps: false, covered: [] });
      await screenshot(page, `toast-clear-of-dialog-${name}`);
      // Gone after its time: the dialog takes back the room it made.
      await page.clock.fastForward(5000);
      await page.getByRole('status').filter({ hasText: 'Link copied' }).waitFor({ state: 'detached' });
      expect(await dialog.boundingBox()).toEqual(before);
      await dialog.getByRole('button', { name: 'Done' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test('a press on the page’s empty space (which focuses its main region) leaves the next toast at the window’s foot', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/settings/app-passwords');
    await page.getByRole('button', { name: 'Copy address' }).waitFor();
    const main = page.locator('main');
    const box = (await main.boundingBox())!;
    await page.mouse.click(box.x + box.width - 8, box.y + box.height - 8);
    expect(await hasFocus(main)).toBe(true);
    const text = 'After a press on nothing';
    await shareWith(page, o, text);
    const shown = page.getByRole('status').filter({ hasText: text });
    await shown.waitFor();
    const toastBox = (await shown.boundingBox())!;
    expect(toastBox.y + toastBox.height).toBeGreaterThan(page.viewportSize()!.height - 40);
    expect(errors).toEqual([]);
    await context.close();
  });

  test("on a phone with a dialog open, the toast is not lifted above the New button behind the dialog's backdrop", async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE });
    await page.goto('/files');
    const fab = page.getByRole('button', { name: 'New', exact: true });
    await fab.waitFor();
    await page.keyboard.press('Shift+N');
    const dialog = page.getByRole('dialog', { name: 'New folder' });
    await dialog.getByLabel('Name').waitFor();
    const text = 'Behind the backdrop';
    await shareWith(page, o, text);
    const shown = page.getByRole('status').filter({ hasText: text });
    await shown.waitFor();
    const [toastBox, fabBox] = [(await shown.boundingBox())!, (await fab.boundingBox())!];
    // At the window's foot as with nothing docked there, over the New button it need not clear.
    expect(toastBox.y + toastBox.height).toBeGreaterThan(fabBox.y);
    expect(await overDialog(dialog)).toEqual({ toasts: 1, overlaps: false, covered: [] });
    await screenshot(page, 'toast-dialog-open-phone');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a toast stays while the pointer is on it or the focus is in it, and leaves after its time once they go; one that appears under a resting pointer still leaves', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await installClock(page);
    await page.goto('/settings/app-passwords');
    const copy = page.getByRole('button', { name: 'Copy address' });
    await copy.waitFor();
    await apiSettled(page);
    await pauseClock(page);
    const copied = page.getByRole('status').filter({ hasText: 'Address copied' });
    const leaves = async () => {
      await page.clock.fastForward(5000);
      await copied.waitFor({ state: 'detached' });
    };
    const stays = async () => {
      await page.clock.fastForward(60_000);
      expect(await copied.isVisible()).toBe(true);
    };

    // The pointer comes onto the toast: it stays; once the pointer is off it, it leaves after its time.
    await copy.click();
    await copied.waitFor();
    const at = (await copied.boundingBox())!;
    const [x, y] = [at.x + at.width / 2, at.y + at.height / 2];
    await page.mouse.move(x, y, { steps: 4 });
    await stays();
    await page.mouse.move(x, 100, { steps: 4 });
    await leaves();

    // The focus goes into the toast (to its Dismiss button): it stays; once the focus is out, it leaves after its time.
    await copy.click();
    await copied.getByRole('button', { name: 'Dismiss' }).focus();
    await stays();
    await copy.focus();
    await leaves();

    // The pointer rests where the next toast appears (the page's hover moves onto it): it did not come onto the toast.
    await page.mouse.move(x, y, { steps: 4 });
    await copy.focus();
    await page.keyboard.press('Enter');
    await copied.waitFor();
    await eventually(async () => expect(await copied.evaluate((e: any) => e.matches(':hover'))).toBe(true));
    await leaves();
    expect(errors).toEqual([]);
    await context.close();
  });

  test("a toast leaves Admin → Orphans' action bar within reach, at desktop and phone width", async () => {
    strayObjectsFast(t.server.ctx, 40, 2 * DAY);
    for (const [name, opts] of CONFIGS) {
      const { context, page, errors } = await signedInContext(browser, t.url, admin, opts);
      await page.goto('/admin/orphans');
      await page.getByLabel('Grace window (minutes)').fill('1440');
      await page.getByRole('button', { name: 'Start scan' }).click();
      const objects = page.getByRole('region', { name: 'Stored objects without a file', exact: true });
      await objects.getByRole('checkbox', { name: 'Select all: Stored objects without a file' }).check();
      const bar = page.locator('.sticky-actions');
      await bar.getByText('entries selected').waitFor();
      // The table is longer than the window: the bar holds to its foot.
      expect(await reachable(bar.getByRole('button', { name: 'Delete selected' }))).toBe(true);
      const text = `Orphans bar ${name}`;
      await shareWith(page, admin, text);
      await page.getByRole('status').filter({ hasText: text }).waitFor();
      expect(await clear(page, text, '.sticky-actions', 'Delete selected')).toBe('clear');
      await screenshot(page, `toast-orphans-bar-${name}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test("a toast leaves the line of controls just used within reach: Settings → Security's backup codes, Copy beside Download and I have saved them, at desktop and phone width, and where a press does not focus the button (Safari)", async () => {
    for (const [name, opts, safari] of [
      ...CONFIGS.map(([n, o]) => [n, o, false] as const),
      ['safari-phone', { viewport: PHONE }, true] as const,
    ]) {
      const o = await seed.owner(t);
      const { context, page, errors } = await signedInContext(browser, t.url, o, opts);
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await installClock(page);
      // Safari and iOS leave the focus where it was when a button is pressed: a press that cannot move it.
      if (safari)
        await page.addInitScript(() =>
          (globalThis as any).addEventListener('mousedown', (e: any) => e.preventDefault(), { capture: true }),
        );
      await page.goto('/settings/security');
      await page.getByRole('button', { name: 'Enable two-factor authentication' }).click();
      const secret = (await page.getByLabel('Secret key').textContent())!.replace(/\s/g, '');
      await page.getByLabel('Authentication code').fill(await generate({ secret }));
      await page.getByRole('button', { name: 'Verify' }).click();
      const copy = page.getByRole('button', { name: 'Copy', exact: true });
      await copy.waitFor();
      await apiSettled(page);
      await pauseClock(page);
      if (safari) await page.evaluate(() => (globalThis as any).document.activeElement?.blur());
      await copy.click();
      if (safari) expect(await hasFocus(copy)).toBe(false);
      await page.getByRole('status').filter({ hasText: 'Backup codes copied' }).waitFor();
      for (const button of ['Copy', 'Download', 'I have saved them'])
        expect(await clear(page, 'Backup codes copied', '.backup-codes .form-actions', button)).toBe('clear');
      await screenshot(page, `toast-backup-codes-${name}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test('on a phone a toast sits above the expanded upload panel, whose buttons stay within reach (light, dark)', async () => {
    const o = await seed.owner(t);
    for (const dark of [false, true]) {
      const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, dark });
      await page.goto('/files');
      await page.getByRole('heading', { name: 'My files' }).waitFor();
      const chooser = page.waitForEvent('filechooser');
      await page.getByRole('button', { name: 'New', exact: true }).click();
      await page.getByRole('menuitem', { name: /^Upload files/ }).click();
      await (await chooser).setFiles([{ name: `sent-${dark}.txt`, mimeType: 'text/plain', buffer: Buffer.from('hello') }]);
      const panel = page.getByRole('region', { name: 'Uploads' });
      const toggle = panel.getByRole('button', { name: '1 upload complete' });
      await toggle.waitFor();
      if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
      await panel.getByRole('list', { name: 'Files being uploaded' }).waitFor();
      const text = `Upload panel ${dark}`;
      await shareWith(page, o, text);
      await page.getByRole('status').filter({ hasText: text }).waitFor();
      expect(await clear(page, text, '.upload-panel', 'Close uploads')).toBe('clear');
      await screenshot(page, `toast-upload-panel-${dark ? 'dark' : 'light'}-phone`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});
