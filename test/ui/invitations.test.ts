import { describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { expectAccessible, openContext, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;

serverAndBrowser((s) => ({ t, admin, browser } = s));

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

describe('Admin → Users: Add user and invitations', () => {
  test('the admin invites; the link, shown once, opens a page where the invitee sets a password and is signed in; it works once', async () => {
    const email = seed.uniqueEmail('ada');
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/users');
    await page.getByRole('list', { name: 'Accounts' }).getByText(admin.email).waitFor();
    await button(page, 'Add user').click();
    const dialog = page.getByRole('dialog', { name: 'Add user' });
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByLabel('Name').fill('Ada');
    await dialog.getByLabel('Storage limit').fill('lots');
    await expectAccessible(page, 'add user');
    await screenshot(page, 'admin-add-user');
    await dialog.getByRole('button', { name: 'Create invitation' }).click();
    await dialog.getByRole('alert').filter({ hasText: '“lots” is not a size' }).waitFor();
    await dialog.getByLabel('Storage limit').fill('2G');
    await dialog.getByRole('button', { name: 'Create invitation' }).click();
    // The field, not the radio before it ('Send an invitation link …'), which also holds those words.
    const link = dialog.getByRole('textbox', { name: 'Invitation link' });
    await link.waitFor();
    const url = await link.inputValue();
    expect(url).toStartWith(`${t.url}/invite#`);
    await dialog.getByText('It works once, until').waitFor();
    await expectAccessible(page, 'invitation link');
    await screenshot(page, 'admin-invitation-link');
    await dialog.getByRole('button', { name: 'Done' }).click();
    const waiting = page.getByRole('list', { name: 'Invitations waiting' });
    await waiting.getByText(email).waitFor();
    await screenshot(page, 'admin-users-invited');

    // The invitee, on a phone in the dark, with sign-up closed.
    const invitee = await openContext(browser, t.url, { viewport: PHONE, dark: true, touch: true });
    await invitee.page.goto(new URL(url).pathname + new URL(url).hash);
    await invitee.page.getByRole('heading', { name: 'Join Coffer' }).waitFor();
    await invitee.page.getByText(`You were invited to Coffer as ${email}`).waitFor();
    expect(await invitee.page.getByLabel('Email').inputValue()).toBe(email);
    expect(await invitee.page.getByLabel('Name').inputValue()).toBe('Ada');
    await expectAccessible(invitee.page, 'invitation page');
    await screenshot(invitee.page, 'invitation-page-phone-dark');
    await invitee.page.getByLabel('Password').fill('ada lovelace 1815');
    await button(invitee.page, 'Create account').click();
    await invitee.page.waitForURL((u) => u.pathname === '/');
    // Signed in: the app's shell is shown.
    await invitee.page.locator('main#main').waitFor();
    const client = await seed.login(t, email, 'ada lovelace 1815');
    expect((await json(await client.get('/api/user/storage'))).total).toBe(2 * 2 ** 30);

    // The same link again, in another browser: refused, saying why.
    const again = await openContext(browser, t.url);
    await again.page.goto(new URL(url).pathname + new URL(url).hash);
    await again.page.getByRole('heading', { name: 'This invitation cannot be used' }).waitFor();
    await again.page.getByText('already used').waitFor();
    await expectAccessible(again.page, 'used invitation');

    // Accepted, it is no longer waiting; the account is in the list.
    await page.reload();
    await page.getByRole('list', { name: 'Accounts' }).getByText(email).waitFor();
    expect(await page.getByRole('list', { name: 'Invitations waiting' }).count()).toBe(0);
    expect([...errors, ...invitee.errors, ...again.errors]).toEqual([]);
    await Promise.all([context.close(), invitee.context.close(), again.context.close()]);
  });

  test('a password set now makes the account at once; an invitation can be withdrawn; search and sort find accounts', async () => {
    const direct = seed.uniqueEmail('direct');
    const withdrawn = seed.uniqueEmail('withdrawn');
    const { context, page, errors } = await signedInContext(browser, t.url, admin, { dark: true });
    await page.goto('/admin/users');
    await page.getByRole('list', { name: 'Accounts' }).getByText(admin.email).waitFor();

    await button(page, 'Add user').click();
    let dialog = page.getByRole('dialog', { name: 'Add user' });
    await dialog.getByLabel('Email').fill(direct);
    await dialog.getByLabel('Set a password now and tell it to them').check();
    await dialog.getByLabel('Password', { exact: true }).fill('set by the admin');
    await expectAccessible(page, 'add user with a password');
    await dialog.getByRole('button', { name: 'Add user' }).click();
    await page.getByRole('list', { name: 'Accounts' }).getByText(direct).first().waitFor();
    await seed.login(t, direct, 'set by the admin');

    await button(page, 'Add user').click();
    dialog = page.getByRole('dialog', { name: 'Add user' });
    await dialog.getByLabel('Email').fill(withdrawn);
    await dialog.getByRole('button', { name: 'Create invitation' }).click();
    await dialog.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: `Withdraw the invitation for ${withdrawn}` }).click();
    await page.getByText(`Invitation for ${withdrawn} withdrawn`).waitFor();
    const waiting = (await json(await admin.client.get('/api/user/invitations'))).invitations as Array<{ email: string }>;
    expect(waiting.map((i) => i.email)).not.toContain(withdrawn);

    const big = await seed.owner(t, seed.uniqueEmail('big'));
    t.server.ctx.services.quota.adjust(big.id, 10_000_000);
    await page.getByLabel('Sort by').selectOption('storage');
    const accounts = page.getByRole('list', { name: 'Accounts' });
    // The list asks again in the new order; until its answer comes, the old order shows.
    await eventually(async () => ((await accounts.getByRole('listitem').first().textContent()) ?? '').includes(big.email));
    await page.getByLabel('Search accounts').fill(direct.split('@')[0]!);
    await eventually(async () => (await accounts.locator(':scope > li').count()) === 1);
    await accounts.getByText(direct).first().waitFor();
    await page.getByLabel('Search accounts').fill('nobody-by-this-name');
    await accounts.getByText('No account matches “nobody-by-this-name”.').waitFor();
    await page.setViewportSize(PHONE);
    await page.getByLabel('Search accounts').fill('');
    await accounts.getByText(big.email).waitFor();
    await expectAccessible(page, 'admin users, phone, dark');
    await screenshot(page, 'admin-users-phone-dark');
    expect(errors).toEqual([]);
    await context.close();
  });
  test('by keyboard on a slow network: Enter on Create invitation keeps the focus on it while the server answers, and Enter again sends nothing', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    const held: Array<() => void> = [];
    let posts = 0;
    await context.route(
      (u) => u.pathname === '/api/user/invitations',
      async (r) => {
        if (r.request().method() === 'POST') {
          posts++;
          await new Promise<void>((release) => held.push(release));
        }
        await r.fallback();
      },
    );
    await page.goto('/admin/users');
    await button(page, 'Add user').click();
    const dialog = page.getByRole('dialog', { name: 'Add user' });
    const email = seed.uniqueEmail('slow');
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByRole('button', { name: 'Create invitation' }).focus();
    await page.keyboard.press('Enter');
    await eventually(async () => expect(held.length).toBe(1));
    const focused = () => page.evaluate(() => (globalThis as any).document.activeElement?.textContent ?? null);
    expect(await focused()).toBe('Create invitation');
    await page.keyboard.press('Enter');
    await dialog.getByLabel('Email').press('Enter');
    held.shift()!();
    await dialog.getByRole('textbox', { name: 'Invitation link' }).waitFor();
    expect(posts).toBe(1);
    expect(held.length).toBe(0);
    await dialog.getByRole('button', { name: 'Done' }).click();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('signed in long ago: Add user asks for the admin’s own password before it adds anyone, and says a wrong one is wrong', async () => {
    const email = seed.uniqueEmail('stale');
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    t.server.ctx.db.$client.query('UPDATE sessions SET created_at = created_at - 3600000 WHERE user_id = ?').run(admin.id);
    await page.goto('/admin/users');
    await button(page, 'Add user').click();
    const dialog = page.getByRole('dialog', { name: 'Add user' });
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByLabel('Set a password now and tell it to them').check();
    await dialog.getByLabel('Password', { exact: true }).fill('set by the admin');
    await dialog.getByRole('button', { name: 'Add user' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Enter your password to add an account' }).waitFor();
    expect(t.server.ctx.services.accounts.findByEmail(email)).toBeNull();
    await dialog.getByLabel('Your password').fill('not the password');
    await dialog.getByRole('button', { name: 'Add user' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Current password is incorrect' }).waitFor();
    await expectAccessible(page, 'add user, password asked again');
    await dialog.getByLabel('Your password').fill(admin.password);
    await dialog.getByRole('button', { name: 'Add user' }).click();
    await page.getByRole('list', { name: 'Accounts' }).getByText(email).first().waitFor();
    await seed.login(t, email, 'set by the admin');
    expect(errors.filter((e) => !e.includes('400'))).toEqual([]);
    await context.close();
  });
});
