import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { acquireBrowser, expectAccessible, PHONE, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;
const root = tempDir('coffer-ui-backups-');
const archives = path.join(root, 'archives');

beforeAll(async () => {
  fs.writeFileSync(path.join(root, 'passphrase'), 'ui test passphrase\n', { mode: 0o600 });
  [t, browser] = await Promise.all([
    startTestServer({
      env: { BACKUP_SCHEDULE: 'weekly sun 03:30', BACKUP_DIR: archives, BACKUP_PASSPHRASE_FILE: path.join(root, 'passphrase') },
    }),
    acquireBrowser(),
  ]);
  admin = await seed.admin(t);
  await upload(admin.client, 'Tax return 2025 – final (signed).pdf', Buffer.alloc(200_000, 7));
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

describe('Admin → Backups', () => {
  test('shows the schedule and next run; "Back up now" runs one and shows its result, size and archive', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    try {
      await page.goto('/admin/backups');
      await page.getByText('No backup has run yet.').waitFor();
      expect(await page.getByText('every Sunday at 03:30').count()).toBe(1);
      expect(await page.getByText(archives).count()).toBe(1);
      await screenshot(page, 'admin-backups-empty');
      await expectAccessible(page, 'Admin → Backups before the first run');

      await button(page, 'Back up now').click();
      await page.getByText('Succeeded (started by hand)').waitFor({ timeout: 30_000 });
      const [archive] = fs.readdirSync(archives);
      expect(archive).toMatch(/\.tar\.enc$/);
      await page.getByText(path.join(archives, archive!)).waitFor();
      await screenshot(page, 'admin-backups-done');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  test('a failed scheduled backup: a banner for the admin on every screen, not for anyone else; the reason on the Backups screen', async () => {
    const runs = t.server.ctx.repos.backupRuns;
    const at = Date.now();
    runs.start({ id: 'failed-scheduled', trigger: 'scheduled', startedAt: at });
    runs.finish('failed-scheduled', {
      status: 'failed',
      finishedAt: at + 2000,
      bytes: null,
      archive: null,
      error: `ENOSPC: no space left on device, write '${archives}'`,
    });
    const owner = await seed.owner(t);
    for (const dark of [false, true]) {
      const { context, page, errors } = await signedInContext(browser, t.url, admin, dark ? { viewport: PHONE, dark } : {});
      try {
        await page.goto('/');
        const banner = page.getByRole('alert').filter({ hasText: 'The last scheduled backup failed' });
        await banner.waitFor();
        expect(await banner.getByText('ENOSPC').count()).toBe(1);
        await screenshot(page, `backups-banner${dark ? '-dark-phone' : ''}`);
        await button(page, 'Open Backups').click();
        await page.waitForURL((u) => u.pathname === '/admin/backups');
        await page.getByRole('heading', { name: 'Latest failure' }).waitFor();
        await screenshot(page, `admin-backups-failed${dark ? '-dark-phone' : ''}`);
        await expectAccessible(page, `Admin → Backups with a failure${dark ? ' (dark, phone)' : ''}`);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }
    const { context, page } = await signedInContext(browser, t.url, owner);
    try {
      await page.goto('/');
      await page.getByRole('button', { name: 'Upload files' }).waitFor();
      expect(await page.getByText('The last scheduled backup failed').count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 60_000);
});
