import { describe, expect, test } from 'bun:test';
import type { Browser, Locator } from 'playwright-core';
import { apiSettled, expectAccessible, PHONE, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let admin: seed.SeededLogin;
let browser: Browser;
serverAndBrowser((s) => ({ t, admin, browser } = s));

/** The table's rows, each as its cells' texts. */
const rows = async (table: Locator) => Promise.all((await table.locator('tbody tr').all()).map((r) => r.locator('td').allInnerTexts()));

describe('Admin → Audit log', () => {
  test('newest first, 100 at a time with More events; narrowed by what, outcome and login (light, dark, phone)', async () => {
    const o = await seed.owner(t);
    expect((await t.client().post('/api/login', { email: o.email, password: 'not it' })).status).toBe(401);
    // Each refused request of an owner on an admin route is an event of its own.
    for (let i = 0; i < 105; i++) expect((await o.client.get('/api/admin/audit')).status).toBe(403);

    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/users');
    await page.getByRole('navigation', { name: 'Admin sections' }).getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const table = page.getByRole('table');
    await table.locator('tbody tr').first().waitFor();
    const first = await rows(table);
    expect(first).toHaveLength(100);
    expect(first[0]).toMatchObject([
      expect.any(String),
      expect.stringContaining('access.denied'),
      'Refused',
      o.email,
      '127.0.0.1',
      expect.any(String),
    ]);
    await expectAccessible(page, 'audit log');
    await screenshot(page, 'admin-audit');

    await page.getByRole('button', { name: 'More events' }).click();
    await table.locator('tbody tr').nth(100).waitFor();
    expect((await rows(table)).length).toBeGreaterThan(105);

    await page.getByLabel('What', { exact: true }).selectOption({ label: 'Sign-ins and passwords' });
    await page.getByLabel('Outcome', { exact: true }).selectOption({ label: 'Failed' });
    await page.getByLabel('Login', { exact: true }).fill(o.email);
    await page.getByLabel('Login', { exact: true }).press('Enter');
    // Outcome alone may already show that one row, and the login's reload then empties the table a moment: read them together.
    await eventually(async () => {
      const failed = await rows(table);
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject([
        expect.any(String),
        expect.stringContaining('auth.sign_in'),
        'Failed',
        o.email,
        '127.0.0.1',
        expect.stringContaining('invalid_credentials'),
      ]);
    });
    expect(await page.getByRole('button', { name: 'More events' }).count()).toBe(0);

    await page.getByLabel('What', { exact: true }).selectOption({ label: 'Files' });
    await page.getByText('No event matches.').waitFor();

    await page.getByLabel('What', { exact: true }).selectOption({ label: 'Everything' });
    await page.getByLabel('Outcome', { exact: true }).selectOption({ label: 'Any outcome' });
    await table.locator('tbody tr').nth(1).waitFor();
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'audit log, dark');
    await screenshot(page, 'admin-audit-dark');
    await page.setViewportSize(PHONE);
    await apiSettled(page);
    await expectAccessible(page, 'audit log, phone');
    await screenshot(page, 'admin-audit-phone-dark');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('with a time filter, More events reads the same window as the first page (its start is fixed when the filter is chosen)', async () => {
    const o = await seed.owner(t);
    for (let i = 0; i < 105; i++) expect((await o.client.get('/api/admin/audit')).status).toBe(403);
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    const asked: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname === '/api/admin/audit' && url.searchParams.has('since')) asked.push(url.searchParams.get('since')!);
    });
    await page.goto('/admin/audit');
    const table = page.getByRole('table');
    await table.locator('tbody tr').first().waitFor();
    await page.getByLabel('When', { exact: true }).selectOption({ label: 'The last hour' });
    await eventually(() => expect(asked).toHaveLength(1));
    await page.getByRole('button', { name: 'More events' }).click();
    await table.locator('tbody tr').nth(100).waitFor();
    expect(asked).toHaveLength(2);
    expect(asked[1]).toBe(asked[0]!);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('another account sees no Audit log: the admin console is not available to it', async () => {
    const o = await seed.owner(t);
    const { context, page } = await signedInContext(browser, t.url, o);
    await page.goto('/admin/audit');
    await page.getByRole('heading', { name: 'The admin console is not available to you' }).waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    await context.close();
  });
});
