import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { DavClient, davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const HTTP_DIR = path.resolve(import.meta.dir, '../../../src/http') + path.sep;
const DAV_DIR = `${HTTP_DIR}dav${path.sep}`;
const DOWNLOADS = `${HTTP_DIR}download-responses.ts`;

let t: TestServer;
let dav: DavClient;
/** Calls into a service from the WebDAV room (src/http/dav/) and the download answer it writes with, per request; the guard's are every request's. */
let visits: string[] = [];
let depth = 0;

/** Wraps every method of every service so a call made from the http layer is counted, with its name. */
function countVisits(services: Record<string, object>): void {
  for (const [serviceName, service] of Object.entries(services)) {
    if (!service || typeof service !== 'object') continue;
    const names = new Set<string>();
    for (let proto = Object.getPrototypeOf(service); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto))
      for (const name of Object.getOwnPropertyNames(proto)) {
        const d = Object.getOwnPropertyDescriptor(proto, name);
        if (name !== 'constructor' && d && typeof d.value === 'function') names.add(name);
      }
    const target = service as Record<string, (...args: unknown[]) => unknown>;
    for (const name of names) {
      const original = target[name]!;
      target[name] = function (this: unknown, ...args: unknown[]) {
        // A call made while another service method runs is the service's own (the depth, as tail calls drop stack frames).
        if (depth === 0) {
          const caller = new Error().stack?.split('\n')[2] ?? '';
          const file = /\(?((?:\/[^:()]+)+):\d+:\d+\)?\s*$/.exec(caller)?.[1];
          if (file?.startsWith(DAV_DIR) || file === DOWNLOADS) visits.push(`${serviceName}.${name}`);
        }
        depth++;
        try {
          return original.apply(this, args);
        } finally {
          depth--;
        }
      };
    }
  }
}

async function visitsOf(method: string, urlPath: string, opts: { headers?: Record<string, string>; body?: string } = {}) {
  visits = [];
  const res = await dav.request(method, urlPath, opts);
  await res.arrayBuffer();
  return { status: res.status, visits };
}

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
  const o = await seed.owner(t);
  dav = await davLogin(t, o);
  expect((await dav.request('MKCOL', 'docs')).status).toBe(201);
  expect((await dav.put('docs/a.txt', 'hello')).status).toBe(201);
  countVisits(t.server.ctx.services as unknown as Record<string, object>);
});
afterAll(() => t.stop());

const LOCK_BODY =
  '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
const SYNC_BODY =
  '<?xml version="1.0"?><D:sync-collection xmlns:D="DAV:"><D:sync-token/><D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>';
const PROPFIND_TOKENS = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:sync-token/><D:getetag/></D:prop></D:propfind>';
const PROPPATCH_BODY =
  '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:x="urn:x"><D:set><D:prop><x:color>blue</x:color></D:prop></D:set></D:propertyupdate>';

describe('a WebDAV request crosses from the http layer into the services once, down and back', () => {
  test('each method, answered as before, is one call into the services', async () => {
    const etag = (await dav.request('HEAD', 'docs/a.txt')).headers.get('etag')!;
    const cases: Array<[string, string, Parameters<typeof visitsOf>[2], number]> = [
      ['PROPFIND', 'docs/', { headers: { depth: '1' } }, 207],
      ['PROPFIND', '', { headers: { depth: '1' }, body: PROPFIND_TOKENS }, 207],
      ['GET', 'docs/a.txt', {}, 200],
      ['GET', 'docs/a.txt', { headers: { 'if-none-match': etag } }, 304],
      ['HEAD', 'docs/a.txt', {}, 200],
      ['GET', 'docs/', {}, 200],
      ['PUT', 'docs/b.txt', { body: 'bee' }, 201],
      ['PUT', 'docs/b.txt', { body: 'bee 2' }, 204],
      ['PUT', 'docs/a.txt', { body: 'hello 2', headers: { if: `([${etag}])` } }, 204],
      ['REPORT', 'docs/', { headers: { depth: '0' }, body: SYNC_BODY }, 207],
      ['PROPPATCH', 'docs/a.txt', { body: PROPPATCH_BODY }, 207],
      ['MKCOL', 'more', {}, 201],
      ['COPY', 'docs/b.txt', { headers: { destination: `${t.url}/dav/docs/c.txt` } }, 201],
      ['MOVE', 'docs/c.txt', { headers: { destination: `${t.url}/dav/docs/d.txt` } }, 201],
      ['DELETE', 'docs/d.txt', {}, 204],
      ['LOCK', 'docs/a.txt', { headers: { timeout: 'Second-60' }, body: LOCK_BODY }, 200],
    ];
    for (const [method, urlPath, opts, status] of cases) {
      const got = await visitsOf(method, urlPath, opts);
      expect(`${method} ${urlPath} ${got.status}: ${got.visits.join(', ')}`).toMatch(
        new RegExp(`^${method} ${urlPath} ${status}: [\\w.]+$`),
      );
    }
    const token = (await dav.request('LOCK', 'docs/b.txt', { body: LOCK_BODY })).headers.get('lock-token')!;
    const unlocked = await visitsOf('UNLOCK', 'docs/b.txt', { headers: { 'lock-token': token } });
    expect(`${unlocked.status}: ${unlocked.visits.join(', ')}`).toBe('204: dav.unlockAt');
  });
});
