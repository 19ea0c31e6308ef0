import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { json } from '../helpers/client.ts';
import { DavClient, davLogin } from '../helpers/dav.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let adminLogin: seed.SeededLogin;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  adminLogin = await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

describe('Settings → App passwords', () => {
  test('create one (shown once, copied), mount with it, see its last use, revoke it; the mount URL and per-OS steps are shown', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto('/settings/app-passwords');
    await page.getByRole('heading', { name: 'App passwords' }).waitFor();
    expect(await page.getByLabel('WebDAV address').inputValue()).toBe(`${t.url}/dav/`);
    for (const os of ['macOS', 'Windows', 'Linux', 'rclone']) await page.getByText(os, { exact: true }).waitFor();
    await page.getByText('No app passwords yet.').waitFor();

    // An empty name is refused in the form.
    await page.getByRole('button', { name: 'Create app password' }).click();
    await page.getByRole('alert').filter({ hasText: 'Name the device' }).waitFor();
    await page.getByLabel('Device name').fill('MacBook Finder');
    await page.getByRole('button', { name: 'Create app password' }).click();
    const secret = await page.getByLabel('New app password').inputValue();
    expect(secret).toMatch(/^[a-z2-9]{5}(-[a-z2-9]{5}){4}$/);
    await expectAccessible(page, 'a new app password');
    await screenshot(page, 'settings-app-passwords-new');
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByLabel('New app password').count()).toBe(0);

    // The password works for WebDAV, and the list shows its use after a reload.
    const dav = new DavClient(t.url, o.email, secret);
    expect((await dav.propfind('', '0')).status).toBe(207);
    await page.reload();
    const entry = page.getByRole('list', { name: 'App passwords' }).getByRole('listitem').filter({ hasText: 'MacBook Finder' });
    await entry.getByText('from 127.0.0.1').waitFor();
    await expectAccessible(page, 'the app password list');
    await screenshot(page, 'settings-app-passwords');

    await entry.getByRole('button', { name: 'Revoke MacBook Finder' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('No app passwords yet.').waitFor();
    expect((await dav.propfind('', '0')).status).toBe(401);
    expect((await json(await o.client.get('/api/user/app-passwords'))).appPasswords).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('signed in long ago: the page asks for the password again before it makes one, and says a wrong one is wrong', async () => {
    const o = await seed.owner(t);
    const { page, errors } = await signedInContext(browser, t.url, o);
    t.server.ctx.db.$client.query('UPDATE sessions SET created_at = created_at - 3600000 WHERE user_id = ?').run(o.id);
    await page.goto('/settings/app-passwords');
    await page.getByLabel('Device name').fill('Old session');
    await page.getByRole('button', { name: 'Create app password' }).click();
    await page.getByRole('alert').filter({ hasText: 'Enter your password to make an app password' }).waitFor();
    await page.getByLabel('Your password').fill('not the password');
    await page.getByRole('button', { name: 'Create app password' }).click();
    await page.getByRole('alert').filter({ hasText: 'Current password is incorrect' }).waitFor();
    await page.getByLabel('Your password').fill(o.password);
    await page.getByRole('button', { name: 'Create app password' }).click();
    expect(await page.getByLabel('New app password').inputValue()).toMatch(/^[a-z2-9]{5}(-[a-z2-9]{5}){4}$/);
    expect(errors.filter((e) => !e.includes('400'))).toEqual([]);
  });

  test('signed in long ago, by keyboard: the password field takes the focus when asked, Enter there makes the app password, which takes the focus, and Done gives it back to the device name', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    t.server.ctx.db.$client.query('UPDATE sessions SET created_at = created_at - 3600000 WHERE user_id = ?').run(o.id);
    const focused = () => page.evaluate(() => (globalThis as any).document.activeElement?.id ?? null);
    await page.goto('/settings/app-passwords');
    await page.getByLabel('Device name').fill('Old session');
    await page.getByRole('button', { name: 'Create app password' }).focus();
    await page.keyboard.press('Enter');
    const password = page.getByLabel('Your password');
    await password.waitFor();
    await eventually(async () => expect(await focused()).toBe(await password.getAttribute('id')));
    await screenshot(page, 'settings-app-passwords-confirm-light-desktop');
    await page.keyboard.type(o.password);
    await page.keyboard.press('Enter');
    const secret = page.getByLabel('New app password');
    await secret.waitFor();
    await eventually(async () => expect(await focused()).toBe(await secret.getAttribute('id')));
    await page.getByRole('button', { name: 'Done' }).focus();
    await page.keyboard.press('Enter');
    const name = page.getByLabel('Device name');
    await name.waitFor();
    await eventually(async () => expect(await focused()).toBe(await name.getAttribute('id')));
    expect(errors.filter((e) => !e.includes('400'))).toEqual([]);
    await context.close();
  });

  test('signed in long ago, by keyboard: Create app password pressed with a wrong password keeps the focus while the server answers and after it refuses', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    t.server.ctx.db.$client.query('UPDATE sessions SET created_at = created_at - 3600000 WHERE user_id = ?').run(o.id);
    await page.goto('/settings/app-passwords');
    await page.getByLabel('Device name').fill('Old session');
    const create = page.getByRole('button', { name: 'Create app password' });
    await create.click();
    await page.getByLabel('Your password').fill('not the password');
    await create.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Current password is incorrect' }).waitFor();
    expect(await create.evaluate((el: any) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(errors.filter((e) => !e.includes('400'))).toEqual([]);
    await context.close();
  });

  test("the owner sees the account's WebDAV locks with who holds them and removes one; a sub-user has no such list", async () => {
    const o = await seed.owner(t);
    const ownerDav = await davLogin(t, o);
    await ownerDav.put('report.txt', 'x');
    const sub = await seed.subUser(t, o, ['files.edit']);
    const subDav = await davLogin(t, sub);
    const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    expect((await subDav.request('LOCK', 'report.txt', { body: lockBody, headers: { timeout: 'Infinite' } })).status).toBe(200);
    expect((await ownerDav.put('report.txt', 'y')).status).toBe(423);

    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/settings/app-passwords');
    const entry = page.getByRole('list', { name: 'WebDAV locks' }).getByRole('listitem').filter({ hasText: '/report.txt' });
    await entry.getByText(/Sub · exclusive · expires in 7 days/).waitFor();
    await expectAccessible(page, 'the WebDAV lock list');
    await entry.getByRole('button', { name: 'Remove lock on /report.txt' }).click();
    await page.getByText('No locks.').waitFor();
    expect((await ownerDav.put('report.txt', 'y')).status).toBe(204);
    expect(errors).toEqual([]);
    await context.close();

    const asSub = await signedInContext(browser, t.url, sub);
    await asSub.page.goto('/settings/app-passwords');
    await asSub.page.getByRole('heading', { name: 'Mount as a drive' }).waitFor();
    expect(await asSub.page.getByRole('heading', { name: 'WebDAV locks' }).count()).toBe(0);
    expect(asSub.errors).toEqual([]);
    await asSub.context.close();
  });

  test('dark and phone width: the instructions stay readable and the page accessible', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, dark: true, touch: true });
    await page.goto('/settings/app-passwords');
    await page.getByRole('heading', { name: 'Mount as a drive' }).waitFor();
    await expectAccessible(page, 'app passwords, phone, dark');
    await screenshot(page, 'settings-app-passwords-phone-dark');
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('changing the password with "Also revoke app passwords" ticked revokes them (the API test covers keeping them)', async () => {
    const o = await seed.owner(t);
    const created = await json(await o.client.post('/api/user/app-passwords', { name: 'phone' }));
    const dav = new DavClient(t.url, o.email, created.password);
    const { context, page } = await signedInContext(browser, t.url, o);
    await page.goto('/settings/security');
    await page.getByLabel('Current password').fill(o.password);
    await page.getByLabel('New password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Repeat new password').fill('a brand new password');
    await page.getByLabel(/Also revoke app passwords/).check();
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForURL('**/login**');
    await eventually(async () => expect((await dav.propfind('', '0')).status).toBe(401));
    await context.close();
  });

  test('the admin switches account passwords for WebDAV on in Admin → Instance; the account password then mounts', async () => {
    const o = await seed.owner(t);
    const withPassword = new DavClient(t.url, o.email, o.password);
    expect((await withPassword.propfind('', '0')).status).toBe(401);
    const { context, page, errors } = await signedInContext(browser, t.url, adminLogin);
    await page.goto('/admin/instance');
    const toggle = page.getByRole('switch', { name: 'Account passwords for WebDAV' });
    expect(await toggle.isChecked()).toBe(false);
    await toggle.check();
    await page.getByRole('status').filter({ hasText: 'Saved: on.' }).waitFor();
    expect((await withPassword.propfind('', '0')).status).toBe(207);
    await toggle.uncheck();
    await page.getByRole('status').filter({ hasText: 'Saved: off.' }).waitFor();
    expect((await withPassword.propfind('', '0')).status).toBe(401);
    expect(errors).toEqual([]);
    await context.close();
  });
});
