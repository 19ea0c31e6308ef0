import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { acquireBrowser, eventually, expectAccessible, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { folder, listAll, upload } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;

// A 2x2 PNG, enough for the browser to decode and show.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==', 'base64');

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  admin = await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

const row = (page: Page, name: string) => page.getByRole('row', { name: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},`) });
const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });
const names = async (login: seed.SeededLogin, parentId?: string) =>
  (await listAll(login.client, `/api/files?sortBy=name&order=asc${parentId ? `&parentId=${parentId}` : ''}`)).map((i) => i.name as string);

async function openFolder(login: seed.SeededLogin, to = '/files', opts = {}) {
  const opened = await signedInContext(browser, t.url, login, opts);
  await opened.page.goto(to);
  await opened.page.getByRole('navigation', { name: 'Breadcrumb' }).or(opened.page.locator('h1')).first().waitFor();
  return opened;
}

describe('file manager', () => {
  test('uploads: picker with progress rows, a folder tree with its paths, files dropped from the desktop', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await openFolder(o);
    await page.getByText('This folder is empty.').waitFor();
    const chooser = page.waitForEvent('filechooser');
    await button(page, 'Upload files').click();
    await (await chooser).setFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from the browser') },
      { name: 'Überweisung 2024 – 東京.txt', mimeType: 'text/plain', buffer: Buffer.from('unicode') },
    ]);
    await page.getByRole('progressbar', { name: 'notes.txt' }).waitFor();
    await row(page, 'notes.txt').waitFor();
    await row(page, 'Überweisung 2024 – 東京.txt').waitFor();
    expect(await names(o)).toEqual(['notes.txt', 'Überweisung 2024 – 東京.txt']);

    const dir = tempDir('coffer-tree-');
    fs.mkdirSync(path.join(dir, 'trip/day 1'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'trip/plan.md'), '# plan');
    fs.writeFileSync(path.join(dir, 'trip/day 1/photo.txt'), 'photo');
    const folderChooser = page.waitForEvent('filechooser');
    await button(page, 'Upload folder').click();
    await (await folderChooser).setFiles(path.join(dir, 'trip'));
    await row(page, 'trip').waitFor();
    const trip = (await listAll(o.client, '/api/files')).find((i) => i.name === 'trip');
    await eventually(async () => expect(await names(o, trip.id)).toEqual(['day 1', 'plan.md']));
    const day = (await listAll(o.client, `/api/files?parentId=${trip.id}`)).find((i) => i.name === 'day 1');
    expect(await names(o, day.id)).toEqual(['photo.txt']);
    fs.rmSync(dir, { recursive: true, force: true });

    // Files dragged in from the desktop onto the window.
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped'], 'dropped.txt', { type: 'text/plain' }));
      const target = document.querySelector('.browser')!;
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await row(page, 'dropped.txt').waitFor();
    // Dropped onto a folder row: into that folder.
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['into trip'], 'into-trip.txt', { type: 'text/plain' }));
      const target = [...document.querySelectorAll('[role=row]')].find((r) => r.getAttribute('aria-label')?.startsWith('trip,'))!;
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await eventually(async () => expect(await names(o, trip.id)).toContain('into-trip.txt'));
    await expectAccessible(page, 'folder with uploads');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a name that exists: Replace overwrites it, Keep both adds a numbered copy', async () => {
    const o = await seed.owner(t);
    await upload(o.client, 'same.txt', 'old');
    const { context, page } = await openFolder(o);
    await row(page, 'same.txt').waitFor();
    const pick = async (choice: string) => {
      const chooser = page.waitForEvent('filechooser');
      await button(page, 'Upload files').click();
      await (await chooser).setFiles([{ name: 'same.txt', mimeType: 'text/plain', buffer: Buffer.from(`new ${choice}`) }]);
      await page.getByRole('dialog', { name: 'Replace or keep both?' }).waitFor();
      await button(page, choice).click();
    };
    await pick('Replace');
    await eventually(async () => {
      const items = await listAll(o.client, '/api/files');
      expect(items.map((i) => i.name)).toEqual(['same.txt']);
      expect(items[0].size).toBe('new Replace'.length);
    });
    await pick('Keep both');
    await eventually(async () => expect((await names(o)).sort()).toEqual(['same (1).txt', 'same.txt']));
    await context.close();
  });

  test('progress and cancel: a slow upload shows its bar, Cancel stops it and leaves nothing, Retry finishes it', async () => {
    const o = await seed.owner(t);
    const { context, page } = await openFolder(o);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 512 * 1024 });
    const chooser = page.waitForEvent('filechooser');
    await button(page, 'Upload files').click();
    await (await chooser).setFiles([{ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(6 * 1024 * 1024, 7) }]);
    const bar = page.getByRole('progressbar', { name: 'big.bin' });
    await eventually(async () => expect(Number(await bar.getAttribute('value'))).toBeGreaterThan(0), 10_000);
    await screenshot(page, 'upload-progress-light-desktop');
    await button(page, 'Cancel upload of big.bin').click();
    await page.getByText('Cancelled').waitFor();
    await Bun.sleep(300);
    expect(await names(o)).toEqual([]);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await button(page, 'Retry upload of big.bin').click();
    await row(page, 'big.bin').waitFor();
    expect(await names(o)).toEqual(['big.bin']);
    await context.close();
  });
});
