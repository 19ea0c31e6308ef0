import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/server.ts';
import { acquireBrowser, releaseBrowser, signedInContext } from '../test/helpers/browser.ts';
import { TestClient } from '../test/helpers/client.ts';
import { seedRows } from '../test/helpers/files.ts';
import type { TestServer } from '../test/helpers/server.ts';
import { median } from './streams.ts';

const ROOT = path.resolve(import.meta.dir, '..');
const KiB = 1024;
const MiB = 1024 * 1024;
const GiB = 1024 ** 3;
const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

async function rowShown(page: Page, name: string): Promise<void> {
  await page.getByRole('row', { name: new RegExp(`^${name},`) }).waitFor({ timeout: 60_000 });
}

/** Sizes of dist/coffer without and with the embedded web app, each built the way `npm run build` does. */
function executableGrowth(): { without: number; with: number } {
  const build = (args: string[]) => {
    const r = Bun.spawnSync([process.execPath, ...args], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' });
    if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  };
  const bare = path.join(os.tmpdir(), `coffer-bare-${process.pid}`);
  build(['build', '--compile', '--minify', '--sourcemap', '--bytecode', '--format=esm', 'src/main.ts', '--outfile', bare]);
  const without = fs.statSync(bare).size;
  fs.rmSync(bare, { force: true });
  fs.rmSync(`${bare}.map`, { force: true });
  build(['run', 'build']);
  return { without, with: fs.statSync(path.join(ROOT, 'dist/coffer')).size };
}

/**
 * `npm run bench -- web`: the figures for the web app, measured in headless Chromium against the
 * real server (in this process, on a temp data dir): first-load bytes, time to a rendered 200-item
 * folder, a 100,000-item folder scrolled to its end, a 1 GiB upload against curl's, and executable growth.
 */
export async function runWebBench(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-web-'));
  const server = await startServer(loadConfig({ port: 0, host: '127.0.0.1', dataDir }, { LOG_LEVEL: 'silent' }));
  const browser = await acquireBrowser({ emulatedGpu: true });
  const bigFile = path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), `coffer-bench-1g-${process.pid}`);
  try {
    const client = new TestClient(server.url);
    const signup = await client.post('/api/signup', { email: 'bench@example.test', password: 'bench password', name: 'Bench' });
    const { user } = (await signup.json()) as { user: { id: string } };
    const login = { client };
    const asTest = { server } as unknown as TestServer;
    const folder = async (name: string) => (await (await client.post('/api/files/folder', { name })).json()) as { id: string };

    // 1. First load: JS + CSS as transferred (brotli) for the file manager.
    const page0 = await (await fetch(`${server.url}/files`, { headers: { accept: 'text/html' } })).text();
    let transferred = 0;
    for (const [, asset] of page0.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)) {
      const res = await fetch(`${server.url}${asset}`, { headers: { 'accept-encoding': 'br, gzip' }, decompress: false });
      transferred += (await res.arrayBuffer()).byteLength;
    }
    console.log(`first load JS+CSS transferred: ${(transferred / KiB).toFixed(1)} KiB brotli (target <= 120 KiB)`);

    // 2. Navigation to a rendered 200-item folder, warm server, median of 10.
    const f200 = await folder('two-hundred');
    seedRows(asTest, user.id, f200.id, 200, (i) => ({ name: `file-${String(i).padStart(3, '0')}.txt`, size: i * 1000 }));
    const { context, page } = await signedInContext(browser, server.url, login);
    await page.goto('/');
    await page.getByRole('link', { name: 'My files' }).waitFor();
    const times: number[] = [];
    for (let i = 0; i < 11; i++) {
      const t0 = performance.now();
      await page.goto(`/files/${f200.id}`);
      await rowShown(page, 'file-000.txt');
      await page.getByText('200 items').waitFor();
      if (i > 0) times.push(performance.now() - t0);
    }
    console.log(
      `navigation to a rendered 200-item folder: median ${median(times).toFixed(0)} ms of 10 (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}; target <= 400 ms)`,
    );

    // 3. A 100,000-item folder scrolled to the end.
    const f100k = await folder('hundred-thousand');
    for (let done = 0; done < 100_000; done += 10_000) {
      seedRows(asTest, user.id, f100k.id, 10_000, (i) => ({ name: `entry-${String(done + i).padStart(6, '0')}.dat`, size: done + i }));
    }
    await page.goto(`/files/${f100k.id}`);
    await rowShown(page, 'entry-000000.dat');
    const s0 = performance.now();
    for (let i = 0; i < 2000; i++) {
      await page.locator('.scroller').evaluate((el: any) => {
        el.scrollTop = el.scrollHeight;
      });
      if ((await page.getByRole('row', { name: /^entry-099999\.dat,/ }).count()) > 0) break;
      await page.waitForTimeout(20);
    }
    await rowShown(page, 'entry-099999.dat');
    const scrollMs = performance.now() - s0;
    const rows = await page.locator('[role=row]').count();
    const cdp = await context.newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const heap = metrics.find((m) => m.name === 'JSHeapUsedSize')!.value;
    console.log(
      `100,000-item folder scrolled to the end in ${(scrollMs / 1000).toFixed(1)} s: ${rows} rows in the DOM (target < 300), JS heap ${mib(heap)} (target < 100 MiB)`,
    );

    // 4. A 1 GiB upload: the browser's multipart upload against curl's, same server, same run.
    const block = Buffer.alloc(MiB);
    for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i);
    const fd = fs.openSync(bigFile, 'w');
    for (let i = 0; i < 1024; i++) fs.writeSync(fd, block);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    const up = await folder('uploads');
    const token = client.cookies.get('token')!;
    const c0 = performance.now();
    // Asynchronous: the server runs in this process and must keep answering while curl sends.
    const curl = Bun.spawn(
      [
        'curl',
        '-sS',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '-b',
        `token=${token}`,
        '-F',
        `parentId=${up.id}`,
        '-F',
        `file=@${bigFile};filename=curl.bin`,
        `${server.url}/api/files/upload`,
      ],
      {
        stdout: 'pipe',
        stderr: 'pipe',
      },
    );
    const code = await new Response(curl.stdout).text();
    await curl.exited;
    const curlS = (performance.now() - c0) / 1000;
    if (code !== '200') throw new Error(`curl upload failed: ${code} ${await new Response(curl.stderr).text()}`);
    await page.goto(`/files/${up.id}`);
    await rowShown(page, 'curl.bin');
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Upload files', exact: true }).click();
    const b0 = performance.now();
    await (await chooser).setFiles(bigFile);
    await page.getByText(/^Uploaded · /).waitFor({ timeout: 600_000 });
    const browserS = (performance.now() - b0) / 1000;
    const rate = (s: number) => GiB / MiB / s;
    console.log(
      `1 GiB upload: curl ${rate(curlS).toFixed(0)} MiB/s (${curlS.toFixed(1)} s), browser ${rate(browserS).toFixed(0)} MiB/s (${browserS.toFixed(1)} s) = ${((100 * curlS) / browserS).toFixed(0)}% of curl (target >= 70%)`,
    );
    await context.close();
  } finally {
    fs.rmSync(bigFile, { force: true });
    await releaseBrowser();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }

  // 5. Executable growth from embedding the app.
  const size = executableGrowth();
  console.log(
    `executable: ${mib(size.without)} without the web app, ${mib(size.with)} with it: +${((size.with - size.without) / KiB).toFixed(0)} KiB (target < 2 MiB)`,
  );
}
