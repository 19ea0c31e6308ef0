import { describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { expectAccessible, holdRequests, openContext, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, listAll, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;

serverAndBrowser((s) => ({ t, browser } = s));

const row = (page: Page, name: string) => page.getByRole('row', { name: new RegExp(`^${name},`) });
const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

describe('share link options in the web app', () => {
  test('the Link part: Create link, then mode, a generated password and a download limit each save as made; a QR code', async () => {
    const o = await seed.owner(t);
    const box = await folder(o.client, 'Receipts 2026');
    const current = async () => (await json(await o.client.get(`/api/files/share/links?itemId=${box.id}`))).links[0];
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/files');
    await row(page, 'Receipts 2026').click();
    await button(page, 'Share').click();
    const dialog = page.getByRole('dialog', { name: 'Share “Receipts 2026”' });
    await dialog.getByRole('tab', { name: 'Link' }).click();
    await dialog.getByRole('tab', { name: 'Link', selected: true }).waitFor();
    await dialog.getByText('No public link yet').waitFor();
    await dialog.getByRole('status').filter({ hasText: 'Changes save as you make them.' }).waitFor();
    await expectAccessible(page, 'share dialog, Link part without a link');
    await screenshot(page, 'share-link-none-light-desktop');
    await dialog.getByRole('button', { name: 'Create link' }).click();
    await dialog.getByRole('textbox', { name: 'Share link' }).waitFor();
    await dialog.getByRole('status').filter({ hasText: 'Saved: Link created' }).waitFor();

    await dialog.getByLabel('Upload only').check();
    await eventually(async () => (await current()).mode === 'upload');
    await dialog.getByRole('button', { name: 'Generate password' }).click();
    const password = await dialog.getByLabel('Password', { exact: true }).inputValue();
    expect(password).toMatch(/^[a-z2-9]{4}(-[a-z2-9]{4}){3}$/);
    await dialog.getByRole('button', { name: 'Set password' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Saved: Password set' }).waitFor();
    await dialog.getByLabel('Limit downloads').check();
    await dialog.getByLabel('Maximum downloads').fill('5');
    await dialog.getByText('Upload only · Password protected · 0 of 5 downloads used').waitFor();
    expect(await current()).toMatchObject({ mode: 'upload', hasPassword: true, maxDownloads: 5 });
    await dialog.getByRole('button', { name: 'Show QR code' }).click();
    const qr = dialog.getByRole('img', { name: 'QR code of the link to “Receipts 2026”' });
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toStartWith('data:image/png;base64,');
    await expectAccessible(page, 'share dialog with options');
    await screenshot(page, 'share-options-created-light-desktop');

    const token = (await current()).token as string;
    expect(
      (
        await fetch(`${t.url}/s/${token}/unlock`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ password }),
        })
      ).status,
    ).toBe(204);

    // A set password: the field is named for a new one and described by what leaving it empty does.
    const newPassword = dialog.getByRole('textbox', { name: 'New password', exact: true });
    expect(await newPassword.getAttribute('placeholder')).toBe('Password set');
    const hint = await newPassword.getAttribute('aria-describedby');
    expect(await dialog.locator(`[id="${hint}"]`).textContent()).toBe('Leave it empty to keep the current password.');

    // Removing the password and the limit: each saves at once.
    // A click, not check(): the box goes once the removal is saved (there is no password left to remove),
    // which under load can come before check() looks at it again.
    await dialog.getByLabel('Remove password').click();
    await dialog.getByRole('status').filter({ hasText: 'Saved: Password removed' }).waitFor();
    await dialog.getByLabel('Limit downloads').uncheck();
    await dialog.getByText('Upload only · No password · 0 downloads').waitFor();
    expect(await current()).toMatchObject({ hasPassword: false, maxDownloads: null });
    await dialog.getByRole('button', { name: 'Done' }).click();

    // The Shared view lists the link with its options; its settings change there, and it can be removed.
    await page.getByRole('link', { name: 'Shared', exact: true }).click();
    const links = page.getByRole('list', { name: 'Share links' });
    await links.getByText('Receipts 2026').waitFor();
    await links.getByText(/Upload only · No password/).waitFor();
    await expectAccessible(page, 'Shared view with links');
    await screenshot(page, 'shared-links-light-desktop');
    await page.getByRole('button', { name: 'Settings of the link to Receipts 2026' }).click();
    const settings = page.getByRole('dialog', { name: 'Link settings for “Receipts 2026”' });
    await settings.getByLabel('View and upload').check();
    await settings.getByLabel('Password', { exact: true }).fill('short');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await settings.getByRole('alert').filter({ hasText: 'The password must be 6 to 128 characters.' }).waitFor();
    await settings.getByLabel('Password', { exact: true }).fill('a long enough one');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await links.getByText(/View and upload · Password protected/).waitFor();
    await page.getByRole('button', { name: 'Remove the link to Receipts 2026' }).click();
    await page.getByText('Nothing shared yet').waitFor();
    expect((await fetch(`${t.url}/s/${token}`)).status).toBe(404);
    await page.getByRole('status').filter({ hasText: 'removed' }).getByRole('button', { name: 'Undo' }).click();
    await links.getByText(/View and upload · No password/).waitFor();
    expect((await json(await o.client.get(`/api/files/share/links?itemId=${box.id}`))).links[0]).toMatchObject({
      mode: 'view_upload',
      hasPassword: false,
    });
    expect(errors).toEqual([]);
    await context.close();
  });

  test('one save model: a typed password is kept on Done, a picked date is the expiry, nothing asks before closing', async () => {
    const o = await seed.owner(t);
    const box = await folder(o.client, 'Tax papers');
    await o.client.post('/api/files/share', { ids: [box.id], shared: true, expiry: '7d' });
    const current = async () => (await json(await o.client.get(`/api/files/share/links?itemId=${box.id}`))).links[0];
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/files');
    await row(page, 'Tax papers').click();
    await button(page, 'Share').click();
    const dialog = page.getByRole('dialog', { name: 'Share “Tax papers”' });
    // An item with a link opens on the Link part.
    await dialog.getByRole('tab', { name: 'Link', selected: true }).waitFor();
    await dialog.getByRole('textbox', { name: 'Share link' }).waitFor();
    expect(await dialog.getByLabel('7 days').isChecked()).toBe(true);

    // A date in about two months: the link works to the end of that local day.
    const day = new Date(Date.now() + 60 * 86_400_000);
    const value = `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`;
    await dialog.getByLabel('On a date').check();
    await dialog.getByLabel('Expiry date').fill(value);
    await dialog.getByRole('status').filter({ hasText: 'Saved: Expiry saved' }).waitFor();
    expect(await dialog.getByLabel('On a date').isChecked()).toBe(true);
    const expected = await page.evaluate((v) => new Date(`${v}T23:59:59`).getTime(), value);
    await eventually(async () => Date.parse((await current()).expiresAt) === expected);
    await dialog.getByText(/^Expires in (59|60|61) days/).waitFor();
    await screenshot(page, 'share-expiry-date-light-desktop');

    await dialog.getByLabel('Upload only').check();
    await dialog.getByLabel('Password', { exact: true }).fill('tax secret');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByRole('dialog').count()).toBe(0);
    await eventually(async () => (await current()).hasPassword === true);
    expect(await current()).toMatchObject({ mode: 'upload', hasPassword: true });

    // Reopened, it shows the picked date as a date.
    await button(page, 'Share').click();
    await dialog.getByRole('textbox', { name: 'Share link' }).waitFor();
    expect(await dialog.getByLabel('On a date').isChecked()).toBe(true);
    expect(await dialog.getByLabel('Expiry date').inputValue()).toBe(value);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    // Copy link from the row, without the dialog.
    await row(page, 'Tax papers').hover();
    await page.getByRole('button', { name: 'Copy link to Tax papers' }).click();
    await page.getByRole('status').filter({ hasText: 'Link to “Tax papers” copied' }).waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('more links than one page: every one is reached by More links, and More links pressed twice while the server answers reads the next page once', async () => {
    const o = await seed.owner(t);
    const ids: string[] = [];
    for (let i = 0; i < 105; i++) ids.push((await folder(o.client, `Box ${String(i).padStart(3, '0')}`)).id);
    expect((await o.client.post('/api/files/share', { ids, shared: true })).status).toBe(200);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/shared');
    const list = page.getByRole('list', { name: 'Share links' });
    await page.getByRole('heading', { name: 'Links (100+)' }).waitFor();
    const held = await holdRequests(page, '**/api/files/share/links?*cursor=*', 'GET');
    const more = page.getByRole('button', { name: 'More links' });
    await more.focus();
    await page.keyboard.press('Enter');
    await eventually(async () => expect(held.count()).toBe(1));
    await page.keyboard.press('Enter');
    await page.waitForTimeout(300);
    expect(held.count()).toBe(1);
    held.release();
    await page.getByRole('heading', { name: 'Links (105)' }).waitFor();
    expect(await list.getByRole('listitem').count()).toBe(105);
    expect(await more.count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('dark, phone width: the dialog and the Shared view fit', async () => {
    const o = await seed.owner(t);
    const box = await folder(o.client, 'Family photos with a rather long name');
    await o.client.post('/api/files/share', {
      ids: [box.id],
      shared: true,
      mode: 'view_upload',
      password: 'family secret',
      maxDownloads: 20,
    });
    const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, dark: true, touch: true });
    await page.goto('/shared');
    await page
      .getByRole('list', { name: 'Share links' })
      .getByText('View and upload · Password protected · 0 of 20 downloads used', { exact: false })
      .waitFor();
    await expectAccessible(page, 'Shared view, dark phone');
    await screenshot(page, 'shared-links-dark-phone');
    await page.getByRole('button', { name: 'Settings of the link to Family photos with a rather long name' }).click();
    await page.getByRole('dialog').getByLabel('Maximum downloads').waitFor();
    await screenshot(page, 'link-settings-dark-phone');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the public page of a shared folder', () => {
  test('its listing passes axe-core, every column header named (the icon column too); light at desktop width, dark at phone width', async () => {
    const o = await seed.owner(t);
    const trip = await folder(o.client, 'Lisbon trip 2024');
    await folder(o.client, 'Day 1', trip.id);
    await upload(o.client, 'itinerary.txt', 'day by day', { parentId: trip.id });
    const shared = await json(await o.client.post('/api/files/share', { ids: [trip.id], shared: true }));
    const url = new URL(shared.links[trip.id]);
    for (const [dark, viewport, suffix] of [
      [false, { width: 1440, height: 900 }, 'light-desktop'],
      [true, PHONE, 'dark-phone'],
      [false, PHONE, 'light-phone'],
      [true, { width: 1440, height: 900 }, 'dark-desktop'],
    ] as const) {
      const { context, page, errors } = await openContext(browser, t.url, { viewport, dark, touch: viewport === PHONE });
      await page.goto(url.pathname);
      await page.getByRole('link', { name: 'itinerary.txt' }).waitFor();
      expect(await page.getByRole('columnheader', { name: 'Type', exact: true }).count()).toBe(1);
      if (suffix === 'light-desktop' || suffix === 'dark-phone') await expectAccessible(page, `public folder page ${suffix}`);
      await screenshot(page, `share-folder-${suffix}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});

describe('the public pages of a protected drop folder', () => {
  test('password form (wrong then right), then the drop page on a phone: pick files, name, progress, receipt of this visit only', async () => {
    const o = await seed.owner(t);
    const inbox = await folder(o.client, 'Homework inbox');
    await upload(o.client, 'teacher-notes.txt', 'private', { parentId: inbox.id });
    const shared = await json(
      await o.client.post('/api/files/share', { ids: [inbox.id], shared: true, mode: 'upload', password: 'class of 2026' }),
    );
    const url = new URL(shared.links[inbox.id]);

    for (const [dark, viewport, suffix] of [
      [false, PHONE, 'light-phone'],
      [true, PHONE, 'dark-phone'],
      [false, undefined, 'light-desktop'],
    ] as const) {
      const { context, page, errors } = await openContext(browser, t.url, { viewport, dark, touch: viewport === PHONE });
      await page.goto(url.pathname);
      await page.getByRole('heading', { name: 'Password required' }).waitFor();
      await expectAccessible(page, `password form ${suffix}`);
      await screenshot(page, `share-password-${suffix}`);
      await page.getByLabel('Password').fill('wrong guess');
      await page.getByRole('button', { name: 'Unlock' }).click();
      await page.getByRole('alert').filter({ hasText: 'That password is not right' }).waitFor();
      if (suffix === 'light-phone') await screenshot(page, 'share-password-wrong-light-phone');
      await page.getByLabel('Password').fill('class of 2026');
      await page.getByRole('button', { name: 'Unlock' }).click();
      await page.getByRole('heading', { name: 'Send files to Homework inbox' }).waitFor();
      await page.getByText(/Files you send go to .+’s folder Homework inbox\. .*You can send files until \d{1,2} \w+ \d{4}\./).waitFor();
      expect(await page.content()).not.toContain('teacher-notes.txt');
      await expectAccessible(page, `drop page ${suffix}`);
      await screenshot(page, `share-drop-${suffix}`);

      // The name first: files go as soon as they are chosen, each with its own progress row, with no button to press.
      await page.getByLabel('Your name (optional)').fill('Sam');
      expect(await page.getByRole('button', { name: 'Upload', exact: true }).isVisible()).toBe(false);
      await page.getByLabel('Choose files to upload').setInputFiles([
        { name: `essay-${suffix}.txt`, mimeType: 'text/plain', buffer: Buffer.from('my essay') },
        { name: 'drawing.txt', mimeType: 'text/plain', buffer: Buffer.from('a drawing') },
      ]);
      const receipt = page.getByRole('region', { name: 'You sent' });
      await receipt.getByText(`essay-${suffix}.txt`).waitFor();
      expect(await receipt.getByRole('listitem').count()).toBe(2);
      await screenshot(page, `share-drop-sent-${suffix}`);
      expect(errors).toEqual([]);
      await context.close();
    }
    const names = (await listAll(o.client, `/api/files?parentId=${inbox.id}`)).map((i: { name: string }) => i.name).sort();
    // The owner sees who sent a file, in its details.
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto(`/files/${inbox.id}`);
    await row(page, 'essay-light-phone.txt').click();
    await page.keyboard.press('i');
    const details = page.getByRole('complementary', { name: 'Details of essay-light-phone.txt' });
    await details.getByText('Sam, through a share link').waitFor();
    await page
      .getByRole('note')
      .filter({ hasText: 'anyone with the link can send files into it, and sees nothing in it but what they sent' })
      .waitFor();
    await screenshot(page, 'share-drop-details-light-desktop');
    expect(errors).toEqual([]);
    await context.close();
    expect(names).toEqual([
      'drawing (1).txt',
      'drawing (2).txt',
      'drawing.txt',
      'essay-dark-phone.txt',
      'essay-light-desktop.txt',
      'essay-light-phone.txt',
      'teacher-notes.txt',
    ]);
  });
});
