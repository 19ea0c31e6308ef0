import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { acquireBrowser, releaseBrowser, screenshot, signedInContext } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { listAll } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { tcpProxy } from '../helpers/tcp-proxy.ts';

let t: TestServer;
let browser: Browser;
const picked = tempDir('coffer-picked-');

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
  fs.rmSync(picked, { recursive: true, force: true });
});

const MiB = 1024 * 1024;
const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A file just over the 32 MiB above which the web app uploads through tus; distinct bytes per name. */
function bigFile(seedByte: number): Buffer {
  const b = Buffer.alloc(33 * MiB + 4321);
  for (let i = 0; i < b.length; i += 4096) b[i] = (seedByte + i / 4096) & 0xff;
  return b;
}

function tusRows(accountId: string): Array<{ name: string; state: string }> {
  return t.server.ctx.db.$client
    .query<{ name: string; state: string }, [string]>('SELECT name, state FROM tus_uploads WHERE account_id = ? ORDER BY created_at')
    .all(accountId);
}

/** Picks files written to disk first: handed over as buffers, 33 MiB went through the DevTools protocol as base64 (seconds, 30 under load). */
async function pick(page: Page, files: Array<{ name: string; buffer: Buffer }>) {
  const dir = fs.mkdtempSync(path.join(picked, 'pick-'));
  const paths = files.map((f) => {
    const file = path.join(dir, f.name);
    fs.writeFileSync(file, f.buffer);
    return file;
  });
  const chooser = page.waitForEvent('filechooser');
  await button(page, 'Upload files').click();
  await (await chooser).setFiles(paths);
}

async function downloadSha(login: seed.SeededLogin, name: string): Promise<string> {
  const item = (await listAll(login.client, '/api/files')).find((i) => i.name === name);
  const res = await login.client.get(`/api/files/${item.id}/download`);
  return sha(new Uint8Array(await res.arrayBuffer()));
}

describe('web app: files above 32 MiB go through tus', () => {
  test('a large file uses the resumable endpoint (a small one stays multipart), with progress, and arrives byte-exact', async () => {
    const o = await seed.owner(t);
    const { context, page } = await signedInContext(browser, t.url, o);
    await page.goto('/files');
    const big = bigFile(1);
    await pick(page, [
      { name: 'film.bin', buffer: big },
      { name: 'note.txt', buffer: Buffer.from('small') },
    ]);
    await page.getByRole('progressbar', { name: 'film.bin' }).waitFor();
    await page.getByRole('row', { name: /^film\.bin,/ }).waitFor({ timeout: 30_000 });
    await page.getByRole('row', { name: /^note\.txt,/ }).waitFor();
    expect(tusRows(o.id)).toEqual([{ name: 'film.bin', state: 'completed' }]);
    expect(await downloadSha(o, 'film.bin')).toBe(sha(big));
    await context.close();
  }, 60_000);

  test('a connection cut mid-upload resumes from what the server received: no error shown, the bytes before the cut not sent again', async () => {
    const o = await seed.owner(t);
    // Cuts the first PATCH after 12 MiB of it, as a dropped Wi-Fi link does; the server keeps what arrived.
    const cut = await tcpProxy(Number(new URL(t.url).port), () => {
      let patchBytes = -1;
      return (chunk) => {
        if (cut.cuts > 0) return null;
        if (patchBytes < 0 && chunk.includes('PATCH /api/files/tus/')) patchBytes = 0;
        if (patchBytes < 0) return null;
        patchBytes += chunk.length;
        return patchBytes > 12 * MiB ? chunk.length - (patchBytes - 12 * MiB) : null;
      };
    });
    try {
      const { context, page } = await signedInContext(browser, `http://127.0.0.1:${cut.port}`, o);
      const offsets: number[] = [];
      page.on('request', (r) => {
        if (r.method() === 'PATCH') offsets.push(Number(r.headers()['upload-offset']));
      });
      await page.goto('/files');
      const big = bigFile(2);
      await pick(page, [{ name: 'flaky.bin', buffer: big }]);
      await page.getByRole('row', { name: /^flaky\.bin,/ }).waitFor({ timeout: 30_000 });
      expect(cut.cuts).toBe(1);
      // The first PATCH was cut after 12 MiB; the retry continued from what the server had kept of them.
      expect(offsets[0]).toBe(0);
      expect(offsets.at(-1)!).toBeGreaterThan(11 * MiB);
      expect(offsets.at(-1)!).toBeLessThanOrEqual(12 * MiB);
      expect(await page.getByText('Coffer cannot be reached').count()).toBe(0);
      expect(await downloadSha(o, 'flaky.bin')).toBe(sha(big));
      await context.close();
    } finally {
      cut.close();
    }
  }, 60_000);

  test('Cancel ends the upload on the server (nothing stored, nothing reserved); Retry sends it again', async () => {
    const o = await seed.owner(t);
    const { context, page } = await signedInContext(browser, t.url, o);
    await page.goto('/files');
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 4 * MiB });
    const big = bigFile(3);
    await pick(page, [{ name: 'slow.bin', buffer: big }]);
    const bar = page.getByRole('progressbar', { name: 'slow.bin' });
    await eventually(async () => expect(Number(await bar.getAttribute('value'))).toBeGreaterThan(MiB), { timeoutMs: 20_000 });
    expect(tusRows(o.id)).toEqual([{ name: 'slow.bin', state: 'receiving' }]);
    await screenshot(page, 'upload-resumable-progress-light-desktop');
    await button(page, 'Cancel upload of slow.bin').click();
    await page.getByText('Cancelled').waitFor();
    await eventually(() => expect(tusRows(o.id)).toEqual([]), { timeoutMs: 10_000 });
    expect(t.server.ctx.repos.tusUploads.reserved(o.id)).toBe(0);
    expect(await listAll(o.client, '/api/files')).toEqual([]);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await button(page, 'Retry upload of slow.bin').click();
    await page.getByRole('row', { name: /^slow\.bin,/ }).waitFor({ timeout: 30_000 });
    expect(await downloadSha(o, 'slow.bin')).toBe(sha(big));
    await context.close();
  }, 90_000);
});
