import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { acquireBrowser, expectAccessible, openContext, PHONE, releaseBrowser, screenshot } from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import { folder, listAll, upload } from '../helpers/files.ts';
import { png } from '../helpers/images.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

describe('public pages', () => {
  test('each file chosen is sent at once with its own row; one refused says why beside it and nothing reloads', async () => {
    const o = await seed.owner(t);
    const inbox = await folder(o.client, 'Scans');
    const links = (await json(await o.client.post('/api/files/share', { ids: [inbox.id], shared: true, mode: 'upload' }))).links;
    const { context, page, errors } = await openContext(browser, t.url, { viewport: PHONE, dark: true, touch: true });
    await page.goto(new URL(links[inbox.id]).pathname);
    await page.getByText('Files you send go to Owner’s folder Scans.').waitFor();
    // The second request is refused as a full disk would be; the first goes through.
    let calls = 0;
    await page.route('**/upload', (route) =>
      ++calls === 2
        ? route.fulfill({ status: 507, contentType: 'application/json', body: JSON.stringify({ message: 'Not enough space left' }) })
        : route.fallback(),
    );
    await page.getByLabel('Choose files to upload').setInputFiles([
      { name: 'page-1.txt', mimeType: 'text/plain', buffer: Buffer.from('one') },
      { name: 'page-2.txt', mimeType: 'text/plain', buffer: Buffer.from('two') },
    ]);
    const rows = page.getByRole('list', { name: 'Files being sent' });
    await rows.getByRole('listitem').filter({ hasText: 'page-2.txt' }).getByText('not sent: Not enough space left').waitFor();
    await rows.getByRole('listitem').filter({ hasText: 'page-1.txt' }).getByText('sent', { exact: true }).waitFor();
    await page.getByRole('status').filter({ hasText: '1 of 2 file(s) not sent' }).waitFor();
    expect(await page.getByRole('progressbar', { name: 'Progress of page-1.txt' }).getAttribute('value')).toBe('1');
    await expectAccessible(page, 'drop page, one file refused, dark phone');
    await screenshot(page, 'share-drop-refused-dark-phone');
    expect((await listAll(o.client, `/api/files?parentId=${inbox.id}`)).map((i: { name: string }) => i.name)).toEqual(['page-1.txt']);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a folder named with a long word (no spaces): the page stays 390 px wide, the line that names it breaks inside', async () => {
    const o = await seed.owner(t);
    const name = `Scans${'0123456789'.repeat(9)}END`;
    const inbox = await folder(o.client, name);
    const links = (await json(await o.client.post('/api/files/share', { ids: [inbox.id], shared: true, mode: 'upload' }))).links;
    const { context, page, errors } = await openContext(browser, t.url, { viewport: PHONE, dark: true, touch: true });
    await page.goto(new URL(links[inbox.id]).pathname);
    const line = page.getByText(`Files you send go to Owner’s folder ${name}.`);
    await line.waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0);
    expect(await line.evaluate((el: any) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await screenshot(page, 'share-drop-long-name-dark-phone');
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a long owner name and long file names without spaces: at 390 px each public page stays on the screen, nothing wider than it', async () => {
    const o = await seed.owner(t);
    t.server.ctx.repos.users.setName(o.id, `Ada${'Lovelace'.repeat(7)}`, Date.now());
    const long = (stem: string) => `${stem}${'0123456789'.repeat(8)}.txt`;
    const top = await folder(o.client, `Holidays${'0123456789'.repeat(6)}`);
    const inner = await folder(o.client, `Summer${'0123456789'.repeat(6)}`, top.id);
    await upload(o.client, long('notes'), 'some notes', { parentId: inner.id });
    const file = await upload(o.client, long('report'), 'a report', { type: 'text/plain' });
    await upload(o.client, `beach${'0123456789'.repeat(8)}.png`, await png(600, 400), { parentId: top.id, type: 'image/png' });
    const links = (
      await json(await o.client.post('/api/files/share', { ids: [top.id, file.id], shared: true, expiry: '7d', maxDownloads: 5 }))
    ).links;
    const { context, page, errors } = await openContext(browser, t.url, { viewport: PHONE, dark: true, touch: true });
    const wider = () =>
      page.evaluate(() => {
        const d = (globalThis as any).document;
        const width = d.documentElement.clientWidth;
        return (
          [...d.body.querySelectorAll('*')]
            .filter((el: any) => el.getClientRects().length && el.getBoundingClientRect().right > width + 0.5 && !el.closest('.sr-only'))
            // Cut off inside a box that clips it (an ellipsis), it shows no wider than that box.
            .filter((el: any) => {
              for (let up = el.parentElement; up; up = up.parentElement)
                if ((globalThis as any).getComputedStyle(up).overflowX !== 'visible' && up.getBoundingClientRect().right <= width + 0.5)
                  return false;
              return true;
            })
            .map((el: any) => `${el.tagName.toLowerCase()}.${el.className}: ${el.textContent.slice(0, 30)}`)
        );
      });
    await page.goto(new URL(links[file.id]).pathname);
    await page.getByRole('link', { name: 'Download' }).waitFor();
    await page.getByText(`Shared by Ada${'Lovelace'.repeat(7)}`).waitFor();
    await screenshot(page, 'share-file-long-names-dark-phone');
    expect(await wider()).toEqual([]);
    await page.goto(new URL(links[top.id]).pathname);
    const picture = page.getByRole('list', { name: 'Pictures' }).getByRole('link');
    await eventually(async () => {
      await page.reload();
      expect(await picture.count()).toBe(1);
    });
    await picture.click();
    await page
      .getByRole('dialog', { name: /^beach/ })
      .getByRole('link', { name: 'Close' })
      .waitFor();
    await screenshot(page, 'share-picture-long-name-dark-phone');
    expect(await wider()).toEqual([]);
    await page
      .getByRole('dialog', { name: /^beach/ })
      .getByRole('link', { name: 'Close' })
      .click();
    await page.getByRole('link', { name: /^Summer/ }).click();
    await page.getByRole('link', { name: /^notes/ }).waitFor();
    await screenshot(page, 'share-folder-long-names-dark-phone');
    expect(await wider()).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a shared video is a player in the page, muted, with Download beside it (light desktop, dark phone)', async () => {
    const o = await seed.owner(t);
    const clip = await upload(o.client, 'holiday.mp4', new Uint8Array(2048).fill(1), { type: 'video/mp4' });
    const links = (await json(await o.client.post('/api/files/share', { ids: [clip.id], shared: true }))).links;
    for (const [opts, tag] of [
      [{}, 'light-desktop'],
      [{ viewport: PHONE, dark: true, touch: true }, 'dark-phone'],
    ] as const) {
      const { context, page, errors } = await openContext(browser, t.url, opts);
      await page.goto(new URL(links[clip.id]).pathname);
      const video = page.locator('video.preview');
      await video.waitFor();
      expect(await video.evaluate((v: any) => v.muted && v.paused && v.controls)).toBe(true);
      await page.getByText('Shared by Owner').waitFor();
      await expectAccessible(page, `shared video ${tag}`);
      await screenshot(page, `share-video-${tag}`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});
