import { describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { eventStreamOpen, expectAccessible, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;

serverAndBrowser((s) => ({ t, browser } = s));

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });
const row = (page: Page, name: string) => page.getByRole('row', { name: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},`) });

describe('sharing with people', () => {
  test('the share dialog adds a person by email, changes their role and removes them; the info panel names them', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/files');
    await row(page, 'Family').click();
    await button(page, 'Share').click();
    const dialog = page.getByRole('dialog', { name: 'Share “Family”' });
    await dialog.getByRole('tab', { name: 'People', selected: true }).waitFor();
    await dialog.getByLabel('Name or email').fill('nobody@example.test');
    await dialog.getByRole('button', { name: 'Add person' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'No account with this email' }).waitFor();
    await dialog.getByLabel('Name or email').fill(member.email);
    await dialog.getByRole('combobox', { name: 'Role', exact: true }).selectOption('editor');
    await dialog.getByRole('button', { name: 'Add person' }).click();
    const role = dialog.getByRole('combobox', { name: `Role for ${member.email}` });
    await role.waitFor();
    expect(await role.inputValue()).toBe('editor');
    await dialog.getByRole('status').filter({ hasText: 'Saved: Shared with' }).waitFor();
    await expectAccessible(page, 'share dialog with people');
    await screenshot(page, 'people-share-people-light-desktop');
    const members = async () => (await json(await o.client.get(`/api/files/${family.id}/members`))).members;
    await role.selectOption('viewer');
    await eventually(async () => (await members())[0].role === 'viewer');
    await dialog.getByRole('button', { name: 'Done' }).click();

    await row(page, 'Family').click();
    await page.keyboard.press('i');
    await page.getByRole('complementary', { name: 'Details of Family' }).getByText('Shared with people').waitFor();

    await row(page, 'Family').click();
    await button(page, 'Share').click();
    await page
      .getByRole('dialog')
      .getByRole('button', { name: `Remove ${member.email}` })
      .click();
    await page.getByRole('dialog').getByText('Not shared with anyone yet.').waitFor();
    expect(await members()).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a folder shared only with people is labelled so, and managing it never makes a public link', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    const trips = await folder(o.client, 'Trips', family.id);
    await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'viewer' });
    const links = async () => (await json(await o.client.get(`/api/files/share/links?itemId=${family.id}`))).links;
    const { context, page, errors } = await signedInContext(browser, t.url, o);

    await page.goto('/files');
    await row(page, 'Family').click();
    await page.keyboard.press('i');
    const details = page.getByRole('complementary', { name: 'Details of Family' });
    await details.getByText('Shared with people').waitFor();
    expect(await details.getByText('Shared by link').count()).toBe(0);

    await page.goto(`/files/${trips.id}`);
    await page.getByRole('note').filter({ hasText: 'Inside “Family”, which is shared with people' }).waitFor();
    await page.goto(`/files/${family.id}`);
    const banner = page.getByRole('note').filter({ hasText: 'This folder is shared with people' });
    await banner.waitFor();
    expect(await page.getByRole('note').filter({ hasText: 'shared by link' }).count()).toBe(0);
    expect(await button(page, 'Manage link').count()).toBe(0);
    await expectAccessible(page, 'folder shared with people');
    await screenshot(page, 'people-only-banner-light-desktop');

    await banner.getByRole('button', { name: 'Manage sharing' }).click();
    const dialog = page.getByRole('dialog', { name: 'Share “Family”' });
    await dialog.getByRole('combobox', { name: `Role for ${member.email}` }).waitFor();
    await dialog.getByRole('tab', { name: 'Link' }).click();
    await dialog.getByRole('group', { name: 'The link will expire after' }).waitFor();
    // Choosing an expiry, a date or closing makes no link; only Create link does.
    await dialog.getByLabel('30 days').check();
    await dialog.getByLabel('On a date').check();
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await links()).toEqual([]);
    // Nor does the context menu, which offers Create link by that name only.
    await page.goto('/files');
    await row(page, 'Family').click({ button: 'right' });
    const menu = page.getByRole('menu');
    expect(await menu.getByRole('menuitem', { name: /Copy link/ }).count()).toBe(0);
    await menu.getByRole('menuitem', { name: /Create link/ }).waitFor();
    await page.keyboard.press('Escape');
    expect(await links()).toEqual([]);
    await row(page, 'Family').dblclick();
    await banner.getByRole('button', { name: 'Manage sharing' }).click();
    await dialog.getByRole('tab', { name: 'Link' }).click();
    await dialog.getByRole('button', { name: 'Create link' }).click();
    await dialog.getByRole('textbox', { name: 'Share link' }).waitFor();
    expect(await links()).toHaveLength(1);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('note').filter({ hasText: 'This folder is shared by link' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a notification opens what it is about: the shared folder, a shared file in Shared with me, the folder files were dropped into', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    await upload(o.client, 'photo.txt', 'photo bytes', { parentId: family.id });
    const plan = await upload(o.client, 'plan.txt', 'the plan');
    await upload(o.client, 'other.txt', 'not this one');
    for (const id of [family.id, plan.id]) await o.client.post(`/api/files/${id}/members`, { email: member.email, role: 'viewer' });
    const inbox = await folder(o.client, 'Inbox');
    const link = new URL(
      (await json(await o.client.post('/api/files/share', { ids: [inbox.id], shared: true, mode: 'upload' }))).links[inbox.id],
    );
    const form = new FormData();
    form.append('uploader', 'Ada');
    form.append('file', new File(['one'], 'dropped.txt'));
    expect(
      (await fetch(`${t.url}${link.pathname}/upload`, { method: 'POST', body: form, headers: { accept: 'application/json' } })).status,
    ).toBe(201);

    const openNotification = async (page: Page, text: string) => {
      await page.getByRole('button', { name: /^Notifications/ }).click();
      await page.getByRole('dialog', { name: 'Notifications' }).getByRole('button', { name: text }).click();
    };
    const m = await signedInContext(browser, t.url, member);
    await m.page.goto('/files');
    await openNotification(m.page, 'shared "Family" with you');
    await m.page.waitForURL(`**/files/${family.id}`);
    await row(m.page, 'photo.txt').waitFor();
    await openNotification(m.page, 'shared "plan.txt" with you');
    await m.page.waitForURL('**/shared-with-me');
    await eventually(async () => (await row(m.page, 'plan.txt').getAttribute('aria-selected')) === 'true');
    expect(await row(m.page, 'plan.txt').evaluate((el: any) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(m.errors).toEqual([]);
    await m.context.close();

    const owner = await signedInContext(browser, t.url, o);
    await owner.page.goto('/files');
    await openNotification(owner.page, 'Ada added 1 file to "Inbox"');
    await owner.page.waitForURL(`**/files/${inbox.id}`);
    await row(owner.page, 'dropped.txt').waitFor();
    expect(owner.errors).toEqual([]);
    await owner.context.close();
  });

  test('a notification naming a long file without spaces breaks it inside the dialog, its time in view (desktop light, phone dark)', async () => {
    const o = await seed.owner(t);
    const sharer = await seed.owner(t);
    const name = `${'Z'.repeat(96)}.pdf`;
    const file = await upload(sharer.client, name, 'x');
    await sharer.client.post(`/api/files/${file.id}/members`, { email: o.email, role: 'viewer' });
    for (const opts of [{}, { viewport: PHONE, dark: true, touch: true }]) {
      const { context, page, errors } = await signedInContext(browser, t.url, o, opts);
      await page.goto('/files');
      await page.getByRole('button', { name: /^Notifications/ }).click();
      const dialog = page.getByRole('dialog', { name: 'Notifications' });
      const entry = dialog.getByRole('button', { name: /shared/ });
      await entry.waitFor();
      await screenshot(page, `notifications-long-name-${opts.dark ? 'dark-phone' : 'light-desktop'}`);
      const box = (await dialog.boundingBox())!;
      for (const part of [entry.locator('.notification-text'), entry.getByText('Just now')]) {
        const b = (await part.boundingBox())!;
        expect(b.x + b.width).toBeLessThanOrEqual(box.x + box.width);
      }
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test('the bell reaches every notification: past the first page of 30, More notifications reads the next and adds it below', async () => {
    const o = await seed.owner(t);
    // One account sends another at most 30 an hour: two sharers make 34.
    const sharers = [await seed.owner(t), await seed.owner(t)];
    for (let i = 0; i < 34; i++) {
      const sharer = sharers[i % 2]!;
      const f = await folder(sharer.client, `Shared ${String(i).padStart(2, '0')}`);
      await sharer.client.post(`/api/files/${f.id}/members`, { email: o.email, role: 'viewer' });
    }
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/files');
    await page.getByRole('button', { name: 'Notifications, 34 unread' }).click();
    const dialog = page.getByRole('dialog', { name: 'Notifications' });
    const entries = dialog.getByRole('listitem');
    await eventually(async () => expect(await entries.count()).toBe(30));
    // The oldest (the first shared) is on the second page only.
    expect(await dialog.getByText('Shared 00', { exact: false }).count()).toBe(0);
    const more = dialog.getByRole('button', { name: 'More notifications' });
    await more.scrollIntoViewIfNeeded();
    await screenshot(page, 'notifications-more-light-desktop');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize(PHONE);
    await more.scrollIntoViewIfNeeded();
    await screenshot(page, 'notifications-more-dark-phone');
    await more.click();
    await eventually(async () => expect(await entries.count()).toBe(34));
    await dialog.getByText('Shared 00', { exact: false }).waitFor();
    await dialog.getByRole('button', { name: 'More notifications' }).waitFor({ state: 'detached' });
    await expectAccessible(page, 'notifications with a second page');
    await dialog.getByRole('button', { name: 'Mark all as read' }).click();
    await page.getByRole('button', { name: 'Notifications', exact: true }).waitFor();
    expect(await dialog.getByText('(unread)').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('the People section at phone width in dark', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'editor' });
    const { context, page, errors } = await signedInContext(browser, t.url, o, { dark: true, viewport: PHONE });
    await page.goto('/files');
    await row(page, 'Family').click();
    await button(page, 'Share').click();
    const dialog = page.getByRole('dialog', { name: 'Share “Family”' });
    await dialog.getByRole('combobox', { name: `Role for ${member.email}` }).waitFor();
    await expectAccessible(page, 'share dialog with people, dark phone');
    await screenshot(page, 'people-share-people-dark-phone');
    await dialog.getByRole('tab', { name: 'Link' }).click();
    await dialog.getByText('No public link yet').waitFor();
    await dialog.getByLabel('On a date').check();
    await dialog.getByLabel('Expiry date').waitFor();
    await expectAccessible(page, 'share dialog, Link part, dark phone');
    await screenshot(page, 'share-link-dark-phone');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a member: the bell counts the news, Shared with me lists the folder, it opens in the file manager with the owner in the breadcrumb, and removal leaves it at once', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    await upload(o.client, 'photo.txt', 'photo bytes', { parentId: family.id });
    await upload(o.client, 'private.txt', 'mine');

    for (const opts of [{}, { dark: true, viewport: PHONE }] as const) {
      const { context, page, errors } = await signedInContext(browser, t.url, member, opts);
      const suffix = 'dark' in opts ? 'dark-phone' : 'light-desktop';
      await page.goto('/files');
      // The page's event stream is open before anything happens.
      await eventStreamOpen(page);
      if (suffix === 'light-desktop') {
        await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'viewer' });
        // Delivered live: a toast says it, and the bell counts it.
        await page.getByRole('status').filter({ hasText: 'shared "Family" with you' }).waitFor();
      } else {
        // Two role changes since the first page marked everything read: one unread news, updated to the last.
        for (const role of ['editor', 'viewer']) await o.client.send('PATCH', `/api/files/${family.id}/members/${member.id}`, { role });
      }
      const bell = page.getByRole('button', { name: /^Notifications/ });
      await page.getByRole('button', { name: 'Notifications, 1 unread' }).waitFor();
      await bell.click();
      const list = page.getByRole('dialog', { name: 'Notifications' });
      // The entry, not the toast, which shows inside the open dialog too.
      await list.getByRole('button', { name: /shared "Family" with you as viewer/ }).waitFor();
      await expectAccessible(page, `notifications ${suffix}`);
      await screenshot(page, `people-notifications-${suffix}`);
      await list.getByRole('button', { name: 'Mark all as read' }).click();
      await page.getByRole('button', { name: 'Notifications', exact: true }).waitFor();
      await list.getByRole('button', { name: 'Done' }).click();

      if ('dark' in opts) await page.getByRole('button', { name: 'Open navigation' }).click();
      await page.getByRole('link', { name: 'Shared with me' }).click();
      await page.waitForURL('**/shared-with-me');
      await row(page, 'Family').waitFor();
      expect(await row(page, 'Family').textContent()).toContain('Can view');
      await expectAccessible(page, `shared with me ${suffix}`);
      await screenshot(page, `people-shared-with-me-${suffix}`);

      await row(page, 'Family').click();
      await page.keyboard.press('Enter');
      await page.waitForURL(`**/files/${family.id}`);
      await row(page, 'photo.txt').waitFor();
      const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
      await crumbs.getByRole('link', { name: 'Shared with me' }).waitFor();
      // A viewer is offered no changes.
      expect(await button(page, 'New folder').count()).toBe(0);
      if (!('dark' in opts)) {
        // At phone width the owner is left out of the path for room.
        await crumbs.getByText('Owner').waitFor();
        // The sidebar (closed at phone width) marks where the folder comes from, not My files.
        const nav = page.getByRole('navigation', { name: 'Main' });
        await eventually(async () => (await nav.getByRole('link', { name: 'Shared with me' }).getAttribute('aria-current')) === 'page');
        expect(await nav.getByRole('link', { name: 'My files' }).getAttribute('aria-current')).toBeNull();
      }
      await screenshot(page, `people-shared-folder-${suffix}`);
      expect(errors).toEqual([]);
      if (!('dark' in opts)) {
        await context.close();
        continue;
      }
      // The owner stops sharing: the open page leaves the folder on its own.
      await o.client.delete(`/api/files/${family.id}/members/${member.id}`);
      await page.waitForURL('**/shared-with-me');
      await page.getByText('Nothing is shared with you yet.').waitFor();
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});
