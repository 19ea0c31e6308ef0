import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalDriver } from '../src/storage/local.ts';
import { SealedStore } from '../src/storage/sealed.ts';
import { generateMasterKey, Keyring, masterKeyFrom } from '../src/storage/keyring.ts';
import { newStorageKey } from '../src/storage/keys.ts';
import { drain, median, source } from './streams.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

function setup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-'));
  const driver = new LocalDriver(dir);
  return { dir, driver, store: new SealedStore(driver, new Keyring(masterKeyFrom(generateMasterKey()))) };
}

/** The child process of the RSS figure: store then read back 1 GiB, print the peak RSS (VmHWM). */
async function rssChild(): Promise<void> {
  const { dir, store } = setup();
  const key = newStorageKey();
  const info = await store.put(key, source());
  const read = await drain(await store.get(key, info));
  if (read !== GiB) throw new Error(`read ${read} bytes`);
  const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]!;
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(JSON.stringify({ peakRssMiB: Number(hwm) / 1024 }));
}

export async function runStorageBench(runs = 3): Promise<void> {
  const { dir, driver, store } = setup();
  try {
    const plain: number[] = [];
    const sealed: number[] = [];
    let keep = { key: '', info: { size: 0, wrappedKey: '' } };
    for (let i = 0; i < runs; i++) {
      // Alternate so page-cache and disk state favour neither side.
      const k1 = newStorageKey();
      let t = performance.now();
      await driver.put(k1, source());
      plain.push(GiB / MiB / ((performance.now() - t) / 1000));
      await driver.delete(k1);

      const k2 = newStorageKey();
      t = performance.now();
      const info = await store.put(k2, source());
      sealed.push(GiB / MiB / ((performance.now() - t) / 1000));
      if (i === runs - 1) keep = { key: k2, info };
      else await store.delete(k2);
    }
    const ratio = median(sealed) / median(plain);
    console.log(`storage.write_plain_MiB_s median ${median(plain).toFixed(0)} (runs ${plain.map((x) => x.toFixed(0)).join(', ')})`);
    console.log(`storage.write_sealed_MiB_s median ${median(sealed).toFixed(0)} (runs ${sealed.map((x) => x.toFixed(0)).join(', ')})`);
    console.log(`storage.write_sealed_vs_plain ${(ratio * 100).toFixed(1)}% (goal >= 85%)`);

    const offset = 900 * MiB;
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      const got = await drain(await store.get(keep.key, keep.info, { start: offset + i, end: offset + i + 1 }));
      times.push(performance.now() - t);
      if (got !== 1) throw new Error(`expected 1 byte, got ${got}`);
    }
    console.log(
      `storage.read_1_byte_at_900MiB_ms median ${median(times).toFixed(3)} max ${Math.max(...times).toFixed(3)} (50 reads, goal < 5)`,
    );

    const t = performance.now();
    const n = await drain(await store.get(keep.key, keep.info));
    console.log(`storage.read_sealed_MiB_s ${(n / MiB / ((performance.now() - t) / 1000)).toFixed(0)}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  const child = Bun.spawnSync([process.execPath, import.meta.path, '--rss-child'], { stdout: 'pipe', stderr: 'pipe' });
  if (child.exitCode !== 0) throw new Error(`rss child failed: ${child.stderr.toString()}`);
  const { peakRssMiB } = JSON.parse(child.stdout.toString()) as { peakRssMiB: number };
  console.log(`storage.peak_rss_store_and_read_1GiB_MiB ${peakRssMiB.toFixed(1)} (goal < 120)`);
}

if (import.meta.main) {
  if (process.argv.includes('--rss-child')) await rssChild();
  else await runStorageBench();
}
