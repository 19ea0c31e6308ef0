import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { BACKEND_VERSION } from '../../src/services/admin/version.ts';
import {
  acquireBrowser,
  apiSettled,
  expectAccessible,
  hasFocus,
  holdRequests,
  openContext,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
} from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { json } from '../helpers/client.ts';
import { listAll, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { DAY, rowWithoutObject, strayObject } from '../helpers/stored-files.ts';

// The update feed, mocked on loopback: what it answers is up to each test.
let feedAnswer: Response | (() => Response) = () =>
  Response.json({ frontend: BACKEND_VERSION, backend: BACKEND_VERSION, desktop: '1.0.0' });
const feed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => (typeof feedAnswer === 'function' ? feedAnswer() : feedAnswer) });

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;

beforeAll(async () => {
  [t, browser] = await Promise.all([
    startTestServer({ env: { UPDATE_FEED_URL: `http://127.0.0.1:${feed.port}/latest.json` } }),
    acquireBrowser(),
  ]);
  admin = await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
  feed.stop(true);
});

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

/** The Users screen's list, with more accounts loaded until `email` is among them. */
async function showAccount(page: Page, email: string) {
  const list = page.getByRole('list', { name: 'Accounts' });
  await list.getByText(admin.email).waitFor();
  while ((await list.getByText(email).count()) === 0) {
    await button(page, 'Load more accounts').click();
    // The next page is in when the button is usable again, or gone with the last page.
    await list
      .getByText(email)
      .or(page.getByRole('button', { name: 'Load more accounts', disabled: false }))
      .first()
      .waitFor();
  }
  return list;
}
const ctx = () => t.server.ctx;

async function uploadThroughPage(page: Page, name: string, bytes: number) {
  const chooser = page.waitForEvent('filechooser');
  await button(page, 'Upload files').click();
  await (await chooser).setFiles([{ name, mimeType: 'application/octet-stream', buffer: Buffer.alloc(bytes, 1) }]);
}

describe('admin console', () => {
  test('users: every account with its sub-users nested, paged with the cursor; a storage limit set here refuses an upload, and resets', async () => {
    // Owners created straight through the service (no password: fast), enough for a second page.
    for (let i = 0; i < 52; i++)
      await ctx().services.accounts.createLogin({
        email: `bulk-${String(i).padStart(2, '0')}@example.test`,
        password: null,
        name: `Bulk ${i}`,
      });
    const o = await seed.owner(t);
    await seed.subUser(t, { id: o.id }, ['files.download'], seed.uniqueEmail('helper'));
    await upload(o.client, 'some.bin', Buffer.alloc(300_000, 2));
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/users');
    const accounts = page.getByRole('list', { name: 'Accounts' });
    await accounts.getByText('bulk-00@example.test').waitFor();
    // Waited for, not counted at once: the Administrator pill comes from a second request, after the first page.
    const adminEntry = accounts.getByRole('listitem').filter({ hasText: 'Administrator' }).getByText(admin.email);
    await adminEntry.waitFor();
    expect(await adminEntry.count()).toBe(1);
    expect(await page.getByText(o.email).count()).toBe(0);
    await button(page, 'Load more accounts').click();
    const entry = accounts.getByRole('listitem').filter({ hasText: o.email }).first();
    await entry.waitFor();
    expect(await button(page, 'Load more accounts').count()).toBe(0);
    const subs = page.getByRole('list', { name: `Sub-users of ${o.email}` });
    await subs.getByText('Sub-user · may Download').waitFor();
    await expectAccessible(page, 'admin users');

    await entry.getByRole('button', { name: `Storage limit of ${o.email}` }).click();
    const dialog = page.getByRole('dialog', { name: /^Storage limit of/ });
    await dialog.getByText(`coffer users set-limit ${o.email}`).waitFor();
    await dialog.getByLabel('Storage limit').fill('lots');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').filter({ hasText: '“lots” is not a size' }).waitFor();
    await dialog.getByLabel('Storage limit').fill('1M');
    // The change reads that one account again (one request), not every page shown.
    await apiSettled(page);
    const reads: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/user/all') reads.push(r.url());
    });
    await dialog.getByRole('button', { name: 'Save' }).click();
    await entry.getByText('of 1.00 MiB (own limit)').waitFor();
    await apiSettled(page);
    expect(reads).toHaveLength(1);
    await accounts.getByText('bulk-00@example.test').waitFor();
    await subs.getByText('Sub-user · may Download').waitFor();
    expect(await button(page, 'Load more accounts').count()).toBe(0);

    // The owner's next upload that does not fit is refused before it is sent, with the server's reason.
    const owner = await signedInContext(browser, t.url, o);
    await owner.page.goto('/files');
    await uploadThroughPage(owner.page, 'too-big.bin', 900_000);
    // In the app's units, not the API's bytes (Required: 900000, available: 748576).
    await owner.page
      .getByRole('alert')
      .filter({ hasText: 'Not uploaded: Storage limit exceeded. This needs 878.9 KiB; 731.0 KiB is free.' })
      .waitFor();
    expect((await listAll(o.client, '/api/files')).map((i) => i.name)).toEqual(['some.bin']);

    await entry.getByRole('button', { name: `Storage limit of ${o.email}` }).click();
    await dialog.getByLabel('Storage limit').waitFor();
    expect(await dialog.getByLabel('Storage limit').inputValue()).toBe('1M');
    await dialog.getByRole('button', { name: 'Reset to default' }).click();
    await entry.getByText(/KiB, no limit/).waitFor();
    await uploadThroughPage(owner.page, 'fits-now.bin', 900_000);
    await owner.page.getByRole('row', { name: /^fits-now\.bin,/ }).waitFor();
    expect([...errors, ...owner.errors]).toEqual([]);
    await owner.context.close();
    await context.close();
  });

  test('users: disable signs an account out and shows it; enable; delete asks for the email and removes the account and its files', async () => {
    const o = await seed.owner(t, seed.uniqueEmail('leaving'));
    await upload(o.client, 'keep-me.bin', Buffer.alloc(20_000, 3));
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/users');
    let entry = (await showAccount(page, o.email)).getByRole('listitem').filter({ hasText: o.email }).first();
    // The first admin has neither button.
    expect(await page.getByRole('button', { name: `Disable ${admin.email}` }).count()).toBe(0);
    expect(await page.getByRole('button', { name: `Delete ${admin.email}` }).count()).toBe(0);

    await entry.getByRole('button', { name: `Disable ${o.email}` }).click();
    const confirm = page.getByRole('dialog', { name: `Disable ${o.email}?` });
    await confirm.getByText('signed out at once').waitFor();
    await confirm.getByRole('button', { name: 'Disable' }).click();
    await entry.getByText('Disabled', { exact: true }).waitFor();
    expect((await o.client.get('/api/profile')).status).toBe(401);
    await expectAccessible(page, 'admin users with a disabled account');
    for (const [name, opts] of [
      ['light-desktop', {}],
      ['dark-desktop', { dark: true }],
      ['light-phone', { viewport: PHONE, touch: true }],
    ] as const) {
      const shot = await signedInContext(browser, t.url, admin, opts);
      await shot.page.goto('/admin/users');
      await (await showAccount(shot.page, o.email)).getByText(o.email).scrollIntoViewIfNeeded();
      await screenshot(shot.page, `admin-users-disabled-${name}`);
      await shot.context.close();
    }

    await entry.getByRole('button', { name: `Enable ${o.email}` }).click();
    await entry.getByRole('button', { name: `Disable ${o.email}` }).waitFor();
    expect(await entry.getByText('Disabled', { exact: true }).count()).toBe(0);
    const again = await seed.login(t, o.email);

    await entry.getByRole('button', { name: `Delete ${o.email}` }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${o.email}?` });
    await dialog.getByLabel(/to delete the account/).fill('someone@example.test');
    await dialog.getByRole('button', { name: 'Delete account' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'does not match' }).waitFor();
    expect(ctx().services.accounts.findById(o.id)!.deletionRequestedAt).toBeNull();
    await dialog.getByLabel(/to delete the account/).fill(o.email);
    await dialog.getByRole('button', { name: 'Delete account' }).click();
    await page.getByText(`Deleting ${o.email}`).waitFor();
    expect((await again.get('/api/profile')).status).toBe(401);
    await eventually(() => expect(ctx().services.accounts.findById(o.id)).toBeNull(), { timeoutMs: 10_000 });
    entry = await page.goto('/admin/users').then(() => page.getByRole('list', { name: 'Accounts' }));
    await entry.getByText(admin.email).waitFor();
    expect(await page.getByText(o.email).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('users: an address nobody vouched for is labelled, and Confirm email (after a confirmation) trusts it, for an account and a sub-user', async () => {
    const email = seed.uniqueEmail('self-made');
    const row = await ctx().services.accounts.createLogin({ email, password: 'a long password', name: 'Self Made' });
    const sub = await seed.subUser(t, row, []);
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/users');
    const entry = (await showAccount(page, email)).getByRole('listitem').filter({ hasText: email }).first();
    expect(await entry.getByText('Email not confirmed').count()).toBe(2);
    const own = page.getByRole('list', { name: 'Accounts' }).getByRole('listitem').filter({ hasText: admin.email }).first();
    expect(await own.getByText('Email not confirmed').count()).toBe(0);
    expect(await own.getByRole('button', { name: `Confirm email of ${admin.email}` }).count()).toBe(0);
    await expectAccessible(page, 'admin users with an unconfirmed address');
    await entry.scrollIntoViewIfNeeded();
    // A sub-user's button is as wide as its label, not as the widest line beside it.
    const subButton = (await entry.getByRole('button', { name: `Confirm email of ${sub.email}` }).boundingBox())!;
    expect(subButton.width).toBeLessThan(200);
    await screenshot(page, 'admin-users-email-unconfirmed-light-desktop');
    const phone = await signedInContext(browser, t.url, admin, { viewport: PHONE, dark: true, touch: true });
    await phone.page.goto('/admin/users');
    await (await showAccount(phone.page, email)).getByText(sub.email).scrollIntoViewIfNeeded();
    await screenshot(phone.page, 'admin-users-email-unconfirmed-dark-phone');
    expect(phone.errors).toEqual([]);
    await phone.context.close();

    for (const address of [email, sub.email]) {
      await entry.getByRole('button', { name: `Confirm email of ${address}` }).click();
      const dialog = page.getByRole('dialog', { name: `Confirm the email of ${address}?` });
      await dialog.getByText('single sign-on will then let').waitFor();
      await dialog.getByRole('button', { name: 'Confirm email' }).click();
      await page.getByText(`Email of ${address} confirmed`).waitFor();
      await entry.getByRole('button', { name: `Confirm email of ${address}` }).waitFor({ state: 'detached' });
    }
    expect(await entry.getByText('Email not confirmed').count()).toBe(0);
    expect(ctx().services.accounts.findById(row.id)!.emailTrusted).toBe(true);
    expect(ctx().services.accounts.findById(sub.id)!.emailTrusted).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('users: Enable and an invitation’s Withdraw, pressed again while the server answers, send nothing more, and keep the focus', async () => {
    const o = await seed.owner(t, seed.uniqueEmail('twice'));
    expect((await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled: true })).status).toBe(200);
    const invited = seed.uniqueEmail('invited');
    expect((await admin.client.post('/api/user/invitations', { email: invited })).status).toBeLessThan(300);
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/users');
    const entry = (await showAccount(page, o.email)).getByRole('listitem').filter({ hasText: o.email }).first();

    const patches = await holdRequests(page, `**/api/user/${o.id}`, 'PATCH');
    const enable = entry.getByRole('button', { name: `Enable ${o.email}` });
    await enable.click();
    await eventually(() => patches.count() === 1);
    // Held: aria-disabled, which Playwright would wait out, so the press is forced as a person's would land.
    await enable.click({ force: true });
    await enable.press('Enter');
    expect(await hasFocus(enable)).toBe(true);
    patches.release();
    await entry.getByRole('button', { name: `Disable ${o.email}` }).waitFor();
    expect(patches.count()).toBe(1);
    expect(
      await page
        .getByRole('status')
        .filter({ hasText: `${o.email} enabled` })
        .count(),
    ).toBe(1);

    const deletes = await holdRequests(page, '**/api/user/invitations/*', 'DELETE');
    const withdraw = page.getByRole('button', { name: `Withdraw the invitation for ${invited}` });
    await withdraw.click();
    await eventually(() => deletes.count() === 1);
    await withdraw.click({ force: true });
    deletes.release();
    await withdraw.waitFor({ state: 'detached' });
    expect(deletes.count()).toBe(1);
    expect(
      await page
        .getByRole('status')
        .filter({ hasText: `Invitation for ${invited} withdrawn` })
        .count(),
    ).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('users: a storage limit set below what the account stores says the account is over it and what that means', async () => {
    const o = await seed.owner(t, seed.uniqueEmail('over'));
    await upload(o.client, 'big.bin', Buffer.alloc(300_000, 5));
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/users');
    const entry = (await showAccount(page, o.email)).getByRole('listitem').filter({ hasText: o.email }).first();
    await entry.getByRole('button', { name: `Storage limit of ${o.email}` }).click();
    const dialog = page.getByRole('dialog', { name: /^Storage limit of/ });
    await dialog.getByLabel('Storage limit').fill('100K');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await entry
      .getByText('of 100.0 KiB (own limit): over the limit, so uploads are refused until files are deleted or the limit is raised')
      .waitFor();
    await screenshot(page, 'admin-users-over-limit-light-desktop');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('users: signed in long ago, delete asks for the admin’s own password in a dialog of its own before anything is deleted', async () => {
    const o = await seed.owner(t, seed.uniqueEmail('kept'));
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    // Only the browser's session ages: the suite's admin client stays a fresh sign-in.
    ctx()
      .db.$client.query(
        'UPDATE sessions SET created_at = created_at - 3600000 WHERE id = (SELECT id FROM sessions WHERE user_id = ? ORDER BY created_at DESC LIMIT 1)',
      )
      .run(admin.id);
    await page.goto('/admin/users');
    const entry = (await showAccount(page, o.email)).getByRole('listitem').filter({ hasText: o.email }).first();
    await entry.getByRole('button', { name: `Delete ${o.email}` }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${o.email}?` });
    await dialog.getByLabel(/to delete the account/).fill(o.email);
    await dialog.getByRole('button', { name: 'Delete account' }).click();
    const asked = page.getByRole('dialog', { name: 'Confirm it is you' });
    await asked.getByLabel('Your password').fill('not the password');
    await expectAccessible(page, 'delete account, password asked again');
    await asked.getByRole('button', { name: 'Delete account' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Current password is incorrect' }).waitFor();
    expect(ctx().services.accounts.findById(o.id)!.deletionRequestedAt).toBeNull();
    expect((await o.client.get('/api/profile')).status).toBe(200);

    await dialog.getByRole('button', { name: 'Delete account' }).click();
    await asked.getByLabel('Your password').fill(admin.password);
    await asked.getByRole('button', { name: 'Delete account' }).click();
    await page.getByText(`Deleting ${o.email}`).waitFor();
    expect((await o.client.get('/api/profile')).status).toBe(401);
    expect(errors.filter((e) => !e.includes('400'))).toEqual([]);
    await context.close();
  });

  test('users: an account added past the first page shows marked and focused where its sort puts it: last of all oldest first, in place by name', async () => {
    // A sign-in of its own: adding an account asks an older session for the admin's password again.
    const fresh = await seed.login(t, admin.email);
    const many = Array.from({ length: 55 }, (_, i) => ({
      email: seed.uniqueEmail(`many-${i}`),
      name: `Many ${String(i).padStart(2, '0')}`,
    }));
    for (let i = 0; i < many.length; i += 8) {
      await Promise.all(
        many.slice(i, i + 8).map(async (m) => {
          // The seed password: test/setup.ts hashes it once per process, not 55 times.
          const res = await fresh.post('/api/user/accounts', { ...m, password: admin.password });
          expect(res.status).toBe(201);
        }),
      );
    }
    const { context, page, errors } = await signedInContext(browser, t.url, { client: fresh });
    await page.goto('/admin/users');
    const accounts = page.getByRole('list', { name: 'Accounts' });
    await accounts.getByText(admin.email).waitFor();
    await button(page, 'Load more accounts').waitFor();
    const owners = accounts.locator(':scope > li');
    const inView = (entry: ReturnType<typeof owners.filter>) =>
      entry.evaluate((el: any) => {
        const r = el.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= el.ownerDocument.defaultView.innerHeight;
      });
    const addAccount = async (email: string, name: string) => {
      await button(page, 'Add user').click();
      const dialog = page.getByRole('dialog', { name: 'Add user' });
      await dialog.getByLabel('Email').fill(email);
      await dialog.getByLabel('Name').fill(name);
      await dialog.getByLabel('Set a password now and tell it to them').check();
      await dialog.getByLabel('Password', { exact: true }).fill('set by the admin');
      await dialog.getByRole('button', { name: 'Add user' }).click();
      const entry = owners.filter({ hasText: email });
      await entry.getByText('Just added').waitFor();
      await eventually(async () => expect(await hasFocus(entry)).toBe(true));
      expect(await inView(entry)).toBe(true);
      return entry;
    };

    // Oldest first, the newest account is the last of all, pages beyond the first shown: read on to it.
    const newest = seed.uniqueEmail('newest');
    const last = await addAccount(newest, 'Newest');
    expect(await button(page, 'Load more accounts').count()).toBe(0);
    expect(((await owners.last().textContent()) ?? '').includes(newest)).toBe(true);
    expect(await last.count()).toBe(1);
    await expectAccessible(page, 'admin users, an account just added');
    await screenshot(page, 'admin-users-just-added-light-desktop');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'admin-users-just-added-dark-desktop');
    await page.emulateMedia({ colorScheme: 'light' });
    const desktop = page.viewportSize()!;
    await page.setViewportSize(PHONE);
    await last.scrollIntoViewIfNeeded();
    await screenshot(page, 'admin-users-just-added-light-phone');
    await page.setViewportSize(desktop);

    // By name, with two pages shown: the next one goes in its place among them, and both pages stay.
    await page.getByLabel('Sort by').selectOption('name');
    await apiSettled(page);
    await button(page, 'Load more accounts').click();
    await eventually(async () => expect(await owners.count()).toBeGreaterThan(50));
    const shown = await owners.count();
    expect(await last.getByText('Just added').count()).toBe(0);
    const between = seed.uniqueEmail('between');
    await addAccount(between, 'Many 27b');
    expect(await owners.count()).toBeGreaterThanOrEqual(shown);
    const names = await owners.locator('.entry-title').evaluateAll((els: any[]) => els.map((e) => e.firstChild.textContent));
    const at = names.indexOf('Many 27b');
    expect(names.slice(at - 1, at + 2)).toEqual(['Many 27', 'Many 27b', 'Many 28']);
    expect(errors).toEqual([]);
    await context.close();
  });

  test("instance settings: each saves on its own with the server's validation, and takes effect for others", async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'report.pdf', '%PDF-1.4');
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    const other = await signedInContext(browser, t.url, o);
    const op = other.page;
    await page.goto('/admin/instance');
    const signup = page.getByRole('switch', { name: 'Allow sign-up' });
    await signup.waitFor();
    expect(await signup.isChecked()).toBe(false);
    await expectAccessible(page, 'admin instance');

    // Sign-up: a visitor sees the form only while it is on.
    const visitor = await openContext(browser, t.url);
    await signup.check();
    await page.getByRole('status').filter({ hasText: 'Saved: on.' }).waitFor();
    await visitor.page.goto('/signup');
    await visitor.page.getByRole('button', { name: 'Create account' }).waitFor();
    await signup.uncheck();
    await page.getByRole('status').filter({ hasText: 'Saved: off.' }).waitFor();
    await visitor.page.reload();
    await visitor.page.getByRole('heading', { name: 'Sign-up is closed' }).waitFor();
    await visitor.context.close();

    // Hidden extensions: the owner's list shows names without them.
    await page.getByRole('switch', { name: 'Hide file extensions' }).check();
    await op.goto('/files');
    await op.getByRole('row', { name: /^report, / }).waitFor();
    await page.getByRole('switch', { name: 'Hide file extensions' }).uncheck();
    await page
      .getByRole('switch', { name: 'Hide file extensions' })
      .locator('xpath=ancestor::div[@class="setting"]')
      .getByText('Saved: off.')
      .waitFor();

    // Password change off: the owner's Security tab says why there is no form.
    await page.getByRole('switch', { name: 'Allow password change' }).uncheck();
    await page
      .getByRole('switch', { name: 'Allow password change' })
      .locator('xpath=ancestor::div[@class="setting"]')
      .getByText('Saved: off.')
      .waitFor();
    await op.getByRole('link', { name: 'Settings' }).click();
    await op.getByRole('link', { name: 'Security' }).click();
    await op.getByText('The administrator of this Coffer has turned off password changes').waitFor();
    expect(await op.getByLabel('Current password').count()).toBe(0);
    await page.getByRole('switch', { name: 'Allow password change' }).check();

    // The maximum upload size: refused forms say why; a new limit refuses a larger upload at once.
    const max = page.getByRole('textbox', { name: 'Maximum upload size' });
    const maxSection = page.getByRole('region', { name: 'Maximum upload size' });
    await max.fill('huge');
    await maxSection.getByRole('button', { name: 'Save' }).click();
    await maxSection.getByRole('alert').filter({ hasText: '“huge” is not a size' }).waitFor();
    await max.fill('200G');
    await maxSection.getByRole('button', { name: 'Save' }).click();
    await maxSection.getByRole('alert').filter({ hasText: 'between 1.00 MiB and 100.0 GiB' }).waitFor();
    await max.fill('1M');
    await maxSection.getByRole('button', { name: 'Save' }).click();
    await maxSection.getByText('Saved: files up to 1.00 MiB.').waitFor();
    // The other page reads the settings again as it navigates; the upload comes once it has the new limit.
    const learnt = op.waitForResponse(
      async (r) => r.url().endsWith('/api/user/max-upload-size-config') && (await r.json()).maxBytes === 1024 * 1024,
    );
    await op.getByRole('link', { name: 'My files', exact: true }).click();
    await learnt;
    await apiSettled(op);
    await uploadThroughPage(op, 'two-megs.bin', 2 * 1024 * 1024);
    await op
      .getByRole('list', { name: 'Files being uploaded' })
      .getByText('2.00 MiB is more than the 1.00 MiB this server accepts per file.')
      .waitFor();
    await max.fill('10G');
    await maxSection.getByRole('button', { name: 'Save' }).click();
    await maxSection.getByText('Saved: files up to 10.0 GiB.').waitFor();

    // Share base URL: the server's validation, then links that use it.
    const share = page.getByRole('region', { name: 'Share base URL' });
    await share.getByRole('textbox', { name: 'Share base URL' }).fill('not a url');
    await share.getByRole('button', { name: 'Save' }).click();
    await share.getByRole('alert').waitFor();
    await share.getByRole('textbox', { name: 'Share base URL' }).fill('https://share.example.test');
    await share.getByRole('button', { name: 'Save' }).click();
    await share.getByText('Saved: links now start with https://share.example.test').waitFor();
    const file = (await listAll(o.client, '/api/files'))[0];
    const links = (await json(await o.client.post('/api/files/share', { ids: [file.id], shared: true }))).links;
    expect(links[file.id]).toStartWith('https://share.example.test/s/');
    await share.getByRole('button', { name: 'Clear' }).click();
    await share.getByText('Cleared').waitFor();

    // Known proxies: a bad entry is refused with the server's message; a good list says to restart.
    const proxies = page.getByRole('region', { name: 'Known proxies' });
    await proxies.getByRole('textbox', { name: 'Known proxies' }).fill('10.0.0.2\nnot an address!');
    await proxies.getByRole('button', { name: 'Save' }).click();
    await proxies.getByRole('alert').waitFor();
    await proxies.getByRole('textbox', { name: 'Known proxies' }).fill('10.0.0.2\n192.168.1.0/24');
    await proxies.getByRole('button', { name: 'Save' }).click();
    await proxies.getByText('Restart Coffer for it to take effect').waitFor();
    expect(ctx().services.settings.get('knownProxies')).toEqual(['10.0.0.2', '192.168.1.0/24']);

    // Document server: URL and secret together; off again.
    const docs = page.getByRole('region', { name: 'Document server' });
    await docs.getByLabel('Document server URL').fill('https://docs.example.test');
    await docs.getByRole('button', { name: 'Save' }).click();
    await docs.getByRole('alert').waitFor();
    await docs.getByLabel('Document server secret').fill('a-long-shared-secret');
    await docs.getByRole('button', { name: 'Save' }).click();
    await docs.getByText('Saved: documents open in https://docs.example.test').waitFor();
    await docs.getByText('A secret is set.').waitFor();
    expect((await json(await o.client.get('/api/user/docserver-configured'))).configured).toBe(true);
    await docs.getByRole('button', { name: 'Turn off' }).click();
    await docs.getByText('Turned off').waitFor();

    // Desktop-only access warns that it locks this very page out, then does.
    await page.getByRole('switch', { name: 'Desktop-only access' }).check();
    const warn = page.getByRole('dialog', { name: 'Turn on desktop-only access?' });
    await warn.getByText('Every browser, yours included, is locked out').waitFor();
    await warn.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByRole('switch', { name: 'Desktop-only access' }).isChecked()).toBe(false);
    await page.getByRole('switch', { name: 'Desktop-only access' }).check();
    await warn.getByRole('button', { name: 'Turn on desktop-only access' }).click();
    try {
      await op.getByRole('link', { name: 'Starred' }).click();
      await op.getByRole('heading', { name: 'Desktop app only' }).waitFor();
    } finally {
      ctx().services.settings.set('desktopOnlyAccess', false);
    }
    expect(errors).toEqual([]);
    await other.context.close();
    await context.close();
  });

  test('instance settings by keyboard: a switch or a Save pressed keeps the focus while the server answers, and a second press meanwhile sends nothing', async () => {
    const maxBefore = (await json(await admin.client.get('/api/user/max-upload-size-config'))).maxBytes;
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    // Each change is held until the test has looked at the page, as a slow network would hold it.
    const held: Array<() => void> = [];
    let puts = 0;
    await context.route(
      (u) => u.pathname === '/api/user/hide-file-extensions-config' || u.pathname === '/api/user/max-upload-size-config',
      async (r) => {
        if (r.request().method() === 'PUT') {
          puts++;
          await new Promise<void>((release) => held.push(release));
        }
        await r.fallback();
      },
    );
    const focused = () =>
      page.evaluate(() => {
        const el = (globalThis as any).document.activeElement;
        return el?.getAttribute('role') === 'switch' ? `switch ${el.labels?.[0]?.textContent}` : `${el?.tagName} ${el?.textContent ?? ''}`;
      });
    await page.goto('/admin/instance');
    const hide = page.getByRole('switch', { name: 'Hide file extensions' });
    await hide.focus();
    await page.keyboard.press('Space');
    await eventually(async () => expect(held.length).toBe(1));
    expect(await focused()).toBe('switch Hide file extensions');
    await page.keyboard.press('Space');
    held.shift()!();
    const hideSection = page.locator('.setting').filter({ has: hide });
    await hideSection.getByRole('status').filter({ hasText: 'Saved: on.' }).waitFor();
    expect(await focused()).toBe('switch Hide file extensions');
    expect(await hide.isChecked()).toBe(true);
    expect(puts).toBe(1);

    await page.getByRole('textbox', { name: 'Maximum upload size' }).fill('2G');
    const upload = page.locator('section').filter({ has: page.getByRole('textbox', { name: 'Maximum upload size' }) });
    await upload.getByRole('button', { name: 'Save' }).focus();
    await page.keyboard.press('Enter');
    await eventually(async () => expect(held.length).toBe(1));
    expect(await focused()).toBe('BUTTON Save');
    await page.keyboard.press('Enter');
    held.shift()!();
    await upload
      .getByRole('status')
      .filter({ hasText: /^Saved/ })
      .waitFor();
    expect(await focused()).toBe('BUTTON Save');
    expect(puts).toBe(2);
    await screenshot(page, 'admin-instance-focus-kept-light-desktop');

    await context.unrouteAll({ behavior: 'ignoreErrors' });
    expect((await admin.client.put('/api/user/hide-file-extensions-config', { hidden: false })).status).toBe(200);
    expect((await admin.client.put('/api/user/max-upload-size-config', { maxBytes: maxBefore })).status).toBe(200);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('orphan review: a planted object without a row and a row without an object are found, deleted after a confirmation naming count and size, each with its result; one that vanished meanwhile is skipped with its reason', async () => {
    const o = await seed.owner(t);
    const stray = await strayObject(ctx(), { ageMs: 2 * DAY, size: 300 });
    const vanishing = await strayObject(ctx(), { ageMs: 2 * DAY, size: 200 });
    const lost = rowWithoutObject(ctx(), o.id, { name: 'lost.pdf', size: 4096, createdAt: Date.now() - 2 * DAY });
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/orphans');
    await page.getByLabel('Grace window (minutes)').fill('10');
    await button(page, 'Start scan').click();
    await page.getByRole('alert').filter({ hasText: 'The grace window must be a whole number of minutes from 60' }).waitFor();
    await page.getByLabel('Grace window (minutes)').fill('1440');
    await button(page, 'Start scan').click();
    const objects = page.getByRole('region', { name: 'Stored objects without a file', exact: true });
    const rows = page.getByRole('region', { name: 'Files whose stored object is missing', exact: true });
    await objects.getByText(stray).waitFor();
    await objects.getByText(vanishing).waitFor();
    await rows.getByText('/lost.pdf').waitFor();
    await rows.getByText(o.email).waitFor();
    await expectAccessible(page, 'orphan report');
    expect(await button(page, 'Delete selected').isDisabled()).toBe(true);

    await objects.getByRole('checkbox', { name: 'Select all: Stored objects without a file' }).check();
    await rows.getByRole('checkbox', { name: `Select ${lost.id}` }).check();
    // Between the report and the deletion, one object goes away by other means.
    await ctx().driver.delete(vanishing);
    await button(page, 'Delete selected').click();
    const confirm = page.getByRole('dialog', { name: 'Delete 2 stored objects and 1 file row?' });
    await confirm.getByText('(4.49 KiB) will be deleted for good').waitFor();
    await confirm.getByRole('button', { name: 'Delete selected' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted 2 entries; skipped 1' }).waitFor();
    await objects
      .getByRole('row', { name: new RegExp(stray) })
      .getByText('Deleted')
      .waitFor();
    await objects
      .getByRole('row', { name: new RegExp(vanishing) })
      .getByText('Skipped: Object no longer exists')
      .waitFor();
    await rows
      .getByRole('row', { name: /lost\.pdf/ })
      .getByText('Deleted')
      .waitFor();
    expect(await ctx().driver.head(stray)).toBeNull();
    expect(ctx().db.$client.query('SELECT 1 FROM items WHERE id = ?').get(lost.id)).toBeNull();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('desktop clients are listed from their heartbeats; About shows the version and the update feed: up to date, update available, unreachable', async () => {
    const o = await seed.owner(t);
    const res = await o.client.post(
      '/api/user/client-heartbeat',
      { appVersion: '1.4.2', platform: 'linux-x64', clientId: 'laptop' },
      { 'X-Desktop-Client': '1' },
    );
    expect(res.status).toBe(200);
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/clients');
    const client = page.getByRole('row').filter({ hasText: o.email });
    await client.getByText('1.4.2').waitFor();
    await client.getByText('linux-x64').waitFor();
    await expectAccessible(page, 'admin clients');

    await page.getByRole('link', { name: 'About' }).click();
    await page.getByText(`Coffer ${BACKEND_VERSION} is up to date`).waitFor();
    await expectAccessible(page, 'admin about');
    feedAnswer = () => Response.json({ frontend: '9.9.9', backend: '9.9.9', desktop: '2.0.0' });
    await page.reload();
    await page.getByText(`Update available: Coffer 9.9.9 (this server runs ${BACKEND_VERSION})`).waitFor();
    await page.getByText('2.0.0').waitFor();
    feedAnswer = () => new Response('down', { status: 503 });
    await page.reload();
    await page.getByText('The update feed could not be reached').waitFor();
    feedAnswer = () => Response.json({ backend: BACKEND_VERSION });
    await button(page, 'Check again').click();
    await page.getByText(`Coffer ${BACKEND_VERSION} is up to date`).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('About without an update feed says none is configured, and the page asks for none (no 502 from the server)', async () => {
    const bare = await startTestServer();
    try {
      const a = await seed.admin(bare);
      for (const [tag, opts] of [
        ['light-desktop', { viewport: { width: 1440, height: 900 } }],
        ['dark-phone', { viewport: PHONE, dark: true, touch: true }],
      ] as const) {
        const { context, page, errors } = await signedInContext(browser, bare.url, a, opts);
        const refused: string[] = [];
        page.on('response', (r) => {
          if (r.status() >= 500) refused.push(`${r.status()} ${new URL(r.url()).pathname}`);
        });
        await page.goto('/admin/about');
        await page.getByRole('status').filter({ hasText: 'Update checks are not configured: no update feed is set.' }).waitFor();
        await apiSettled(page);
        expect(refused).toEqual([]);
        expect(await page.getByText('could not be reached').count()).toBe(0);
        await screenshot(page, `admin-about-no-feed-${tag}`);
        expect(errors).toEqual([]);
        await context.close();
      }
    } finally {
      await bare.stop();
    }
  });

  test('an owner has no way into the admin console: no link, and a plain page instead of the screens', async () => {
    const o = await seed.owner(t);
    const { context, page } = await signedInContext(browser, t.url, o);
    await page.goto('/admin/instance');
    await page.getByRole('heading', { name: 'The admin console is not available to you' }).waitFor();
    expect(await page.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    expect(await page.getByRole('switch').count()).toBe(0);
    await eventually(async () => expect((await o.client.get('/api/user/all')).status).toBe(403));
    await context.close();
  });
});
