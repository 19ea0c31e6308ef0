import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuSeconds, seedItems } from './fixtures.ts';
import { adminToken, startBenchServer } from './server.ts';
import { median } from './streams.ts';

const MiB = 1024 ** 2;
const fmt = (n: number, digits = 1) => n.toFixed(digits);

/** The properties the Nextcloud desktop client asks for in a listing. */
const CLIENT_PROPS = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>
<d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getetag/><oc:id/><oc:fileid/><oc:downloadURL/><oc:dDC/><oc:permissions/>
<oc:checksums/><oc:size/><nc:is-encrypted/><nc:has-preview/></d:prop></d:propfind>`;

/** A proxy in front of the server that records each request as `METHOD path`: what a sync run asks. */
function loggingProxy(target: string) {
  const seen: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      seen.push(`${request.method} ${decodeURIComponent(url.pathname)}`);
      const headers = new Headers(request.headers);
      headers.delete('host');
      const res = await fetch(`${target}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body: request.body,
        redirect: 'manual',
        decompress: false,
      });
      return new Response(res.body, { status: res.status, headers: res.headers });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) };
}

/**
 * `npm run bench -- sync`: the Nextcloud desktop client's command-line twin (`nextcloudcmd`, Debian's
 * nextcloud-desktop-cmd) against the built executable: the first sync of 10,000 files (1 GiB; set
 * COFFER_SYNC_BENCH_FILES for fewer) with its wall time and the server's CPU, a run with nothing changed
 * (time and requests), a run after one file changed at depth 8 (its PROPFINDs), and a PROPFIND Depth 1
 * of 10,000 items with the client's properties on /remote.php/dav/files/<id>/ beside /dav/.
 */
export async function runSyncBench(): Promise<void> {
  const nextcloudcmd = Bun.which('nextcloudcmd');
  if (!nextcloudcmd) {
    console.log('sync: skipped, `nextcloudcmd` is not installed (apt-get install nextcloud-desktop-cmd)');
    return;
  }
  const files = Number(process.env.COFFER_SYNC_BENCH_FILES ?? 10_000);
  const fileBytes = Math.floor((1024 * MiB) / 10_000);
  const server = await startBenchServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000', LOG_LEVEL: 'warn' }, undefined, { executable: true });
  const proxy = loggingProxy(server.url);
  const local = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-sync-'));
  try {
    const token = await adminToken(server.url);
    const cookie = { Cookie: `token=${token}` };
    const profile = (await (await fetch(`${server.url}/api/profile`, { headers: cookie })).json()) as { id: string; email: string };
    const made = await fetch(`${server.url}/api/user/app-passwords`, {
      method: 'POST',
      headers: { ...cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'nextcloudcmd' }),
    });
    const { password } = (await made.json()) as { password: string };
    const basic = `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}`;

    // 100 folders of files, and one file at depth 8.
    const content = Buffer.alloc(fileBytes);
    for (let i = 0; i < files; i++) {
      const dir = path.join(local, `folder ${String(i % 100).padStart(2, '0')}`);
      if (i < 100) fs.mkdirSync(dir, { recursive: true });
      content.writeUInt32LE(i, 0);
      fs.writeFileSync(path.join(dir, `file ${i}.bin`), content);
    }
    const deep = path.join(local, 'd1/d2/d3/d4/d5/d6/d7/d8');
    fs.mkdirSync(deep, { recursive: true });
    fs.writeFileSync(path.join(deep, 'leaf.txt'), 'leaf');

    const sync = async () => {
      const from = proxy.seen.length;
      const cpu = cpuSeconds(server.pid);
      const t = performance.now();
      const proc = Bun.spawn([nextcloudcmd, '--non-interactive', '-u', profile.email, '-p', password, local, proxy.url], {
        stdout: 'ignore',
        stderr: 'pipe',
      });
      const stderr = await new Response(proc.stderr).text();
      if ((await proc.exited) !== 0) throw new Error(`nextcloudcmd failed: ${stderr.slice(-2000)}`);
      const requests = proxy.seen.slice(from);
      return { seconds: (performance.now() - t) / 1000, cpu: cpuSeconds(server.pid) - cpu, requests };
    };

    const first = await sync();
    const gib = (files * fileBytes) / 1024 ** 3;
    console.log(
      `sync.first_sync_${files}_files_s ${fmt(first.seconds)} wall, server CPU ${fmt(first.cpu)} s (${files} files of ${fmt(fileBytes / 1024, 0)} KiB, ${fmt(gib, 2)} GiB, ${first.requests.length} requests)`,
    );
    // The uploads moved the folders' ETags: this run learns them.
    await sync();
    const idle: Array<Awaited<ReturnType<typeof sync>>> = [];
    for (let i = 0; i < 5; i++) idle.push(await sync());
    const idleRequests = idle.map((r) => r.requests.filter((q) => q.includes('/remote.php/') || q.startsWith('PROPFIND')).length);
    console.log(
      `sync.nothing_changed_s median ${fmt(median(idle.map((r) => r.seconds)), 2)} (runs ${idle.map((r) => fmt(r.seconds, 2)).join(', ')}, goal < 1), requests ${idle[0]!.requests.length} in all, ${Math.max(...idleRequests)} WebDAV (goal <= 5): ${idle[0]!.requests.join(', ')}`,
    );

    // The server's part of an idle run: the one PROPFIND of the root, with the client's properties.
    const rootRuns: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      const res = await fetch(`${server.url}/remote.php/dav/files/${profile.id}/`, {
        method: 'PROPFIND',
        headers: { authorization: basic, depth: '1' },
        body: CLIENT_PROPS,
      });
      await res.text();
      rootRuns.push(performance.now() - t);
    }
    console.log(
      `sync.idle_root_propfind_ms median ${fmt(median(rootRuns))} (the root: 101 folders with their stored oc:size, median of 10)`,
    );

    const put = await fetch(`${server.url}/remote.php/dav/files/${profile.id}/d1/d2/d3/d4/d5/d6/d7/d8/leaf.txt`, {
      method: 'PUT',
      headers: { authorization: basic },
      body: 'changed on the server',
    });
    if (put.status !== 204) throw new Error(`PUT leaf: ${put.status}`);
    const changed = await sync();
    const propfinds = changed.requests.filter((r) => r.startsWith('PROPFIND '));
    if (fs.readFileSync(path.join(deep, 'leaf.txt'), 'utf8') !== 'changed on the server')
      throw new Error('the change at depth 8 did not arrive');
    console.log(
      `sync.change_at_depth_8_propfinds ${propfinds.length} (goal <= 11), ${changed.requests.length} requests, ${fmt(changed.seconds, 2)} s`,
    );

    // PROPFIND Depth 1 of 10,000 items with the client's properties: the Nextcloud door beside /dav/.
    const folder = await fetch(`${server.url}/api/files/folder`, {
      method: 'POST',
      headers: { ...cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ten thousand' }),
    });
    const big = (await folder.json()) as { id: string };
    seedItems(
      path.join(server.dataDir, 'coffer.db'),
      profile.id,
      (i) => ({ parentId: big.id, name: `photo ${String(i).padStart(5, '0')}.jpg` }),
      10_000,
    );
    const propfind = async (prefix: string) => {
      const t = performance.now();
      const res = await fetch(`${server.url}${prefix}/Ten%20thousand/`, {
        method: 'PROPFIND',
        headers: { authorization: basic, depth: '1' },
        body: CLIENT_PROPS,
      });
      const text = await res.text();
      if (res.status !== 207 || text.split('<D:response>').length !== 10_002) throw new Error(`PROPFIND ${prefix}: ${res.status}`);
      return performance.now() - t;
    };
    const doors = { nextcloud: `/remote.php/dav/files/${profile.id}`, dav: '/dav' };
    for (let i = 0; i < 3; i++) for (const p of Object.values(doors)) await propfind(p);
    const runs = { nextcloud: [] as number[], dav: [] as number[] };
    // Alternating, each door first in every other pair, so both see the same moments of a noisy machine.
    for (let i = 0; i < 20; i++) {
      const order = i % 2 ? (['dav', 'nextcloud'] as const) : (['nextcloud', 'dav'] as const);
      for (const door of order) runs[door].push(await propfind(doors[door]));
    }
    const nc = median(runs.nextcloud);
    const dav = median(runs.dav);
    console.log(
      `sync.propfind_depth1_10000_items_ms /remote.php ${fmt(nc)} /dav ${fmt(dav)} ratio ${fmt(nc / dav, 2)} (goal <= 1.2; medians of 20, alternating; the client's properties, oc: and nc: included, on both)`,
    );
  } finally {
    proxy.stop();
    await server.stop();
    fs.rmSync(local, { recursive: true, force: true });
  }
}
