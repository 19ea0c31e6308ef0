import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import { generate } from 'otplib';
import type { Browser, Locator, Page } from 'playwright-core';
import { ManualClock } from '../../src/clock.ts';
import {
  acquireBrowser,
  expectAccessible,
  openContext,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
  signIn,
} from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { json } from '../helpers/client.ts';
import { upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// The server's clock is the test's: TOTP codes of later time steps without waiting for them.
const clock = new ManualClock();
let t: TestServer;
let browser: Browser;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer({ clock }), acquireBrowser()]);
  await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });
const totp = (secret: string) => generate({ secret, epoch: Math.floor(clock.now() / 1000) });
/** The session id inside a browser's token cookie. */
const sessionOf = async (context: { cookies(): Promise<{ name: string; value: string }[]> }) => {
  const token = (await context.cookies()).find((c) => c.name === 'token')!.value;
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sid as string;
};

/**
 * Presses Tab until `target` has the focus; fails after 60 presses. It waits for `target` first, as a
 * person waits for the page to show it: 60 presses take a fraction of a second, less than a slow load.
 */
async function tabTo(page: Page, target: Locator) {
  await target.waitFor();
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el: any) => el === el.ownerDocument.activeElement)) return;
  }
  throw new Error(`Tab never reached ${target}`);
}

async function signOutVia(page: Page) {
  await page.getByRole('button', { name: /^Account/ }).click();
  await page.getByRole('menuitem', { name: 'Sign out' }).click();
  await page.waitForURL('**/login');
}

describe('account settings', () => {
  test('two-factor authentication: enable with the code of the secret shown, backup codes once (copy, download), sign the others out, sign in with a code and a backup code, regenerate and its cooldown, disable', async () => {
    const o = await seed.owner(t);
    const elsewhere = await seed.login(t, o.email);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto('/settings/security');
    await button(page, 'Enable two-factor authentication').click();
    await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
    const secret = (await page.getByLabel('Secret key').textContent())!.replace(/\s/g, '');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await expectAccessible(page, 'two-factor set-up');
    // A code of the wrong shape is refused in the form, with the server's words.
    await page.getByLabel('Authentication code').fill('12345');
    await button(page, 'Verify').click();
    await page.getByRole('alert').filter({ hasText: 'Enter the 6-digit code from your authenticator app' }).waitFor();
    await page.getByLabel('Authentication code').fill(await totp(secret));
    await button(page, 'Verify').click();

    const list = page.getByRole('list', { name: 'Backup codes' });
    await list.waitFor();
    const codes = (await list.getByRole('listitem').allTextContents()).map((c) => c.trim());
    expect(codes).toHaveLength(10);
    for (const c of codes) expect(c).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    await screenshot(page, 'settings-backup-codes-light-desktop');
    await button(page, 'Copy').click();
    await page.getByRole('status').filter({ hasText: 'Backup codes copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(codes.join('\n'));
    const file = page.waitForEvent('download');
    await button(page, 'Download').click();
    const saved = await file;
    expect(saved.suggestedFilename()).toBe('coffer-backup-codes.txt');
    const text = fs.readFileSync((await saved.path())!, 'utf8');
    for (const c of codes) expect(text).toContain(c);

    // Signed in elsewhere too: the page offers to sign that session out.
    expect((await elsewhere.get('/api/profile')).status).toBe(200);
    await button(page, 'Sign out other sessions').click();
    await page.getByRole('status').filter({ hasText: 'Signed out 1 other session' }).waitFor();
    expect((await elsewhere.get('/api/profile')).status).toBe(401);
    await button(page, 'I have saved them').click();
    await page.getByText('10 unused backup codes left.').waitFor();

    // Signing in now takes a code: one of a later time step, then a backup code.
    await signOutVia(page);
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await button(page, 'Sign in').click();
    clock.advance(30_000);
    await page.getByLabel('Authentication code').fill(await totp(secret));
    await button(page, 'Sign in').click();
    await page.getByRole('link', { name: 'My files' }).waitFor();
    await signOutVia(page);
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await button(page, 'Sign in').click();
    await page.getByLabel('Authentication code').fill(codes[0]!);
    await button(page, 'Sign in').click();
    await page.getByRole('link', { name: 'My files' }).waitFor();

    await page.goto('/settings/security');
    await page.getByText('9 unused backup codes left.').waitFor();
    await button(page, 'Regenerate backup codes').click();
    await page.getByRole('dialog', { name: 'Make new backup codes?' }).getByText('The 9 unused codes you have now stop working.').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Regenerate backup codes' }).click();
    await list.waitFor();
    const fresh = (await list.getByRole('listitem').allTextContents()).map((c) => c.trim());
    expect(fresh).toHaveLength(10);
    expect(fresh.some((c) => codes.includes(c))).toBe(false);
    await button(page, 'I have saved them').click();
    // Again at once: the server's cooldown, said as a time.
    await button(page, 'Regenerate backup codes').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Regenerate backup codes' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /New backup codes can be made again in 5 min, at \d\d:\d\d/ })
      .waitFor();

    await button(page, 'Disable two-factor authentication').click();
    await page.getByLabel('Authentication code').fill('000000');
    await button(page, 'Disable two-factor authentication').click();
    await page.getByRole('alert').filter({ hasText: 'Invalid MFA code' }).waitFor();
    clock.advance(30_000);
    await page.getByLabel('Authentication code').fill(await totp(secret));
    await button(page, 'Disable two-factor authentication').click();
    await page.getByRole('status').filter({ hasText: 'Two-factor authentication is off' }).waitFor();
    await button(page, 'Enable two-factor authentication').waitFor();
    expect((await json(await (await seed.login(t, o.email)).get('/api/mfa/status'))).enabled).toBe(false);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('sessions: a second browser is listed online apart from the current one; revoked, it is thrown out on its next action; closing a page says it is offline; sign out other sessions', async () => {
    const o = await seed.owner(t);
    const a = await openContext(browser, t.url);
    await signIn(a.page, o.email, PASSWORD, '/settings/sessions');
    const b = await openContext(browser, t.url);
    await signIn(b.page, o.email, PASSWORD, '/files');
    await b.page.getByRole('heading', { name: 'My files' }).waitFor();

    const sessions = a.page.getByRole('list', { name: 'Sessions' });
    const current = sessions.getByRole('listitem').filter({ hasText: 'Current' });
    const other = sessions.getByRole('listitem').filter({ hasText: 'Chrome on Linux' }).filter({ hasNotText: 'Current' });
    await a.page.reload();
    await current.waitFor();
    expect(await current.textContent()).toContain('Online');
    await eventually(async () => {
      await a.page.reload();
      expect(await other.textContent()).toContain('Online');
    });
    expect(await sessions.getByRole('listitem').count()).toBe(3);
    expect(await current.getByRole('button', { name: 'Revoke' }).count()).toBe(0);
    await expectAccessible(a.page, 'sessions');

    await other.getByRole('button', { name: 'Revoke' }).click();
    await other.waitFor({ state: 'detached' });
    await b.page.getByRole('link', { name: 'Starred' }).click();
    await b.page.waitForURL('**/login?next=%2Fstarred');
    await b.page.getByText('Session has been revoked').waitFor();
    await b.context.close();

    // A page that goes away tells the server (sendBeacon), so it no longer counts as online.
    const c = await openContext(browser, t.url);
    await signIn(c.page, o.email, PASSWORD, '/files');
    const sid = await sessionOf(c.context);
    const online = async () =>
      (await json(await o.client.get('/api/sessions?refreshIp=true'))).sessions.find((s: { id: string }) => s.id === sid).is_online;
    await eventually(async () => expect(await online()).toBe(true));
    await c.page.close();
    await eventually(async () => expect(await online()).toBe(false));
    await c.context.close();

    await a.page.reload();
    // It sits with the list it acts on, not under the everywhere section's app-password choice.
    const sessionsCard = a.page.getByRole('region', { name: 'Sessions' });
    await sessionsCard.getByRole('button', { name: 'Sign out other sessions' }).click();
    const confirm = a.page.getByRole('dialog', { name: 'Sign out other sessions?' });
    await confirm.getByText('2 other sessions will be signed out').waitFor();
    await confirm.getByRole('button', { name: 'Sign out other sessions' }).click();
    await a.page.getByRole('status').filter({ hasText: 'Signed out 2 other sessions' }).waitFor();
    expect((await o.client.get('/api/profile')).status).toBe(401);
    await eventually(async () => expect(await sessions.getByRole('listitem').count()).toBe(1));
    expect(a.errors).toEqual([]);
    await a.context.close();
  });

  test('sessions: each Revoke button names the device, address and last activity of its session, so a screen reader tells many apart; it revokes that one', async () => {
    const o = await seed.owner(t);
    const agents = [
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0', '10.0.0.2'],
      ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Version/17.5 Mobile/15E148 Safari/604.1', '10.0.0.3'],
      ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36', '10.0.0.4'],
    ] as const;
    // The browser reads "10 min ago" against its own clock, not the server's manual one.
    const now = Date.now();
    // Sessions of other devices, written as their sign-ins would: the list, not signing in, is under test.
    const ids = agents.map(([userAgent, ipAddress], i) => {
      const id = `other-device-${i}-${o.id}`;
      t.server.ctx.repos.sessions.insert({
        id,
        userId: o.id,
        tokenVersion: 1,
        userAgent,
        ipAddress,
        createdAt: now - 3_600_000,
        lastActivityAt: now - (i + 1) * 600_000,
      });
      return id;
    });
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/settings/sessions');
    const sessions = page.getByRole('list', { name: 'Sessions' });
    await sessions.getByText('Chrome on Linux').waitFor();
    const names = await sessions
      .getByRole('button')
      .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label') ?? b.textContent));
    expect(names).toEqual([
      'Revoke Firefox on Windows, 10.0.0.2, active 10 min ago',
      'Revoke Safari on iPhone, 10.0.0.3, active 20 min ago',
      'Revoke Chrome on Linux, 10.0.0.4, active 30 min ago',
    ]);
    await sessions.getByRole('listitem', { name: /^Bun \(this browser\), / }).waitFor();
    await expectAccessible(page, 'sessions of several devices');

    await button(page, 'Revoke Safari on iPhone, 10.0.0.3, active 20 min ago').click();
    await page.getByRole('status').filter({ hasText: 'Signed out Safari on iPhone' }).waitFor();
    await sessions.getByText('Safari on iPhone').waitFor({ state: 'detached' });
    const left = (await json(await o.client.get('/api/sessions'))).sessions.map((s: { id: string }) => s.id);
    expect(left).not.toContain(ids[1]);
    expect(left).toEqual(expect.arrayContaining([ids[0], ids[2]]));
    await screenshot(page, 'settings-sessions-named-light-desktop');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'settings-sessions-named-dark-desktop');
    await page.setViewportSize(PHONE);
    await screenshot(page, 'settings-sessions-named-dark-phone');
    expect(errors).toEqual([]);
    await context.close();
  });

  test("sessions by keyboard: Enter on a Revoke button revokes it and the focus moves to the next session's Revoke, then to the last one left, never back to the page's start", async () => {
    const o = await seed.owner(t);
    const now = Date.now();
    for (let i = 0; i < 3; i++)
      t.server.ctx.repos.sessions.insert({
        id: `kept-focus-${i}-${o.id}`,
        userId: o.id,
        tokenVersion: 1,
        userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0',
        ipAddress: `10.0.1.${i + 1}`,
        createdAt: now - 3_600_000,
        lastActivityAt: now - (i + 1) * 600_000,
      });
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/settings/sessions');
    const focused = () => page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-label') ?? null);
    const first = page.getByRole('button', { name: /^Revoke Firefox on Windows, 10\.0\.1\.1,/ });
    await tabTo(page, first);
    await page.keyboard.press('Enter');
    await page.getByText('10.0.1.1').waitFor({ state: 'detached' });
    await eventually(async () => expect(await focused()).toStartWith('Revoke Firefox on Windows, 10.0.1.2,'));
    await page.keyboard.press('Tab');
    expect(await focused()).toStartWith('Revoke Firefox on Windows, 10.0.1.3,');
    await page.keyboard.press('Enter');
    await page.getByText('10.0.1.3').waitFor({ state: 'detached' });
    await eventually(async () => expect(await focused()).toStartWith('Revoke Firefox on Windows, 10.0.1.2,'));
    await screenshot(page, 'settings-sessions-focus-after-revoke-light-desktop');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('sub-users: created with two permissions, signed in elsewhere with exactly those actions, changed without signing in again, deleted and thrown out; a sub-user has no Sub-users tab and no admin console', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'plan.txt', 'plan');
    const owner = await signedInContext(browser, t.url, o);
    const page = owner.page;
    await page.goto('/settings/sub-users');
    await page.getByText('No sub-users yet.').waitFor();
    await button(page, 'Add sub-user').click();
    const dialog = page.getByRole('dialog', { name: 'Add sub-user' });
    const email = seed.uniqueEmail('robin');
    await dialog.getByLabel('Name').fill('Robin');
    await dialog.getByLabel('Email').fill(o.email);
    await dialog.getByLabel('Password').fill('short');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Password must be at least 8 characters' }).waitFor();
    await dialog.getByLabel('Password').fill('robin-secret-1');
    await dialog.getByRole('checkbox', { name: 'Download' }).check();
    await dialog.getByRole('checkbox', { name: 'Upload & create' }).check();
    await expectAccessible(page, 'add sub-user dialog');
    await screenshot(page, 'settings-add-sub-user-light-desktop');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Email already in use' }).waitFor();
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByRole('button', { name: 'Create' }).click();
    const entry = page.getByRole('list', { name: 'Sub-users' }).getByRole('listitem').filter({ hasText: 'Robin' });
    await entry.getByText('May: Download, Upload & create').waitFor();

    const sub = await openContext(browser, t.url);
    const s = sub.page;
    await signIn(s, email, 'robin-secret-1', '/files');
    const row = s.getByRole('row', { name: /^plan\.txt,/ });
    await row.waitFor();
    await button(s, 'Upload files').waitFor();
    await button(s, 'New folder').waitFor();
    await row.click();
    await button(s, 'Download').waitFor();
    for (const name of ['Rename', 'Move', 'Copy', 'Share', 'Delete', 'Star'])
      expect(await button(s, name).count()).toBe(name === 'Copy' ? 1 : 0);
    // No sub-user management and no admin console for a sub-user.
    await s.getByRole('link', { name: 'Settings' }).click();
    await s.getByRole('link', { name: 'Profile' }).waitFor();
    expect(await s.getByRole('link', { name: 'Sub-users' }).count()).toBe(0);
    await s.getByText('Allowed: Download, Upload & create.').waitFor();
    await s.goto('/settings/sub-users');
    await s.getByRole('heading', { name: 'Sub-users are managed by the account owner' }).waitFor();
    await s.goto('/admin/users');
    await s.getByRole('heading', { name: 'The admin console is not available to you' }).waitFor();
    expect(await s.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    await expectAccessible(s, 'admin console refused to a sub-user');

    await entry.getByRole('button', { name: 'Edit permissions of Robin' }).click();
    const edit = page.getByRole('dialog', { name: 'Permissions of Robin' });
    await edit.getByText('Changes take effect at once').waitFor();
    await edit.getByRole('checkbox', { name: 'Upload & create' }).uncheck();
    await edit.getByRole('checkbox', { name: 'Move to trash' }).check();
    await edit.getByRole('button', { name: 'Save' }).click();
    await entry.getByText('May: Download, Move to trash').waitFor();

    // The sub-user's page follows on its next navigation, without signing in again.
    await s.getByRole('link', { name: 'My files', exact: true }).click();
    await row.click();
    await button(s, 'Delete').waitFor();
    await button(s, 'Download').waitFor();
    expect(await button(s, 'Upload files').count()).toBe(0);

    await entry.getByRole('button', { name: 'Delete sub-user Robin' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete sub-user Robin?' });
    await confirm.getByText('Files they uploaded or changed stay with you.').waitFor();
    await confirm.getByRole('button', { name: 'Delete sub-user' }).click();
    await page.getByText('No sub-users yet.').waitFor();
    await s.getByRole('link', { name: 'Starred' }).click();
    await s.waitForURL('**/login?next=%2Fstarred');
    expect(owner.errors).toEqual([]);
    await sub.context.close();
    await owner.context.close();
  });

  test('keyboard only: Tab and Enter reach a settings tab, open the sub-user dialog, fill it, tick a permission with Space and create', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/settings/profile');
    await page.getByText('Member since').waitFor();
    await tabTo(page, page.getByRole('link', { name: 'Sub-users', exact: true }));
    await page.keyboard.press('Enter');
    await page.waitForURL('**/settings/sub-users');
    await tabTo(page, button(page, 'Add sub-user'));
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Add sub-user' });
    await dialog.waitFor();
    await page.keyboard.type('Kim');
    await page.keyboard.press('Tab');
    const email = seed.uniqueEmail('kim');
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type('kim-secret-22');
    await tabTo(page, dialog.getByRole('checkbox', { name: 'Share', exact: true }));
    await page.keyboard.press('Space');
    await tabTo(page, dialog.getByRole('button', { name: 'Create', exact: true }));
    await page.keyboard.press('Enter');
    await page.getByRole('list', { name: 'Sub-users' }).getByText('May: Share').waitFor();
    expect(
      (await json(await o.client.get('/api/user/sub-users'))).subUsers.map((u: { email: string; permissions: string[] }) => [
        u.email,
        u.permissions,
      ]),
    ).toEqual([[email, ['files.share']]]);
    expect(errors).toEqual([]);
    await context.close();
  });

  test("password: the server's rules and messages; after a change every session is signed out and the page says why; the new one signs in", async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/settings/security');
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password', { exact: true }).fill('brand new secret');
    await page.getByLabel('Repeat new password').fill('brand new secrets');
    await button(page, 'Change password').click();
    await page.getByRole('alert').filter({ hasText: 'The two new passwords are not the same.' }).waitFor();
    await page.getByLabel('Repeat new password').fill('brand new secret');
    await button(page, 'Change password').click();
    await page.getByRole('alert').filter({ hasText: 'Current password is incorrect' }).waitFor();
    await page.getByLabel('Current password').fill(PASSWORD);
    await button(page, 'Change password').click();
    await page.waitForURL('**/login?next=%2Fsettings%2Fsecurity');
    await page.getByText('Your password was changed and every session was signed out, this one included.').waitFor();
    expect((await o.client.get('/api/profile')).status).toBe(401);
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill('brand new secret');
    await button(page, 'Sign in').click();
    await page.waitForURL('**/settings/security');
    expect(errors).toEqual([]);
    await context.close();
  });
});
