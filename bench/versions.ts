import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { newId } from '../src/lib/ids.ts';
import { newStorageKey } from '../src/storage/keys.ts';
import { freshInstance, memoryMiB, openCli } from './fixtures.ts';
import { adminToken, startBenchServer } from './server.ts';
import { median } from './streams.ts';

const GiB = 1024 ** 3;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const fmt = (n: number, digits = 2) => n.toFixed(digits);

/** POST /replace of `file` with curl: seconds, refused unless 200. */
function curlReplace(url: string, token: string, id: string, file: string): number {
  const out = Bun.spawnSync(
    [
      'curl',
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{time_total} %{http_code}',
      '-H',
      `authorization: Bearer ${token}`,
      '-F',
      `file=@${file}`,
      `${url}/api/files/${id}/replace`,
    ],
    { stdout: 'pipe' },
  );
  const [seconds, status] = out.stdout.toString().trim().split(' ');
  if (status !== '200') throw new Error(`replace answered ${status}`);
  return Number(seconds);
}

/**
 * Replacing a 1 GiB file with versions on and off, alternating in the same run (the old object is kept,
 * not copied, so both should cost the same), and GET /versions of a file with 100 versions.
 */
async function replaceAndList(): Promise<void> {
  const input = path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), `coffer-bench-versions-${process.pid}.bin`);
  const chunk = randomBytes(64 * 1024 ** 2);
  const fd = fs.openSync(input, 'w');
  for (let i = 0; i < GiB / chunk.length; i++) fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  const server = await startBenchServer();
  try {
    const token = await adminToken(server.url);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const form = new FormData();
    form.append('file', new File(['first'], 'big.bin'));
    const file = (await (
      await fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: { authorization: auth.authorization }, body: form })
    ).json()) as {
      id: string;
    };
    const setVersions = async (enabled: boolean) => {
      const res = await fetch(`${server.url}/api/user/versions-config`, {
        method: 'PUT',
        headers: auth,
        body: JSON.stringify({ enabled }),
      });
      if (!res.ok) throw new Error(`versions-config: ${res.status}`);
    };
    const dropVersions = async () => {
      const list = (await (await fetch(`${server.url}/api/files/${file.id}/versions`, { headers: auth })).json()) as {
        versions: Array<{ id: string }>;
      };
      for (const v of list.versions)
        await fetch(`${server.url}/api/files/${file.id}/versions/${v.id}`, { method: 'DELETE', headers: auth });
    };
    // The first 1 GiB content, so every timed replace replaces 1 GiB with 1 GiB.
    curlReplace(server.url, token, file.id, input);
    await dropVersions();
    const on: number[] = [];
    const off: number[] = [];
    for (let round = 0; round < 3; round++) {
      await setVersions(false);
      off.push(curlReplace(server.url, token, file.id, input));
      await setVersions(true);
      on.push(curlReplace(server.url, token, file.id, input));
      await dropVersions();
    }
    console.log(
      `versions.replace_1GiB seconds: versions on median ${fmt(median(on))} (${on.map((s) => fmt(s)).join(', ')}), off median ${fmt(median(off))} (${off.map((s) => fmt(s)).join(', ')}); on/off ${fmt(median(on) / median(off))} (alternated in one run; the machine is shared, so expect noise)`,
    );

    // 100 versions of one file, as rows beside the running server (their objects are not read by the list).
    const db = new (await import('bun:sqlite')).Database(path.join(server.dataDir, 'coffer.db'));
    const now = Date.now();
    const insert = db.query(
      `INSERT INTO file_versions (id, item_id, account_id, size, mime_type, storage_key, wrapped_key, key_id, source, author_id, modified_at, created_at)
       SELECT ?, id, account_id, size, mime_type, ?, wrapped_key, key_id, 'docserver', account_id, ?, ? FROM items WHERE id = ?`,
    );
    db.transaction(() => {
      for (let i = 0; i < 100; i++) insert.run(newId(), newStorageKey(), now - (i + 1) * MINUTE, now - i * 1000, file.id);
    })();
    db.close();
    const times: number[] = [];
    for (let i = 0; i < 220; i++) {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/api/files/${file.id}/versions`, { headers: auth });
      const body = (await res.json()) as { versions: unknown[] };
      if (i >= 20) times.push(performance.now() - t0);
      if (body.versions.length !== 100) throw new Error(`expected 100 versions, got ${body.versions.length}`);
    }
    times.sort((a, b) => a - b);
    console.log(
      `versions.list_100 ms over HTTP on loopback: median ${fmt(median(times))}, p95 ${fmt(times[Math.floor(times.length * 0.95)]!)} (200 requests after 20 warm-up; goal < 5)`,
    );
  } finally {
    await server.stop();
    fs.rmSync(input, { force: true });
  }
}

/** Retention over 1,000,000 versions across 10,000 files in one maintenance run (VERSIONS_BENCH_FILES, _PER_FILE override). */
async function thinning(): Promise<void> {
  const files = Number(process.env.VERSIONS_BENCH_FILES ?? 10_000);
  const perFile = Number(process.env.VERSIONS_BENCH_PER_FILE ?? 100);
  const { dir, ownerId } = await freshInstance('coffer-bench-versions-');
  const ctx = openCli(dir);
  try {
    const now = Date.now();
    const wrapped = ctx.keyring.wrap(randomBytes(32));
    const keyId = ctx.keyring.current.id;
    const item = ctx.db.$client.query(
      `INSERT INTO items (id, account_id, type, name, name_key, size, storage_key, wrapped_key, key_id, modified_at, accessed_at, created_at)
       VALUES (?, ?, 'file', ?, ?, 100, ?, ?, ?, ?, ?, ?)`,
    );
    const version = ctx.db.$client.query(
      `INSERT INTO file_versions (id, item_id, account_id, size, storage_key, wrapped_key, key_id, source, author_id, modified_at, created_at)
       VALUES (?, ?, ?, 100, ?, ?, ?, 'docserver', ?, ?, ?)`,
    );
    const t0 = performance.now();
    for (let f = 0; f < files; f += 100) {
      ctx.db.$client.transaction(() => {
        for (let i = f; i < Math.min(files, f + 100); i++) {
          const id = newId();
          item.run(id, ownerId, `f${i}.docx`, `f${i}.docx`, newStorageKey(), wrapped, keyId, now, now, now);
          // Auto-saves spread over the last 60 days: each file's history as if nothing had thinned it yet.
          for (let v = 0; v < perFile; v++) {
            const at = now - Math.floor(((v + 1) / perFile) * 60 * DAY);
            version.run(newId(), id, ownerId, newStorageKey(), wrapped, keyId, ownerId, at, at);
          }
        }
      })();
    }
    ctx.db.$client.query('UPDATE users SET storage_used = ? WHERE id = ?').run(files * 100 * (perFile + 1), ownerId);
    const seeded = (performance.now() - t0) / 1000;
    // Peak RSS from here on: writing 5 to clear_refs resets VmHWM (Linux).
    fs.writeFileSync('/proc/self/clear_refs', '5');
    const before = memoryMiB();
    const t1 = performance.now();
    const removed = ctx.services.versions.thinAll();
    const seconds = (performance.now() - t1) / 1000;
    const after = memoryMiB();
    const left = ctx.db.$client.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM file_versions').get()!.n;
    console.log(
      `versions.thin ${(files * perFile).toLocaleString('en-US')} versions across ${files.toLocaleString('en-US')} files: ${fmt(seconds)} s, removed ${removed.toLocaleString('en-US')}, kept ${left.toLocaleString('en-US')}; process RSS ${fmt(before.now, 0)} MiB before, peak ${fmt(after.peak, 0)} MiB during (seeding took ${fmt(seeded, 1)} s; shared machine)`,
    );
  } finally {
    ctx.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** `npm run bench -- versions`. */
export async function runVersionsBench(): Promise<void> {
  await replaceAndList();
  await thinning();
}

if (import.meta.main) await runVersionsBench();
