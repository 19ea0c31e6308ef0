import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { acquireBrowser, releaseBrowser, signedInContext } from '../test/helpers/browser.ts';
import { TestClient } from '../test/helpers/client.ts';
import { upload } from '../test/helpers/files.ts';
import { median } from './streams.ts';

const STEPS = 20;
const ORIGINAL_RUNS = 5;
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** A camera-like JPEG of `width`×`height`: soft noise over a gradient, so it is as costly to decode as a photo. */
async function cameraJpeg(width: number, height: number, seed: number): Promise<Buffer> {
  const noise = await sharp({
    create: { width, height, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 120 + seed, sigma: 28 } },
  })
    .blur(1.2)
    .raw()
    .toBuffer();
  return sharp(noise, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 88 })
    .toBuffer();
}

// Page source: from each `viewer:step` mark to the `viewer:shown` (or `viewer:original-shown`) mark of the same photo.
const BETWEEN = `((from, to) => {
  const marks = performance.getEntriesByType('mark');
  return marks.filter((m) => m.name === from).map((s) => {
    const end = marks.find((m) => m.name === to && m.detail === s.detail && m.startTime >= s.startTime);
    return end ? end.startTime - s.startTime : null;
  });
})`;

/**
 * `npm run bench -- photo-viewer`: in headless Chromium, the photo viewer's step to the next photo once its
 * neighbours are decoded (performance marks from the key to the frame after the picture is on screen),
 * and a 24 MP original shown after zooming in (from the zoom to the frame after it is decoded and swapped in),
 * the browser's cache off so each run fetches and decodes it.
 */
export async function runPhotoViewerBench(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-viewer-'));
  const server = await startServer(loadConfig({ port: 0, host: '127.0.0.1', dataDir }, { LOG_LEVEL: 'silent' }));
  const browser = await acquireBrowser({ emulatedGpu: true });
  try {
    console.log(`load average at the start: ${load()}`);
    const client = new TestClient(server.url);
    await client.post('/api/signup', { email: 'bench@example.test', password: 'bench password', name: 'Bench' });
    // 21 photos of 12 MP (their 1,600 px thumbnails are what a step shows), and one of 24 MP to zoom into.
    for (let i = 0; i <= STEPS; i++)
      await upload(client, `P${String(i).padStart(3, '0')}.jpg`, await cameraJpeg(4000, 3000, i), { type: 'image/jpeg' });
    const big = await cameraJpeg(6000, 4000, 99);
    const bigFile = await upload(client, 'A-24MP.jpg', big, { type: 'image/jpeg' });
    for (const f of [bigFile]) await client.get(`/api/files/${f.id}/thumbnail?size=large`);
    console.log(`24 MP original: ${(big.byteLength / 1024 / 1024).toFixed(1)} MiB`);

    // 1. Steps: open the first photo, then → every 600 ms (time for the neighbours to be fetched and decoded).
    const { context, page } = await signedInContext(browser, server.url, { client });
    await page.goto('/files');
    const firstTile = page.getByRole('option', { name: 'P000.jpg' }).or(page.getByRole('row', { name: /P000\.jpg/ }));
    await firstTile.dblclick();
    await page.getByRole('dialog', { name: 'P000.jpg' }).waitFor();
    for (let i = 0; i < STEPS; i++) {
      await page.waitForTimeout(600);
      await page.keyboard.press('ArrowRight');
    }
    await page.getByRole('dialog', { name: `P${String(STEPS).padStart(3, '0')}.jpg` }).waitFor();
    await page.waitForTimeout(300);
    const steps = ((await page.evaluate(`${BETWEEN}('viewer:step', 'viewer:shown')`)) as Array<number | null>).filter(
      (x): x is number => x !== null,
    );
    if (steps.length !== STEPS) throw new Error(`${steps.length} steps were shown, not ${STEPS}`);
    console.log(
      `viewer: next photo shown (its neighbours decoded ahead), ${STEPS} steps: median ${median(steps).toFixed(1)} ms, max ${Math.max(...steps).toFixed(1)} ms (target < 50 ms)`,
    );
    await context.close();

    // 2. The 24 MP original: open it, zoom in by the wheel, until the original is on screen. The cache is off.
    const originals: number[] = [];
    for (let run = 0; run < ORIGINAL_RUNS; run++) {
      const opened = await signedInContext(browser, server.url, { client });
      const cdp = await opened.context.newCDPSession(opened.page);
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      await opened.page.goto('/files');
      await opened.page
        .getByRole('option', { name: 'A-24MP.jpg' })
        .or(opened.page.getByRole('row', { name: /A-24MP\.jpg/ }))
        .dblclick();
      const picture = opened.page.locator('dialog.viewer .zoom-area img');
      await opened.page.waitForFunction(() => performance.getEntriesByName('viewer:shown').length > 0);
      const box = (await picture.boundingBox())!;
      await opened.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await opened.page.mouse.wheel(0, -600);
      await opened.page.waitForFunction(() => performance.getEntriesByName('viewer:original-shown').length > 0, null, { timeout: 30_000 });
      const [ms] = (await opened.page.evaluate(`${BETWEEN}('viewer:original-requested', 'viewer:original-shown')`)) as number[];
      originals.push(ms!);
      await opened.context.close();
    }
    console.log(
      `viewer: 24 MP original (${(big.byteLength / 1024 / 1024).toFixed(1)} MiB) shown after zooming in, fetched and decoded, ${ORIGINAL_RUNS} runs: median ${median(originals).toFixed(0)} ms, max ${Math.max(...originals).toFixed(0)} ms (target < 1 s)`,
    );
    console.log(`load average at the end: ${load()}`);
  } finally {
    await releaseBrowser();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
