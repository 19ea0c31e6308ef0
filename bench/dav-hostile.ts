import path from 'node:path';
import { openDatabase } from '../src/db/client.ts';
import { DavPropertiesRepo } from '../src/db/repos/dav-properties.ts';
import { parseXml, XML_LIMITS } from '../src/lib/xml.ts';
import { PROPERTY_LIMITS } from '../src/services/dav/dav.ts';
import { memoryMiB, seedItems } from './fixtures.ts';
import { adminToken, startBenchServer } from './server.ts';
import { median } from './streams.ts';

const MiB = 1024 ** 2;
const fmt = (n: number, digits = 1) => n.toFixed(digits);

/** A PROPFIND body of `declarations` namespaces on its root and empty children up to `bytes`. */
function floodBody(declarations: number, bytes: number): string {
  const decl = Array.from({ length: declarations }, (_, i) => ` xmlns:p${i}="urn:p${i}"`).join('');
  const head = `<D:propfind xmlns:D="DAV:"${decl}><D:prop>`;
  const tail = '</D:prop></D:propfind>';
  const child = '<p1:a/>';
  return head + child.repeat(Math.max(0, Math.floor((bytes - head.length - tail.length) / child.length))) + tail;
}

/** The most a body may hold and still be parsed whole: 999 declarations, 49,997 children carrying text, 1 MiB. */
function withinCapsBody(): string {
  const decl = Array.from({ length: XML_LIMITS.namespaceDeclarations - 1 }, (_, i) => ` xmlns:p${i}="urn:p${i}"`).join('');
  const head = `<D:propertyupdate xmlns:D="DAV:"${decl}><D:set><D:prop>`;
  const tail = '</D:prop></D:set></D:propertyupdate>';
  const children = XML_LIMITS.elements - 4;
  const text = 'x'.repeat(Math.floor((MiB - head.length - tail.length) / children) - '<p1:a></p1:a>'.length);
  return head + `<p1:a>${text}</p1:a>`.repeat(children) + tail;
}

/** Milliseconds to parse (or refuse) a body in this process: the median of 5. */
function parseMs(body: string): { ms: number; outcome: string } {
  let outcome = 'parsed';
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    try {
      parseXml(body);
    } catch (err) {
      outcome = `refused: ${(err as Error).message}`;
    }
    runs.push(performance.now() - started);
  }
  return { ms: median(runs), outcome };
}

/**
 * `npm run bench -- dav-hostile`: the hostile WebDAV requests of issue 26 against the capped server:
 * 1 MiB XML bodies (namespace flood, many elements, the most the caps let through), a PROPFIND naming
 * 20,000 properties of a 500-file folder (answer and server RSS), a body-less PROPFIND of a file with
 * the most dead properties allowed (and of one with 80,000 stored before the caps), and an account with
 * a 1 MB storage limit setting properties until refused.
 */
export async function runDavHostileBench(): Promise<void> {
  const server = await startBenchServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000', LOG_LEVEL: 'warn' });
  const dbPath = path.join(server.dataDir, 'coffer.db');
  try {
    const token = await adminToken(server.url);
    const auth = { Cookie: `token=${token}` };
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${server.url}${p}`, {
        method,
        headers: { ...auth, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, any>>;
    };
    const profile = await api('GET', '/api/profile');
    const { password } = await api('POST', '/api/user/app-passwords', { name: 'bench' });
    const basic = `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}`;
    const dav = (method: string, p: string, body?: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/dav/${p}`, { method, headers: { authorization: basic, ...headers }, body });

    // 1. 1 MiB bodies: parse time in this process, and over HTTP with /health asked every 5 ms meanwhile.
    const shapes: Array<[string, string, string]> = [
      ['namespace_flood', 'PROPFIND', floodBody(26_000, MiB)],
      ['many_elements', 'PROPFIND', floodBody(2, MiB)],
      ['within_caps', 'PROPPATCH', withinCapsBody()],
    ];
    await dav('PUT', 'target.txt', 'x');
    for (const [name, method, body] of shapes) {
      const parsed = parseMs(body);
      let healthMax = 0;
      let done = false;
      const health = (async () => {
        while (!done) {
          const started = performance.now();
          await fetch(`${server.url}/health`);
          healthMax = Math.max(healthMax, performance.now() - started);
          await Bun.sleep(5);
        }
      })();
      const started = performance.now();
      const res = await dav(method, method === 'PROPFIND' ? '' : 'target.txt', body, { depth: '0' });
      const answer = await res.text();
      const requestMs = performance.now() - started;
      done = true;
      await health;
      console.log(
        `dav_hostile.xml_1MiB_${name}_parse_ms ${fmt(parsed.ms)} (${fmt(body.length / MiB, 2)} MiB, ${parsed.outcome}); over HTTP ${method} ${res.status} in ${fmt(requestMs)} ms, /health at most ${fmt(healthMax)} ms meanwhile${res.status >= 400 ? `: ${JSON.parse(answer).message}` : ''}`,
      );
    }

    // 2. PROPFIND naming 20,000 properties (99 kB) of a 500-file folder: refused; then the most allowed, streamed.
    const folder = await api('POST', '/api/files/folder', { name: 'five hundred' });
    seedItems(dbPath, profile.id, (i) => ({ parentId: folder.id, name: `file ${String(i).padStart(3, '0')}.txt` }), 500);
    const propfindNames = async (count: number, ns: string) => {
      const names = Array.from({ length: count }, (_, i) => `<x:p${i}/>`).join('');
      const body = `<D:propfind xmlns:D="DAV:" xmlns:x="${ns}"><D:prop>${names}</D:prop></D:propfind>`;
      const before = memoryMiB(server.pid);
      const started = performance.now();
      const res = await dav('PROPFIND', 'five%20hundred/', body, { depth: '1' });
      let bytes = 0;
      const reader = res.body!.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) bytes += read.value.byteLength;
      const after = memoryMiB(server.pid);
      return { status: res.status, ms: performance.now() - started, bytes, kB: body.length / 1000, before, after };
    };
    const refused = await propfindNames(20_000, 'urn:x');
    console.log(
      `dav_hostile.propfind_20000_names_500_files status ${refused.status} (${fmt(refused.kB)} kB request, ${refused.bytes} bytes answered in ${fmt(refused.ms)} ms); server RSS ${fmt(refused.before.now)} -> ${fmt(refused.after.now)} MiB, peak ${fmt(refused.after.peak)} MiB (before the fix: 130 MB answered, RSS 1.27 GB)`,
    );
    // 1,000 names of 65 characters with their namespace: the most one request may name.
    const atCap = await propfindNames(1_000, `urn:${'n'.repeat(56)}`);
    console.log(
      `dav_hostile.propfind_1000_names_at_cap_500_files status ${atCap.status} (${fmt(atCap.kB)} kB request, ${fmt(atCap.bytes / MiB)} MiB answered in ${fmt(atCap.ms)} ms); server RSS ${fmt(atCap.before.now)} -> ${fmt(atCap.after.now)} MiB, peak ${fmt(atCap.after.peak)} MiB`,
    );

    // 3. Body-less PROPFIND of a file with the most dead properties allowed, and of one with 80,000 stored before the caps.
    const { perItem, bytesPerItem } = PROPERTY_LIMITS;
    await dav('PUT', 'props-max.txt', 'x');
    const value = 'v'.repeat(Math.floor(bytesPerItem / perItem) - 'urn:x'.length - 'p000'.length - 1);
    const update = `<D:propertyupdate xmlns:D="DAV:" xmlns:x="urn:x"><D:set><D:prop>${Array.from({ length: perItem }, (_, i) => `<x:p${String(i).padStart(3, '0')}>${value}</x:p${String(i).padStart(3, '0')}>`).join('')}</D:prop></D:set></D:propertyupdate>`;
    const patched = await dav('PROPPATCH', 'props-max.txt', update);
    if (patched.status !== 207) throw new Error(`PROPPATCH ${patched.status} ${await patched.text()}`);
    await dav('PUT', 'props-legacy.txt', 'x');
    const root = (await api('GET', '/api/files')) as unknown as Array<{ id: string; name: string }>;
    const legacy = root.find((i) => i.name === 'props-legacy.txt')!;
    const db = openDatabase(dbPath);
    const properties = new DavPropertiesRepo(db.$client);
    db.$client.transaction(() => {
      for (let i = 0; i < 80_000; i++) properties.set({ itemId: legacy.id, ns: 'urn:x', name: `p${i}`, value: '', lang: null });
    })();
    db.$client.close();
    for (const [file, figure, label] of [
      ['props-max.txt', 'max_properties', `${perItem} properties of ${bytesPerItem / 1024} KiB (the caps)`],
      ['props-legacy.txt', '80000_properties', '80,000 empty properties stored before the caps (the audit: 24.9 s)'],
    ] as const) {
      const runs: number[] = [];
      let size = 0;
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const res = await dav('PROPFIND', file, undefined, { depth: '0' });
        size = (await res.text()).length;
        runs.push(performance.now() - started);
      }
      console.log(
        `dav_hostile.propfind_bodyless_${figure}_ms median ${fmt(median(runs))} (${label}; ${fmt(size / 1024)} KiB answer; runs ${runs.map((r) => fmt(r, 0)).join(', ')})`,
      );
    }

    // 4. An account with a 1 MB storage limit: the audit's 1 MB PROPPATCHes, then 63 KiB ones on new files until refused.
    await api('POST', '/api/user/signup-toggle', { enabled: true });
    const quotaAuth = { Cookie: `token=${await adminToken(server.url, 'quota@example.test')}` };
    const quotaProfile = (await (await fetch(`${server.url}/api/profile`, { headers: quotaAuth })).json()) as { id: string; email: string };
    await api('PUT', '/api/user/storage-limit', { targetUserId: quotaProfile.id, storageLimit: 1_000_000 });
    const appPassword = (await (
      await fetch(`${server.url}/api/user/app-passwords`, {
        method: 'POST',
        headers: { ...quotaAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench' }),
      })
    ).json()) as { password: string };
    const quotaBasic = `Basic ${Buffer.from(`${quotaProfile.email}:${appPassword.password}`).toString('base64')}`;
    const qdav = (method: string, p: string, body?: string) =>
      fetch(`${server.url}/dav/${p}`, { method, headers: { authorization: quotaBasic }, body });
    const set = (v: string) =>
      `<D:propertyupdate xmlns:D="DAV:" xmlns:x="urn:x"><D:set><D:prop><x:big>${v}</x:big></D:prop></D:set></D:propertyupdate>`;
    await qdav('PUT', 'one.txt', '');
    const oneMB = await qdav('PROPPATCH', 'one.txt', set('v'.repeat(1_000_000)));
    let accepted = 0;
    let last: Response | null = null;
    for (let i = 0; i < 1000; i++) {
      await qdav('PUT', `f${i}.txt`, '');
      last = await qdav('PROPPATCH', `f${i}.txt`, set('v'.repeat(63 * 1024)));
      if (last.status !== 207) break;
      accepted++;
    }
    const usage = (await (await fetch(`${server.url}/api/user/storage`, { headers: quotaAuth })).json()) as { used: number };
    const check = openDatabase(dbPath);
    const stored = check.$client
      .query<{ bytes: number }, [string]>(
        'SELECT coalesce(sum(length(ns) + length(name) + length(value)), 0) AS bytes FROM dav_properties WHERE item_id IN (SELECT id FROM items WHERE account_id = ?)',
      )
      .get(quotaProfile.id)!.bytes;
    check.$client.close();
    console.log(
      `dav_hostile.quota_1MB_account: a 1 MB PROPPATCH ${oneMB.status}; 63 KiB PROPPATCHes on new files accepted ${accepted}, then ${last?.status} (${last ? ((await last.json()) as { message: string }).message : ''}); properties stored ${fmt(stored / MiB, 2)} MiB (cap ${PROPERTY_LIMITS.accountBytes / MiB} MiB beyond 1 KiB per item); /api/user/storage used ${usage.used} (before the fix: 40 MB stored in 40 PROPPATCHes, used 1)`,
    );
  } finally {
    await server.stop();
  }
}
