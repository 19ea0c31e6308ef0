import path from 'node:path';
import { memoryMiB, seedItems } from './fixtures.ts';
import { adminToken, startBenchServer } from './server.ts';
import { median } from './streams.ts';

const MB = 1_000_000;
const fmt = (n: number, digits = 1) => n.toFixed(digits);

/** A WebDAV client of one account: its id, and requests signed in with a new app password. */
async function davAccount(url: string, token: string) {
  const auth = { Cookie: `token=${token}` };
  const profile = (await (await fetch(`${url}/api/profile`, { headers: auth })).json()) as { id: string; email: string };
  const res = await fetch(`${url}/api/user/app-passwords`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const { password } = (await res.json()) as { password: string };
  const authorization = `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}`;
  const request = (method: string, p: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(`${url}/dav/${p}`, { method, headers: { authorization, ...headers }, body });
  return { id: profile.id, request };
}

const lockBody = (owner: string) =>
  `<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>${owner}</D:owner></D:lockinfo>`;

/** Answers by status, as `200×16 423×284`. */
function tally(statuses: number[]): string {
  const counts = new Map<number, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${s}×${n}`).join(' ');
}

/**
 * `npm run bench -- dav-locks`: the audit's two lock attacks (issue 26 item 4). Server RSS after 300
 * shared LOCKs of one file with 1 MB owners, and the size of that file's PROPFIND; then the time of a
 * 500-row PROPFIND of one account before and after another account tries to take 9,000 locks.
 */
export async function runDavLocksBench(): Promise<void> {
  const server = await startBenchServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000', LOG_LEVEL: 'warn' });
  try {
    const adminCookie = await adminToken(server.url);
    await fetch(`${server.url}/api/user/signup-toggle`, {
      method: 'POST',
      headers: { Cookie: `token=${adminCookie}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true }),
    });
    const a = await davAccount(server.url, adminCookie);
    const signup = await fetch(`${server.url}/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'other@example.test', password: 'bench password', name: 'Other' }),
    });
    const b = await davAccount(server.url, /token=([^;]+)/.exec(signup.headers.get('set-cookie') ?? '')![1]!);

    // 1. 300 shared locks with 1 MB owners on one file.
    await a.request('PUT', 'target.txt', {}, 'x');
    const owner = 'o'.repeat(MB - 200);
    const rssBefore = memoryMiB(server.pid).now;
    const started = performance.now();
    const statuses: number[] = [];
    const attempt = async () => {
      for (let i = 0; i < 300; i++) {
        const res = await a.request('LOCK', 'target.txt', { timeout: 'Infinite' }, lockBody(owner));
        await res.arrayBuffer();
        statuses.push(res.status);
      }
    };
    await attempt();
    const seconds = (performance.now() - started) / 1000;
    const rssAfter = memoryMiB(server.pid).now;
    const discovery = await (await a.request('PROPFIND', 'target.txt', { depth: '0' })).arrayBuffer();
    // 300 more: locks held would double the growth; a heap that found its size for 1 MB bodies stays.
    await attempt();
    const rssAfterMore = memoryMiB(server.pid).now;
    console.log(
      `dav_locks.300_shared_1MB_owner_locks answers ${tally(statuses.slice(0, 300))} in ${fmt(seconds)} s; server RSS ${fmt(rssBefore)} -> ${fmt(rssAfter)} MiB (+${fmt(rssAfter - rssBefore)}), ${fmt(rssAfterMore)} MiB after 300 more (answers ${tally(statuses.slice(300))}); PROPFIND Depth 0 of the file ${fmt(discovery.byteLength / 1024)} KiB`,
    );

    // 2. A 500-row PROPFIND of account A, before and after account B tries 9,000 locks (one per file).
    const folder = (await a.request('MKCOL', 'rows')).status;
    if (folder !== 201) throw new Error(`MKCOL ${folder}`);
    const dbPath = path.join(server.dataDir, 'coffer.db');
    const folderId = await folderIdOf(server.url, adminCookie, 'rows');
    seedItems(dbPath, a.id, (i) => ({ parentId: folderId, name: `row ${String(i).padStart(3, '0')}.txt` }), 499);
    seedItems(dbPath, b.id, (i) => ({ parentId: null, name: `b ${String(i).padStart(4, '0')}.txt` }), 9_000);
    const listing = async () => {
      const t = performance.now();
      const res = await a.request('PROPFIND', 'rows/', { depth: '1' });
      const text = await res.text();
      const count = text.split('<D:response>').length - 1;
      if (res.status !== 207 || count !== 500) throw new Error(`PROPFIND ${res.status}, ${count} rows`);
      return performance.now() - t;
    };
    for (let i = 0; i < 3; i++) await listing();
    const before: number[] = [];
    for (let i = 0; i < 15; i++) before.push(await listing());
    const bStatuses: number[] = [];
    const lockStarted = performance.now();
    for (let i = 0; i < 9_000; i++) {
      const res = await b.request(
        'LOCK',
        encodeURIComponent(`b ${String(i).padStart(4, '0')}.txt`),
        { timeout: 'Infinite' },
        lockBody('b'),
      );
      await res.arrayBuffer();
      bStatuses.push(res.status);
    }
    const lockSeconds = (performance.now() - lockStarted) / 1000;
    const after: number[] = [];
    for (let i = 0; i < 15; i++) after.push(await listing());
    console.log(
      `dav_locks.propfind_500_rows_ms median ${fmt(median(before))} before, ${fmt(median(after))} after another account's 9,000 LOCK attempts (answers ${tally(bStatuses)} in ${fmt(lockSeconds)} s; runs after ${after.map((x) => fmt(x, 0)).join(', ')})`,
    );
  } finally {
    await server.stop();
  }
}

async function folderIdOf(url: string, token: string, name: string): Promise<string> {
  const res = await fetch(`${url}/api/files`, { headers: { Cookie: `token=${token}` } });
  const items = (await res.json()) as Array<{ id: string; name: string }>;
  const found = items.find((i) => i.name === name);
  if (!found) throw new Error(`no folder ${name}`);
  return found.id;
}
