import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;
const root = tempDir('coffer-ui-replication-');
const replica = path.join(root, 'replica');

beforeAll(async () => {
  fs.writeFileSync(path.join(root, 'passphrase'), 'ui test passphrase\n', { mode: 0o600 });
  [t, browser] = await Promise.all([
    startTestServer({
      env: { REPLICATE_TO: replica, REPLICATE_INTERVAL_MS: '200', BACKUP_PASSPHRASE_FILE: path.join(root, 'passphrase') },
    }),
    acquireBrowser(),
  ]);
  admin = await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('Admin → Backups: replication', () => {
  test('shows the replica, its generation and that it is up to date; when the destination fails, the admin sees why on every screen', async () => {
    for (const dark of [false, true]) {
      const { context, page, errors } = await signedInContext(browser, t.url, admin, dark ? { viewport: PHONE, dark } : {});
      try {
        await page.goto('/admin/backups');
        const section = page.getByRole('heading', { name: 'Replication' });
        await section.waitFor();
        expect(await page.getByText(replica, { exact: true }).count()).toBe(1);
        await page.getByText(/^Shipping \(generation g\d{8}T/).waitFor();
        await page.getByText('Up to date').waitFor();
        await page.getByText('Waiting on disk').scrollIntoViewIfNeeded();
        await screenshot(page, `admin-replication${dark ? '-dark-phone' : ''}`);
        await expectAccessible(page, `Admin → Backups with replication${dark ? ' (dark, phone)' : ''}`);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }

    // The destination turns into a file: every shipment fails, and the reason reaches the admin.
    fs.rmSync(replica, { recursive: true, force: true });
    fs.writeFileSync(replica, 'not a directory');
    await upload(admin.client, 'written while the replica is unreachable.txt', 'x');
    // The app asks for the backups' state at load and every minute: open it once the server knows.
    await eventually(async () => {
      const state = await json(await admin.client.get('/api/user/backups'));
      return String(state.replication?.warning ?? '').includes('cannot be written to');
    });
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    try {
      await page.goto('/');
      const banner = page.getByRole('alert').filter({ hasText: 'cannot be written to' });
      await banner.waitFor({ timeout: 20_000 });
      await screenshot(page, 'replication-banner');
      await page.getByRole('button', { name: 'Open Backups', exact: true }).click();
      await page.waitForURL((u) => u.pathname === '/admin/backups');
      const reason = page.getByRole('alert').filter({ hasText: `The replica destination ${replica} cannot be written to` });
      await reason.waitFor();
      await reason.scrollIntoViewIfNeeded();
      await screenshot(page, 'admin-replication-failing');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
    const owner = await seed.owner(t);
    const { context: other, page: ownerPage } = await signedInContext(browser, t.url, owner);
    try {
      await ownerPage.goto('/');
      await ownerPage.getByRole('navigation').first().waitFor();
      expect(await ownerPage.getByText('cannot be written to').count()).toBe(0);
    } finally {
      await other.close();
    }
  }, 90_000);
});
