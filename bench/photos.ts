import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { acquireBrowser, releaseBrowser, signedInContext } from '../test/helpers/browser.ts';
import { TestClient } from '../test/helpers/client.ts';
import { seedRows } from '../test/helpers/files.ts';
import type { TestServer } from '../test/helpers/server.ts';
import { median } from './streams.ts';

const PHOTOS = 100_000;
// One photo in ten is another account's, in a folder it shares with the viewer (issue 48).
const SHARED_EVERY = 10;
const MiB = 1024 * 1024;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

/**
 * `npm run bench -- photos`: GET /api/files/photos over 100,000 photos, 10% of them another account's in a
 * folder shared with the viewer (every page of 200 of All, of Mine and of Shared with me, p50/p99), and the
 * Photos view (All) in headless Chromium: first paint, DOM rows scrolled to the end, JS heap, a jump by the
 * month list. The rows are inserted through the repository (no uploads, so no thumbnails: tiles show the icon).
 */
export async function runPhotosBench(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-photos-'));
  const server = await startServer(loadConfig({ port: 0, host: '127.0.0.1', dataDir }, { LOG_LEVEL: 'silent' }));
  const browser = await acquireBrowser({ emulatedGpu: true });
  try {
    const client = new TestClient(server.url);
    const signup = await client.post('/api/signup', { email: 'bench@example.test', password: 'bench password', name: 'Bench' });
    const { user } = (await signup.json()) as { user: { id: string } };
    // Ada shares a folder of ten subfolders with the viewer; one photo in ten (by time) is in it.
    await server.ctx.services.accounts.createLogin({ email: 'ada@example.test', password: 'bench password', name: 'Ada' });
    const ada = new TestClient(server.url);
    await ada.post('/api/login', { email: 'ada@example.test', password: 'bench password' });
    const adaId = server.ctx.repos.users.byEmailKey('ada@example.test')!.id;
    const holiday = (await (await ada.post('/api/files/folder', { name: 'Holiday' })).json()) as { id: string };
    const added = await ada.post(`/api/files/${holiday.id}/members`, { email: 'bench@example.test', role: 'viewer' });
    if (added.status !== 201) throw new Error(`sharing the folder failed: ${added.status}`);
    const days = seedRows({ server } as unknown as TestServer, adaId, holiday.id, 10, (i) => ({ name: `Day ${i}`, type: 'folder' }));
    // One photo every 40 minutes back from now: about 2,800 days, 92 months; slot k is Ada's when k % 10 is 0.
    const now = Date.now();
    const s0 = performance.now();
    const name = (k: number) => `IMG_${String(k).padStart(6, '0')}.jpg`;
    const own = PHOTOS - PHOTOS / SHARED_EVERY;
    const ownSlot = (i: number) => i + Math.floor(i / (SHARED_EVERY - 1)) + 1;
    for (let done = 0; done < own; done += 10_000) {
      seedRows({ server } as unknown as TestServer, user.id, null, Math.min(10_000, own - done), (i) => ({
        name: name(ownSlot(done + i)),
        mimeType: 'image/jpeg',
        size: 3 * MiB,
        modifiedAt: now - ownSlot(done + i) * 40 * 60_000,
      }));
    }
    const perDay = PHOTOS / SHARED_EVERY / days.length;
    for (const [d, day] of days.entries()) {
      seedRows({ server } as unknown as TestServer, adaId, day, perDay, (i) => {
        const k = (d * perDay + i) * SHARED_EVERY;
        return { name: name(k), mimeType: 'image/jpeg', size: 3 * MiB, modifiedAt: now - k * 40 * 60_000 };
      });
    }
    // A third have a thumbnail record with an EXIF date taken a few days before their modification, as camera photos do.
    const sqlite = server.ctx.db.$client;
    sqlite.run("UPDATE items SET storage_key = 'bench-' || id WHERE account_id IN (?, ?) AND type = 'file' AND seq % 3 = 0", [
      user.id,
      adaId,
    ]);
    sqlite.run(
      `INSERT INTO thumbnails (storage_key, status, small_size, large_size, width, height, taken_at, created_at)
       SELECT storage_key, 'ready', 1, 1, 4000, 3000, modified_at - 86400000 * (seq % 7), ? FROM items WHERE storage_key LIKE 'bench-%'`,
      [now],
    );
    console.log(
      `${PHOTOS.toLocaleString()} photo rows inserted in ${((performance.now() - s0) / 1000).toFixed(1)} s (a third with a date taken; ${(PHOTOS / SHARED_EVERY).toLocaleString()} of them Ada's, in a folder of ${days.length} subfolders shared with the viewer)`,
    );

    // 1. The endpoint: every page of 200 from the newest to the oldest for each choice of whose, a page of each in
    // turn, so the machine's load weighs on all three alike; process CPU (server and client: one process) per page.
    let oldest = '';
    const walks = (
      [
        ['all', PHOTOS],
        ['mine', own],
        ['shared', PHOTOS / SHARED_EVERY],
      ] as const
    ).map(([whose, want]) => ({
      whose,
      want,
      cursor: null as string | null,
      done: false,
      seen: 0,
      times: [] as number[],
      cpu: [] as number[],
    }));
    while (walks.some((w) => !w.done)) {
      for (const w of walks.filter((x) => !x.done)) {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        const res = await client.get(
          `/api/files/photos?whose=${w.whose}&limit=200${w.cursor ? `&cursor=${encodeURIComponent(w.cursor)}` : ''}`,
        );
        const page = (await res.json()) as Array<{ name: string }>;
        w.times.push(performance.now() - t0);
        const cpu = process.cpuUsage(cpu0);
        w.cpu.push((cpu.user + cpu.system) / 1000);
        w.seen += page.length;
        // The oldest in the Photos order (by date taken, which a third have days before their modification).
        if (w.whose === 'all') oldest = page.at(-1)?.name ?? oldest;
        w.cursor = res.headers.get('x-next-cursor');
        w.done = w.cursor === null;
      }
    }
    for (const w of walks) {
      if (w.seen !== w.want) throw new Error(`paged through ${w.seen} photos of ${w.whose}, not ${w.want}`);
      console.log(
        `GET /api/files/photos?whose=${w.whose}, ${w.times.length} pages of 200 over ${w.want.toLocaleString()} photos: p50 ${median(w.times).toFixed(1)} ms, p99 ${pct(w.times, 99).toFixed(1)} ms, max ${Math.max(...w.times).toFixed(1)} ms; process CPU p50 ${median(w.cpu).toFixed(2)} ms, mean ${(w.cpu.reduce((x, y) => x + y, 0) / w.cpu.length).toFixed(2)} ms a page`,
      );
    }
    const [all, mine] = walks;
    console.log(
      `whose=all / whose=mine, per page: p50 time ${(median(all!.times) / median(mine!.times)).toFixed(2)}×, p50 CPU ${(median(all!.cpu) / median(mine!.cpu)).toFixed(2)}×`,
    );

    // 2. The Photos view: first paint (the first tile on screen), median of 5 fresh navigations.
    const { context, page } = await signedInContext(browser, server.url, { client });
    // Whichever photo is newest (own or Ada's, by the date taken).
    const first = page.getByRole('listbox', { name: 'Photos' }).getByRole('option').first();
    // All (the default) and Mine alternately, so the machine's load weighs on both alike.
    const paints: Record<'all' | 'mine', number[]> = { all: [], mine: [] };
    // The API requests answered between the click and the first tile (thumbnails aside), and their bytes, each view's last time.
    const before: Record<'all' | 'mine', { urls: string[]; bytes: number }> = { all: { urls: [], bytes: 0 }, mine: { urls: [], bytes: 0 } };
    let counting: { urls: string[]; bytes: number } | null = null;
    const sent = new WeakSet<object>();
    page.on('request', (req) => {
      if (counting) sent.add(req);
    });
    page.on('response', (res) => {
      const url = new URL(res.url());
      if (!counting || !sent.has(res.request()) || !url.pathname.startsWith('/api/') || url.pathname.endsWith('/thumbnail')) return;
      counting.urls.push(`${url.pathname}${url.search.replace(/cursor=[^&]+/, 'cursor=…')}`);
      counting.bytes += Number(res.headers()['content-length'] ?? 0);
    });
    for (let i = 0; i < 12; i++) {
      const whose = i % 2 === 0 ? 'all' : 'mine';
      await page.goto('/files');
      await page.evaluate((w) => (globalThis as any).localStorage.setItem('coffer.photosWhose', w), whose);
      await page.goto('/files');
      await page.getByRole('link', { name: 'Photos', exact: true }).waitFor();
      const t0 = performance.now();
      before[whose] = counting = { urls: [], bytes: 0 };
      await page.getByRole('link', { name: 'Photos', exact: true }).click();
      await first.waitFor({ timeout: 60_000 });
      counting = null;
      if (i > 1) paints[whose].push(performance.now() - t0);
    }
    for (const whose of ['all', 'mine'] as const)
      console.log(
        `Photos view (${whose}) before the first tile: ${before[whose].urls.length} API requests (${before[whose].urls.join(', ')}), ${(before[whose].bytes / 1024).toFixed(1)} KiB`,
      );
    for (const whose of ['all', 'mine'] as const)
      console.log(
        `Photos view (${whose}) first paint (first tile shown after the click): median ${median(paints[whose]).toFixed(0)} ms of 5 (max ${Math.max(...paints[whose]).toFixed(0)}; target < 500 ms)`,
      );
    await page.evaluate(() => (globalThis as any).localStorage.setItem('coffer.photosWhose', 'all'));
    await page.goto('/photos');
    await first.waitFor({ timeout: 60_000 });

    // Every page arrives in the background; then the month list is complete.
    const l0 = performance.now();
    await page.getByText(`${PHOTOS.toLocaleString()} photos`, { exact: true }).waitFor({ timeout: 600_000 });
    console.log(`all ${PHOTOS.toLocaleString()} photos loaded in the background in ${((performance.now() - l0) / 1000).toFixed(1)} s`);

    // 3. A jump by the month list to a month in the middle.
    const months = page.getByRole('navigation', { name: 'Jump to month' }).getByRole('button');
    const count = await months.count();
    const target = months.nth(Math.floor(count / 2));
    const label = (await target.textContent())!;
    const j0 = performance.now();
    await target.click();
    await page.waitForFunction(
      (want) => {
        const doc = (globalThis as any).document;
        return doc.querySelector('.photo-month.sticky')?.textContent === want && doc.querySelector('.photo img, .photo svg') !== null;
      },
      label,
      { polling: 'raf' },
    );
    const jumpMs = performance.now() - j0;
    console.log(
      `jump to ${label} (month ${Math.floor(count / 2) + 1} of ${count}) by the month list: ${jumpMs.toFixed(0)} ms (target < 300 ms)`,
    );

    // 4. Scrolled to the end: what is in the DOM, and the JS heap.
    await page.locator('.photo-grid').evaluate((el: any) => {
      el.scrollTop = el.scrollHeight;
    });
    await page.getByRole('option', { name: new RegExp(`^${oldest.replace('.', '\\.')}`) }).waitFor({ timeout: 60_000 });
    const rows = await page.locator('.photo-row, .photo-month:not(.sticky), .photo-day').count();
    const tiles = await page.getByRole('option').count();
    const cdp = await context.newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const heap = metrics.find((m) => m.name === 'JSHeapUsedSize')!.value;
    console.log(
      `scrolled to the end: ${rows} rows (${tiles} tiles) in the DOM (target < 300 rows), JS heap ${(heap / MiB).toFixed(1)} MiB (target < 150 MiB)`,
    );
    await context.close();
  } finally {
    await releaseBrowser();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
