import { describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { apiSettled, eventStreamOpen, holdRequests, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';
import { uploadPhoto } from '../helpers/photos.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverAndBrowser } from '../helpers/suite.ts';

let t: TestServer;
let browser: Browser;

serverAndBrowser((s) => ({ t, browser } = s));

const row = (page: Page, name: string) => page.getByRole('row', { name: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},`) });
const EVENTS = '**/api/files/events**';

/** The page's GET requests, counted by path, as the browser sends them. */
function countRequests(page: Page): (path: string) => number {
  const seen = new Map<string, number>();
  page.on('request', (r) => {
    const { pathname } = new URL(r.url());
    if (r.method() === 'GET') seen.set(pathname, (seen.get(pathname) ?? 0) + 1);
  });
  return (path) => seen.get(path) ?? 0;
}

/** The page's reads are answered, those it defers after a stream goes live (150 ms) too. */
async function settled(page: Page): Promise<void> {
  await page.waitForTimeout(500);
  await apiSettled(page);
}

/** Ends the account's stream on the server, with its reconnect held until `release`: changes made meanwhile reach no stream. */
async function dropAndHold(page: Page, accountId: string) {
  await eventually(() => t.server.ctx.hub.subscriberCount(accountId) === 1);
  await page.unrouteAll();
  const held = await holdRequests(page, EVENTS, 'GET');
  t.server.ctx.hub.endLogin(accountId);
  await eventually(() => held.count() === 1 && t.server.ctx.hub.subscriberCount(accountId) === 0, { timeoutMs: 15_000 });
  return held;
}

// Notifications, stars and a share's end are live-only events (not in the change log a stream replays):
// one sent while the page has no stream subscribed is read again once the stream is live.
describe('live-only events in the gap before a stream is live', () => {
  test('shared while the first stream is on its way: the bell counts it and Shared with me lists it without a reload, one read more each', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    const { context, page, errors } = await signedInContext(browser, t.url, member);
    const requests = countRequests(page);
    const held = await holdRequests(page, EVENTS, 'GET');
    await page.goto('/shared-with-me');
    await page.getByText('Nothing is shared with you yet.').waitFor();
    await apiSettled(page);
    await eventually(() => held.count() === 1 && t.server.ctx.hub.subscriberCount(member.id) === 0);
    expect((await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    await page.waitForTimeout(1500);
    held.release();
    await eventStreamOpen(page);
    await page.getByRole('button', { name: 'Notifications, 1 unread' }).waitFor({ timeout: 10_000 });
    await row(page, 'Family').waitFor({ timeout: 10_000 });
    await settled(page);
    expect(requests('/api/notifications')).toBe(2);
    expect(requests('/api/files/shared-with-me')).toBe(2);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('starred on another device while the stream reconnects: Starred and Home show it, one read more per reconnect', async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'later-star.txt', 'x');
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    const requests = countRequests(page);
    await page.goto('/starred');
    await page.getByText('Nothing starred yet.').waitFor();
    await eventStreamOpen(page);
    await settled(page);
    const before = requests('/api/files/starred');
    const held = await dropAndHold(page, o.id);
    expect((await o.client.post('/api/files/star', { ids: [file.id], starred: true })).status).toBe(200);
    held.release();
    await row(page, 'later-star.txt').waitFor({ timeout: 10_000 });
    await settled(page);
    expect(requests('/api/files/starred')).toBe(before + 1);

    // Home's count of starred files, across the next drop.
    await page.getByRole('link', { name: 'Home' }).click();
    const starred = page.locator('.stat').filter({ hasText: 'Starred' });
    await eventually(async () => (await starred.textContent())?.includes('1') ?? false);
    await settled(page);
    const stats = requests('/api/files/stats');
    const again = await dropAndHold(page, o.id);
    expect((await o.client.post('/api/files/star', { ids: [file.id], starred: false })).status).toBe(200);
    again.release();
    await eventually(async () => (await starred.textContent())?.includes('0') ?? false, { timeoutMs: 10_000 });
    await settled(page);
    expect(requests('/api/files/stats')).toBe(stats + 1);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a share ended while the stream reconnects: the member inside it leaves it, and the bell counts the news', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    await upload(o.client, 'photo.txt', 'p', { parentId: family.id });
    await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'viewer' });
    await member.client.post('/api/notifications/read', { all: true });
    const { context, page, errors } = await signedInContext(browser, t.url, member);
    const requests = countRequests(page);
    await page.goto(`/files/${family.id}`);
    await row(page, 'photo.txt').waitFor();
    await eventStreamOpen(page);
    await settled(page);
    const [notifications, infos] = [requests('/api/notifications'), requests(`/api/files/${family.id}/info`)];
    const held = await dropAndHold(page, member.id);
    expect((await o.client.delete(`/api/files/${family.id}/members/${member.id}`)).status).toBe(200);
    held.release();
    await page.waitForURL('**/shared-with-me', { timeout: 10_000 });
    await page.getByRole('status').filter({ hasText: 'This folder is no longer shared with you' }).waitFor();
    await page.getByRole('button', { name: 'Notifications, 1 unread' }).waitFor({ timeout: 10_000 });
    await settled(page);
    expect(requests('/api/notifications')).toBe(notifications + 1);
    expect(requests(`/api/files/${family.id}/info`)).toBe(infos + 1);
    expect(errors).toEqual([]);
    await context.close();
  });

  test("the bell's list open across a reconnect: a notification sent meanwhile is added to it, in one read", async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const family = await folder(o.client, 'Family');
    const { context, page, errors } = await signedInContext(browser, t.url, member);
    const requests = countRequests(page);
    await page.goto('/files');
    await page.getByRole('button', { name: 'Notifications', exact: true }).click();
    const list = page.getByRole('dialog', { name: 'Notifications' });
    await list.getByText('No notifications yet.').waitFor();
    await eventStreamOpen(page);
    await settled(page);
    const before = requests('/api/notifications');
    const held = await dropAndHold(page, member.id);
    expect((await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    held.release();
    await list.getByRole('button', { name: /shared "Family" with you as viewer/ }).waitFor({ timeout: 10_000 });
    await page.getByRole('button', { name: 'Notifications, 1 unread' }).waitFor();
    await settled(page);
    expect(requests('/api/notifications')).toBe(before + 1);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('Photos showing what is shared too: a folder shared while the stream reconnects brings its photos in, in one read', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const trip = await folder(o.client, 'Trip');
    await uploadPhoto(o.client, 'tram.jpg', await img.photo(1, 480, 360, '2025:06:11 12:00:00'), 480, { parentId: trip.id });
    const { context, page, errors } = await signedInContext(browser, t.url, member);
    const requests = countRequests(page);
    await page.goto('/photos');
    await page.getByRole('radio', { name: 'All' }).waitFor();
    expect(await page.getByRole('radio', { name: 'All' }).isChecked()).toBe(true);
    await eventStreamOpen(page);
    await settled(page);
    const before = requests('/api/files/photos');
    const held = await dropAndHold(page, member.id);
    expect((await o.client.post(`/api/files/${trip.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    held.release();
    await page.getByRole('option', { name: /^tram\.jpg, shared by / }).waitFor({ timeout: 10_000 });
    await settled(page);
    expect(requests('/api/files/photos')).toBe(before + 1);
    expect(errors).toEqual([]);
    await context.close();
  });
});
