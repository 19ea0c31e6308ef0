import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import {
  acquireBrowser,
  eventStreamOpen,
  expectAccessible,
  holdRequests,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
} from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer({ startWorker: false }), acquireBrowser()]);
  await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

/** An owner whose sub-user Dana uploaded three photos to Holidays/2026, and then renamed one. */
async function holidays() {
  const o = await seed.owner(t);
  const dana = await seed.subUser(t, o, ['files.upload', 'files.edit']);
  t.server.ctx.repos.users.setName(dana.id, 'Dana', Date.now());
  const top = await folder(o.client, 'Holidays');
  const year = await folder(o.client, '2026', top.id);
  const files = [];
  for (const name of ['a.jpg', 'b.jpg', 'c.jpg']) files.push(await upload(dana.client, name, name, { parentId: year.id }));
  await dana.client.post('/api/files/rename', { id: files[0].id, name: 'beach.jpg' });
  return { o, dana, top, year, files };
}

const entries = (page: Page) => page.getByRole('region', { name: 'Changes' }).getByRole('listitem');

describe('Activity', () => {
  test('the sidebar entry: by day, who did what to which item with a link, uploads grouped, filters by kind and person', async () => {
    const { o, dana, year } = await holidays();
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/files');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Activity' }).click();
    await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Today' }).waitFor();
    const texts = (await entries(page).allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
    expect(texts[0]).toStartWith('Dana renamed beach.jpg (was a.jpg)');
    expect(texts[1]).toStartWith('Dana uploaded 3 files to Holidays/2026');
    expect(texts[2]).toStartWith('You created 2026');
    expect(texts[3]).toStartWith('You created Holidays');
    expect(await entries(page).nth(1).getByRole('link', { name: 'Holidays/2026' }).getAttribute('href')).toBe(`/files/${year.id}`);
    await screenshot(page, 'activity-light-desktop');
    await expectAccessible(page, 'Activity (light, desktop)');

    await page.getByLabel('Change', { exact: true }).selectOption('item.renamed');
    await page.waitForURL(/kind=item\.renamed/);
    await eventually(async () => expect(await entries(page).count()).toBe(1));
    await page.getByLabel('Change', { exact: true }).selectOption('');
    await page.getByLabel('Person', { exact: true }).selectOption(o.id);
    await eventually(async () => expect(await entries(page).count()).toBe(2));
    await page.getByLabel('Person', { exact: true }).selectOption(dana.id);
    await eventually(async () => expect(await entries(page).count()).toBe(2));

    // Following an item's link opens its folder.
    await entries(page).first().getByRole('link', { name: 'beach.jpg' }).click();
    await page.waitForURL(`**/files/${year.id}`);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('more changes than one page: the next is read at the end of the list; a filter chosen meanwhile shows only what it matches, not that late page', async () => {
    const o = await seed.owner(t);
    for (let i = 0; i < 60; i++) await folder(o.client, `Box ${String(i).padStart(2, '0')}`);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto('/activity');
    await page.getByRole('heading', { name: 'Today' }).waitFor();
    const held = await holdRequests(page, '**/api/activity?*cursor=*', 'GET');
    await page.locator('.activity-more').scrollIntoViewIfNeeded();
    await eventually(async () => expect(held.count()).toBe(1));
    await page.getByLabel('Change', { exact: true }).selectOption('item.renamed');
    await page.getByText('No changes yet.').waitFor();
    held.release();
    await page.waitForTimeout(500);
    expect(await page.getByText(/^You created Box/).count()).toBe(0);
    await page.getByLabel('Change', { exact: true }).selectOption('');
    await page.getByText('You created Box 59').waitFor();
    await page.locator('.activity-more').scrollIntoViewIfNeeded();
    await page.getByText('You created Box 00').waitFor();
    expect(await page.getByText(/^You created Box/).count()).toBe(60);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('dark at phone width, and a new change appears without reloading', async () => {
    const { o, year } = await holidays();
    const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, dark: true });
    await page.goto('/activity');
    await entries(page).first().waitFor();
    await screenshot(page, 'activity-dark-phone');
    await expectAccessible(page, 'Activity (dark, phone)');
    await eventStreamOpen(page);
    await upload(o.client, 'later.jpg', 'x', { parentId: year.id });
    await entries(page).filter({ hasText: 'You uploaded later.jpg' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('after a short drop the app resumes after its last event id: a change made meanwhile shows, no folder is listed again without one', async () => {
    const { o, year } = await holidays();
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    const streams: Array<string | undefined> = [];
    const listings: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname === '/api/files/events') streams.push(url.searchParams.get('lastEventId') ?? undefined);
      if (url.pathname === '/api/files') listings.push(url.search);
    });
    await page.goto(`/files/${year.id}`);
    await page.getByRole('row', { name: /^beach\.jpg,/ }).waitFor();
    await eventually(() => streams.length === 1 && t.server.ctx.hub.subscriberCount(o.id) === 1);

    // The server ends the stream (as a dropped connection would): the app reconnects, with its last id.
    const listed = listings.length;
    t.server.ctx.hub.endLogin(o.id);
    await eventually(() => streams.length === 2 && t.server.ctx.hub.subscriberCount(o.id) === 1, { timeoutMs: 15_000 });
    expect(streams[1]).toMatch(/^\d+$/);
    await page.waitForTimeout(500);
    expect(listings.length).toBe(listed);

    t.server.ctx.hub.endLogin(o.id);
    await upload(o.client, 'while-away.jpg', 'w', { parentId: year.id });
    await page.getByRole('row', { name: /^while-away\.jpg,/ }).waitFor({ timeout: 15_000 });
    expect(streams).toHaveLength(3);
    expect(Number(streams[2])).toBeGreaterThanOrEqual(Number(streams[1]));
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a change made while the first stream is still on its way shows once it is live; with none, nothing is listed again', async () => {
    const { o, year } = await holidays();
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    const listings: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/files') listings.push(r.url());
    });
    // Nothing changes while the stream is held: the folder is listed once.
    let held = await holdRequests(page, '**/api/files/events**', 'GET');
    await page.goto(`/files/${year.id}`);
    await page.getByRole('row', { name: /^beach\.jpg,/ }).waitFor();
    await eventually(() => held.count() === 1);
    await page.waitForTimeout(1000);
    held.release();
    await eventStreamOpen(page);
    await eventually(() => t.server.ctx.hub.subscriberCount(o.id) === 1);
    await page.waitForTimeout(500);
    expect(listings).toHaveLength(1);

    // Another device uploads after the folder was read and before the stream is subscribed on the server.
    await page.unrouteAll();
    held = await holdRequests(page, '**/api/files/events**', 'GET');
    await page.reload();
    await page.getByRole('row', { name: /^beach\.jpg,/ }).waitFor();
    await eventually(() => held.count() === 1 && t.server.ctx.hub.subscriberCount(o.id) === 0);
    await upload(o.client, 'meanwhile.jpg', 'm', { parentId: year.id });
    await page.waitForTimeout(1000);
    held.release();
    await page.getByRole('row', { name: /^meanwhile\.jpg,/ }).waitFor({ timeout: 15_000 });
    expect(errors).toEqual([]);
    await context.close();
  });

  test("the details pane's Activity tab: a file's own history, a folder's with what changed inside", async () => {
    const { o, year } = await holidays();
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    await page.goto(`/files/${year.id}`);
    await page.getByRole('row', { name: /^beach\.jpg,/ }).click();
    await page.getByRole('button', { name: 'Details', exact: true }).click();
    await page.getByRole('tab', { name: 'Activity' }).click();
    const panel = page.getByRole('tabpanel', { name: 'Activity' });
    await panel.getByRole('listitem').first().waitFor();
    const lines = (await panel.getByRole('listitem').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
    expect(lines).toHaveLength(2);
    expect(lines[0]).toStartWith('Dana renamed beach.jpg');
    expect(lines[1]).toStartWith('Dana uploaded a.jpg');
    await screenshot(page, 'activity-tab-light-desktop');
    await expectAccessible(page, 'the Activity tab of a file');

    await page.goto('/files');
    await page.getByRole('row', { name: /^Holidays,/ }).click();
    await page.getByRole('button', { name: 'Details', exact: true }).click();
    await page.getByRole('tab', { name: 'Activity' }).click();
    await panel.getByRole('listitem').filter({ hasText: 'Dana uploaded 3 files to Holidays/2026' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});
