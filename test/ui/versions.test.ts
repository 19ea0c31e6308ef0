import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { ManualClock } from '../../src/clock.ts';
import {
  acquireBrowser,
  DESKTOP,
  expectAccessible,
  hasFocus,
  holdRequests,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
} from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { downloaded, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const MINUTE = 60_000;
const SAVES = 4 * 47;
const EVERY = 15 * MINUTE;
// The server's clock starts about two days back, so an editor session auto-saving every 15 minutes ends a minute ago.
const clock = new ManualClock(Date.now() - SAVES * EVERY - MINUTE);
let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer({ clock, startWorker: false }), acquireBrowser()]);
  admin = await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

/** An editor session: the document server saving `saves` times, every `every` ms, as the given login. */
async function autoSaves(o: seed.SeededLogin, fileId: string, saves: number, every: number): Promise<void> {
  const { uploads } = t.server.ctx.services;
  const current = () => t.server.ctx.repos.items.getLive(o.id, fileId)!;
  for (let i = 1; i <= saves; i++) {
    clock.advance(every);
    const object = await uploads.storeReplacement(
      current(),
      (async function* () {
        yield new TextEncoder().encode(`draft ${i} ${'·'.repeat(i * 40)}`);
      })(),
      'text/plain',
    );
    uploads.commitReplacement(o.id, object, {
      current,
      by: { accountId: o.id, actor: { kind: 'docserver', id: null } },
      origin: { source: 'docserver', authorId: o.id },
    });
  }
}

async function openVersions(o: seed.SeededLogin, opts: { viewport?: typeof DESKTOP; dark?: boolean } = {}) {
  const opened = await signedInContext(browser, t.url, o, opts);
  const { page } = opened;
  await page.goto('/files');
  await page.getByRole('row', { name: /^Minutes\.txt,/ }).click();
  await page.getByRole('button', { name: 'Details', exact: true }).click();
  await page.getByRole('tab', { name: 'Versions' }).click();
  return opened;
}

const versionItems = (page: Page) => page.getByRole('tabpanel', { name: 'Versions' }).getByRole('listitem');

describe('Versions tab', () => {
  test('lists the thinned auto-saves of an editor session by day, with who and how; Download, Restore with Undo, Delete', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'Minutes.txt', 'the first draft');
    await autoSaves(o, file.id, SAVES, EVERY);
    const versions = (await json(await o.client.get(`/api/files/${file.id}/versions`))).versions;
    // Thinned: every save of the last hour, one an hour before that, one a day before that.
    expect(versions.length).toBeGreaterThan(20);
    expect(versions.length).toBeLessThan(35);

    const { context, page, errors } = await openVersions(o);
    await versionItems(page).first().waitFor();
    expect(await versionItems(page).count()).toBe(versions.length);
    // Within a quarter-hour after midnight the newest save was yesterday's, on the browser's clock and zone as here.
    const newest = new Date(versions[0].modified);
    const sameDay = newest.toDateString() === new Date().toDateString();
    await page.getByRole('heading', { name: sameDay ? 'Today' : 'Yesterday' }).waitFor();
    await page.getByText('Edited in the document editor by you').first().waitFor();
    await screenshot(page, 'versions-light-desktop');
    await expectAccessible(page, 'the Versions tab (light, desktop)');

    // Download: the link serves that version's bytes.
    const href = await versionItems(page).nth(1).getByRole('link', { name: 'Download' }).getAttribute('href');
    expect(Buffer.from(await (await o.client.get(href!)).arrayBuffer()).toString()).toStartWith(`draft ${SAVES - 2} `);

    // Restore the second newest, then Undo.
    const before = (await downloaded(o.client, file.id)).toString();
    await versionItems(page).nth(1).getByRole('button', { name: 'Restore' }).click();
    const toast = page.getByRole('status').filter({ hasText: 'Restored the version of' });
    await toast.waitFor();
    expect((await downloaded(o.client, file.id)).toString()).toStartWith(`draft ${SAVES - 2} `);
    await toast.getByRole('button', { name: 'Undo' }).click();
    await page.getByRole('status').filter({ hasText: 'The file is back as it was' }).waitFor();
    expect((await downloaded(o.client, file.id)).toString()).toBe(before);

    // Delete asks first, then the version leaves the list.
    const count = await versionItems(page).count();
    await versionItems(page).first().getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this version?' }).getByRole('button', { name: 'Delete version' }).click();
    await page.getByRole('status').filter({ hasText: 'Version deleted' }).waitFor();
    expect(await versionItems(page).count()).toBe(count - 1);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('Restore by keyboard while the server answers: the focus stays on the button and a second Enter restores nothing more', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'Minutes.txt', 'the first draft');
    await autoSaves(o, file.id, 3, MINUTE);
    const { context, page, errors } = await openVersions(o);
    await versionItems(page).first().waitFor();
    const held = await holdRequests(page, '**/versions/*/restore');
    const restore = versionItems(page).nth(1).getByRole('button', { name: 'Restore' });
    await restore.focus();
    await page.keyboard.press('Enter');
    await eventually(async () => expect(held.count()).toBe(1));
    expect(await hasFocus(restore)).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForTimeout(300);
    expect(held.count()).toBe(1);
    held.release();
    await page.getByRole('status').filter({ hasText: 'Restored the version of' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('dark at phone width, an empty list, and a sub-user who may only look', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'Minutes.txt', 'only one');
    {
      const { context, page } = await openVersions(o, { viewport: PHONE, dark: true });
      await page.getByText('No earlier versions yet.').waitFor();
      await context.close();
    }
    await autoSaves(o, file.id, 5, 10 * MINUTE);
    const { context, page, errors } = await openVersions(o, { viewport: PHONE, dark: true });
    await versionItems(page).first().waitFor();
    await screenshot(page, 'versions-dark-phone');
    await expectAccessible(page, 'the Versions tab (dark, phone)');
    expect(errors).toEqual([]);
    await context.close();

    const viewer = await seed.subUser(t, o, []);
    const seen = await openVersions(viewer);
    await versionItems(seen.page).first().waitFor();
    expect(await versionItems(seen.page).getByRole('button', { name: 'Restore' }).count()).toBe(0);
    expect(await versionItems(seen.page).getByRole('link', { name: 'Download' }).count()).toBe(0);
    await screenshot(seen.page, 'versions-light-desktop-viewer');
    await seen.context.close();
  });
});

describe('Admin → Instance', () => {
  test('File versions: Keep versions switches them off and on; the days and the cap per file are saved, and refused when not whole numbers', async () => {
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/instance');
    const section = page.getByRole('region', { name: 'File versions' });
    const keep = section.getByRole('switch', { name: 'Keep versions' });
    await keep.waitFor();
    expect(await keep.isChecked()).toBe(true);
    await keep.click();
    await section.getByText('Saved: off.').waitFor();
    expect(t.server.ctx.services.settings.get('versionsEnabled')).toBe(false);
    await keep.click();
    await section.getByText('Saved: on.').waitFor();

    await section.getByLabel('Days to keep versions').fill('two weeks');
    await section.getByRole('button', { name: 'Save' }).click();
    await section.getByRole('alert').filter({ hasText: 'Days to keep versions must be a whole number.' }).waitFor();
    await section.getByLabel('Days to keep versions').fill('14');
    await section.getByLabel('Versions per file').fill('0');
    await section.getByRole('button', { name: 'Save' }).click();
    await section.getByRole('alert').filter({ hasText: 'Versions per file must be between 1 and 1,000.' }).waitFor();
    await section.getByLabel('Versions per file').fill('50');
    await section.getByRole('button', { name: 'Save' }).click();
    await section.getByText('Saved: daily versions for 14 days, at most 50 per file.').waitFor();
    expect(t.server.ctx.services.settings.versionsView()).toEqual({ enabled: true, retentionDays: 14, maxPerFile: 50 });
    await section.scrollIntoViewIfNeeded();
    await screenshot(page, 'versions-admin-light-desktop');
    await expectAccessible(page, 'Admin → Instance with File versions');
    expect(errors).toEqual([]);
    await context.close();
  });
});
