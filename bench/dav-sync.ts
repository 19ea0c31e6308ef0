import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { cpuSeconds, seedItems } from './fixtures.ts';
import { adminToken, startBenchServer } from './server.ts';
import { median } from './streams.ts';

const TREE_FOLDERS = 1_000;
const TREE_ITEMS = 100_000;
const CHANGES = 10;
const RUNS = 30;
const SOCKETS = 1_000;
const LOGINS = 50;
const PUSH_ROUNDS = 10;

const fmt = (n: number, digits = 1) => n.toFixed(digits);
const syncBody = (token: string, level: '1' | 'infinite') =>
  `<D:sync-collection xmlns:D="DAV:"><D:sync-token>${token}</D:sync-token><D:sync-level>${level}</D:sync-level>` +
  '<D:prop><D:getetag/><D:getcontentlength/><D:resourcetype/></D:prop></D:sync-collection>';

/**
 * `npm run bench -- dav-sync`: (1) a sync-collection REPORT on a 100,000-item tree after 10 changes,
 * Depth infinity and 1, wall time and the server's CPU per report; (2) with 1,000 push sockets open (50
 * logins of one account, 20 each), the time from a WebDAV PUT's answer to each socket's notify_file.
 */
export async function runDavSyncBench(): Promise<void> {
  const server = await startBenchServer({
    COFFER_GENERAL_RATE_LIMIT: '1000000000',
    COFFER_AUTH_RATE_LIMIT: '1000000',
    COFFER_PASSWORD_HASH_RATE_LIMIT: '1000000',
    LOG_LEVEL: 'warn',
  });
  const sockets: WebSocket[] = [];
  try {
    const token = await adminToken(server.url);
    const call = async (p: string, body: unknown, cookie = token) => {
      const res = await fetch(`${server.url}${p}`, {
        method: 'POST',
        headers: { Cookie: `token=${cookie}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return { body: (await res.json()) as Record<string, any>, cookie: /token=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1] };
    };
    const profile = (await (await fetch(`${server.url}/api/profile`, { headers: { Cookie: `token=${token}` } })).json()) as {
      id: string;
      email: string;
    };
    const { password } = (await call('/api/user/app-passwords', { name: 'bench' })).body;
    const basic = `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}`;
    const dav = (method: string, p: string, body?: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/dav/${p}`, { method, headers: { authorization: basic, ...headers }, body });

    // 1. sync-collection of a 100,000-item tree: 1,000 folders of 99 files under Big.
    const big = (await call('/api/files/folder', { name: 'Big' })).body;
    const folderIds = Array.from({ length: TREE_FOLDERS }, () => randomBytes(16).toString('base64url'));
    seedItems(
      path.join(server.dataDir, 'coffer.db'),
      profile.id,
      (i) =>
        i < TREE_FOLDERS
          ? { id: folderIds[i], parentId: big.id, name: `folder ${String(i).padStart(4, '0')}`, type: 'folder' }
          : { parentId: folderIds[i % TREE_FOLDERS]!, name: `photo ${String(i).padStart(6, '0')}.jpg` },
      TREE_ITEMS,
    );
    const tokenOf = async () => {
      const res = await dav('PROPFIND', 'Big/', '<D:propfind xmlns:D="DAV:"><D:prop><D:sync-token/></D:prop></D:propfind>', {
        depth: '0',
      });
      return /<D:sync-token>([^<]+)<\/D:sync-token>/.exec(await res.text())![1]!;
    };
    const before = await tokenOf();
    for (let i = 0; i < CHANGES; i++) {
      const res = await dav('PUT', `Big/folder ${String(i * 97).padStart(4, '0')}/changed ${i}.txt`, `change ${i}`);
      if (res.status !== 201) throw new Error(`PUT ${res.status}`);
    }
    const report = async (level: '1' | 'infinite') => {
      const t = performance.now();
      const res = await dav('REPORT', 'Big/', syncBody(before, level), { 'content-type': 'application/xml' });
      const text = await res.text();
      if (res.status !== 207) throw new Error(`REPORT ${res.status}: ${text.slice(0, 300)}`);
      return { ms: performance.now() - t, members: text.split('<D:response>').length - 1 };
    };
    for (let i = 0; i < 5; i++) await report('infinite');
    for (const level of ['infinite', '1'] as const) {
      const cpuBefore = cpuSeconds(server.pid);
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await report(level));
      const cpuMs = ((cpuSeconds(server.pid) - cpuBefore) * 1000) / RUNS;
      const expected = level === 'infinite' ? CHANGES : 0;
      if (runs[0]!.members !== expected)
        throw new Error(`sync-collection (${level}) reported ${runs[0]!.members} members, not ${expected}`);
      console.log(
        `dav_sync.sync_collection_100000_items_after_10_changes_depth_${level}_ms median ${fmt(median(runs.map((r) => r.ms)))} (goal < 20; ${runs[0]!.members} members reported; server CPU ${fmt(cpuMs)} ms per report; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores)`,
      );
    }

    // 2. notify_file with 1,000 sockets open.
    const wsUrl = `${server.url.replace(/^http/, 'ws')}/push/ws`;
    const logins: Array<{ email: string; password: string }> = [];
    for (let i = 0; i < LOGINS; i++) {
      const email = `push-${i}@example.test`;
      await call('/api/user/sub-users', { email, password: 'bench password', name: `Push ${i}`, permissions: [] });
      const { cookie } = await call('/api/login', { email, password: 'bench password' }, '');
      const app = (await call('/api/user/app-passwords', { name: 'push' }, cookie)).body;
      logins.push({ email, password: app.password });
    }
    let waiting: { since: number; latencies: number[]; done: () => void } | null = null;
    const open = (login: { email: string; password: string }) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(wsUrl);
        ws.onopen = () => {
          ws.send(login.email);
          ws.send(login.password);
        };
        ws.onmessage = (e) => {
          if (e.data === 'authenticated') resolve(ws);
          else if (e.data === 'notify_file' && waiting) {
            waiting.latencies.push(performance.now() - waiting.since);
            if (waiting.latencies.length === SOCKETS) waiting.done();
          } else if (String(e.data).startsWith('err')) reject(new Error(String(e.data)));
        };
        ws.onerror = () => reject(new Error('socket error'));
      });
    // 20 at a time: the most one address may have signing in at once.
    for (let i = 0; i < SOCKETS; i += 20)
      sockets.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => open(logins[(i + j) % LOGINS]!)))));
    if (sockets.length !== SOCKETS) throw new Error(`${sockets.length} sockets open`);
    await Bun.sleep(500);
    const firsts: number[] = [];
    const lasts: number[] = [];
    const cpuBefore = cpuSeconds(server.pid);
    for (let round = 0; round < PUSH_ROUNDS; round++) {
      const all = new Promise<void>((resolve) => {
        waiting = { since: 0, latencies: [], done: resolve };
      });
      const timeout = setTimeout(() => {
        throw new Error(`round ${round}: ${waiting?.latencies.length} of ${SOCKETS} sockets told`);
      }, 5000);
      waiting!.since = performance.now();
      const res = await dav('PUT', `push ${round}.txt`, `round ${round}`);
      if (res.status !== 201) throw new Error(`PUT ${res.status}`);
      await all;
      clearTimeout(timeout);
      const latencies = waiting!.latencies.sort((a, b) => a - b);
      firsts.push(latencies[0]!);
      lasts.push(latencies.at(-1)!);
      waiting = null;
      await Bun.sleep(200);
    }
    const cpuMs = ((cpuSeconds(server.pid) - cpuBefore) * 1000) / PUSH_ROUNDS;
    console.log(
      `dav_sync.notify_file_1000_sockets_ms from the PUT's start: first socket median ${fmt(median(firsts))}, last of 1,000 median ${fmt(median(lasts))} max ${fmt(Math.max(...lasts))} (goal < 200; rounds ${lasts.map((l) => fmt(l, 0)).join(', ')}; server CPU ${fmt(cpuMs)} ms per round incl. the PUT; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores)`,
    );
  } finally {
    for (const ws of sockets) ws.close();
    await server.stop();
  }
}
