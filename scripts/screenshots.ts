import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

/**
 * Screenshots of the web app before and after a change (light, dark, desktop and 390 px phone, as the browser
 * tests take them).
 *
 *   bun scripts/screenshots.ts take <dir> [name…]      runs test/ui/<name>.test.ts (default: every browser test
 *                                                     that takes screenshots) one file at a time, saving into <dir>
 *   bun scripts/screenshots.ts compare <before> <after> lists each picture that differs (changed pixels and their
 *                                                     box) or exists on one side only, and writes a crop of the
 *                                                     changed region, before beside after, into <after>/diff/
 *
 * Relative times ("1 min ago"), generated names and random test data differ between any two runs: read the
 * crops before calling a difference a change.
 */

const ROOT = path.join(import.meta.dir, '..');
const UI = path.join(ROOT, 'test', 'ui');

function takers(): string[] {
  return fs
    .readdirSync(UI)
    .filter((f) => f.endsWith('.test.ts') && fs.readFileSync(path.join(UI, f), 'utf8').includes('screenshot('))
    .map((f) => f.slice(0, -'.test.ts'.length));
}

async function take(dir: string, names: string[]): Promise<number> {
  fs.mkdirSync(dir, { recursive: true });
  let failed = 0;
  for (const name of names.length ? names : takers()) {
    // One file at a time: the browser tests share the machine's cores with everything else.
    const run = Bun.spawn(['bun', 'test', '--timeout', '300000', `test/ui/${name}.test.ts`], {
      cwd: ROOT,
      env: { ...process.env, COFFER_SCREENSHOTS: path.resolve(dir) },
      stdout: 'ignore',
      stderr: 'pipe',
    });
    const log = await new Response(run.stderr).text();
    const code = await run.exited;
    console.log(`${name}: ${code === 0 ? 'done' : `failed (exit ${code}); its pictures may be missing`}`);
    if (code !== 0) {
      failed++;
      fs.writeFileSync(path.join(dir, `${name}.log`), log);
    }
  }
  return failed ? 1 : 0;
}

interface Raw {
  data: Buffer;
  info: { width: number; height: number; channels: number };
}

/** The box of the pixels that differ, or null when none does. */
function changedBox(a: Raw, b: Raw): { x0: number; y0: number; x1: number; y1: number; count: number } | null {
  const { width: w, height: h, channels: ch } = a.info;
  let [x0, y0, x1, y1, count] = [w, h, -1, -1, 0];
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * ch;
      for (let c = 0; c < ch; c++)
        if (a.data[i + c] !== b.data[i + c]) {
          count++;
          x0 = Math.min(x0, x);
          y0 = Math.min(y0, y);
          x1 = Math.max(x1, x);
          y1 = Math.max(y1, y);
          break;
        }
    }
  return count ? { x0, y0, x1, y1, count } : null;
}

async function compare(before: string, after: string): Promise<number> {
  const pngs = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.png')) : []);
  const names = [...new Set([...pngs(before), ...pngs(after)])].sort();
  const diffDir = path.join(after, 'diff');
  fs.mkdirSync(diffDir, { recursive: true });
  let same = 0;
  for (const n of names) {
    const [a, b] = [path.join(before, n), path.join(after, n)];
    if (!fs.existsSync(a) || !fs.existsSync(b)) {
      console.log(`${n}: only ${fs.existsSync(a) ? 'before' : 'after'}`);
      continue;
    }
    const [ra, rb] = await Promise.all([
      sharp(a).raw().toBuffer({ resolveWithObject: true }),
      sharp(b).raw().toBuffer({ resolveWithObject: true }),
    ]);
    if (ra.info.width !== rb.info.width || ra.info.height !== rb.info.height) {
      console.log(`${n}: ${ra.info.width}×${ra.info.height} before, ${rb.info.width}×${rb.info.height} after`);
      continue;
    }
    const box = changedBox(ra, rb);
    if (!box) {
      same++;
      continue;
    }
    const { width: w, height: h } = ra.info;
    const pct = ((100 * box.count) / (w * h)).toFixed(2);
    console.log(`${n}: ${box.count} pixels (${pct}%) in x ${box.x0}-${box.x1}, y ${box.y0}-${box.y1}`);
    const left = Math.max(0, box.x0 - 20);
    const top = Math.max(0, box.y0 - 20);
    const region = { left, top, width: Math.min(w - left, box.x1 - box.x0 + 41), height: Math.min(h - top, box.y1 - box.y0 + 41) };
    const [ca, cb] = await Promise.all([sharp(a).extract(region).png().toBuffer(), sharp(b).extract(region).png().toBuffer()]);
    await sharp({ create: { width: region.width * 2 + 10, height: region.height, channels: 3, background: '#ff00ff' } })
      .composite([
        { input: ca, left: 0, top: 0 },
        { input: cb, left: region.width + 10, top: 0 },
      ])
      .png()
      .toFile(path.join(diffDir, n));
  }
  console.log(`${same} of ${names.length} identical`);
  return 0;
}

const [command, ...args] = process.argv.slice(2);
if (command === 'take' && args[0]) process.exit(await take(args[0], args.slice(1)));
else if (command === 'compare' && args[0] && args[1]) process.exit(await compare(args[0], args[1]));
else {
  console.error('usage: bun scripts/screenshots.ts take <dir> [name…] | compare <before> <after>');
  process.exit(2);
}
