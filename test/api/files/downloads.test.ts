import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { heapStats } from 'bun:jsc';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { deepestCallStack, folder, folderChain, readZip, seedRows, upload } from '../../helpers/files.ts';
import { openPaths } from '../../helpers/fds.ts';
import { davLogin } from '../../helpers/dav.ts';
import { eventually } from '../../helpers/eventually.ts';
import * as seed from '../../helpers/seed.ts';
import { ManualClock } from '../../../src/clock.ts';
import { holdOpens } from '../../helpers/hold-opens.ts';

let t: TestServer;
const clock = new ManualClock(Date.parse('2026-03-01T12:34:56Z'));
let owner: seed.SeededLogin;
const SEGMENT = 64 * 1024;
const original = randomBytes(3 * SEGMENT + 100);
let big: any;

const PNG = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15,
  0xc4, 0x89,
]);

beforeAll(async () => {
  t = await startTestServer({ clock, startWorker: false });
  owner = await seed.admin(t);
  big = await upload(owner.client, 'big.bin', original);
});
afterAll(() => t.stop());

const bytes = async (res: Response) => Buffer.from(await res.arrayBuffer());

/** Runs `run` counting the stored objects read; `readsSince()` answers how many since it was last asked. */
async function countingReads(run: (readsSince: () => number) => Promise<void>): Promise<void> {
  const storage = t.server.ctx.storage;
  const realGet = storage.get.bind(storage);
  let reads = 0;
  storage.get = (...args: Parameters<typeof realGet>) => {
    reads++;
    return realGet(...args);
  };
  try {
    await run(() => {
      const n = reads;
      reads = 0;
      return n;
    });
  } finally {
    storage.get = realGet;
  }
}

const headersOf = (res: Response, named: string[]) => Object.fromEntries(named.map((h) => [h, res.headers.get(h)]));

describe('GET /api/files/:id/download (single file)', () => {
  test('the whole file, byte-exact, with Accept-Ranges and an attachment disposition', async () => {
    const res = await owner.client.get(`/api/files/${big.id}/download`);
    expect(res.status).toBe(200);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="big.bin"; filename*=UTF-8''big.bin`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await bytes(res)).equals(original)).toBe(true);
  });

  const N = original.length;
  test.each([
    ['bytes=0-0', 0, 1],
    [`bytes=${SEGMENT - 1}-${SEGMENT}`, SEGMENT - 1, SEGMENT + 1],
    [`bytes=${SEGMENT}-${2 * SEGMENT - 1}`, SEGMENT, 2 * SEGMENT],
    [`bytes=${3 * SEGMENT - 1}-${3 * SEGMENT + 1}`, 3 * SEGMENT - 1, 3 * SEGMENT + 2],
    [`bytes=${N - 1}-`, N - 1, N],
    ['bytes=-1', N - 1, N],
    [`bytes=-${SEGMENT + 7}`, N - SEGMENT - 7, N],
    ['bytes=-99999999', 0, N],
    ['bytes=100-', 100, N],
    [`bytes=5-${N + 1000}`, 5, N],
  ])('Range %s → 206 with the exact bytes and Content-Range', async (range, start, end) => {
    const res = await owner.client.get(`/api/files/${big.id}/download`, { range });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end - 1}/${N}`);
    expect((await bytes(res)).equals(original.subarray(start, end))).toBe(true);
  });

  test.each([[`bytes=${N}-`], [`bytes=${N + 5}-${N + 10}`], ['bytes=-0']])(
    'Range %s → 416 with Content-Range bytes */size',
    async (range) => {
      const res = await owner.client.get(`/api/files/${big.id}/download`, { range });
      expect(res.status).toBe(416);
      expect(res.headers.get('content-range')).toBe(`bytes */${N}`);
    },
  );

  test("a Range under an If-Range that is not the file's ETag (another tag, a date) → 200 with the whole file, never a patch of old bytes", async () => {
    for (const ifRange of ['"stale-etag"', 'Sun, 01 Mar 2026 12:00:00 GMT']) {
      const res = await owner.client.get(`/api/files/${big.id}/download`, { range: 'bytes=100-', 'if-range': ifRange });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-range')).toBeNull();
      expect((await bytes(res)).equals(original)).toBe(true);
    }
  });

  test('HEAD answers the whole GET headers and reads none of the file; a Range on HEAD is ignored (RFC 9110 14.2) at every door', async () => {
    const dav = await davLogin(t, owner);
    const { links } = await json(await owner.client.post('/api/files/share', { ids: [big.id], shared: true }));
    const token = String(links[big.id]).split('/s/')[1];
    const doors: Array<[string, (init: RequestInit) => Promise<Response>]> = [
      ['api', (init) => owner.client.request(`/api/files/${big.id}/download`, init)],
      ['link', (init) => fetch(`${t.url}/s/${token}/file/${big.id}`, init)],
      ['dav', (init) => dav.request(init.method!, 'big.bin', { headers: init.headers as Record<string, string> })],
    ];
    await countingReads(async (readsSince) => {
      for (const [door, request] of doors) {
        for (const range of [undefined, 'bytes=100-199', `bytes=${N + 5}-`]) {
          const headers: Record<string, string> = range ? { range } : {};
          readsSince();
          const head = await request({ method: 'HEAD', headers });
          expect({ door, range, status: head.status, reads: readsSince(), length: head.headers.get('content-length') }).toEqual({
            door,
            range,
            status: 200,
            reads: 0,
            length: String(N),
          });
          const get = await request({ method: 'GET' });
          await bytes(get);
          const named = [
            'content-type',
            'content-disposition',
            'content-range',
            'accept-ranges',
            'cache-control',
            'content-security-policy',
          ];
          expect({ door, range, ...headersOf(head, named) }).toEqual({ door, range, ...headersOf(get, named) });
        }
      }
    });
  });

  test('a % in the name is no percent-escape in the ASCII fallback: replaced as non-ASCII is, the exact name in filename*', async () => {
    const file = await upload(owner.client, '100%41 ü.txt', 'x');
    const res = await owner.client.get(`/api/files/${file.id}/download`);
    await bytes(res);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="100_41 _.txt"; filename*=UTF-8''100%2541%20%C3%BC.txt`);
  });

  test('an empty file: a suffix Range is satisfiable (200, empty), a first byte is not (416 bytes */0)', async () => {
    const empty = await upload(owner.client, 'empty.txt', '');
    const suffix = await owner.client.get(`/api/files/${empty.id}/download`, { range: 'bytes=-5' });
    expect({ status: suffix.status, body: (await bytes(suffix)).length, range: suffix.headers.get('content-range') }).toEqual({
      status: 200,
      body: 0,
      range: null,
    });
    const first = await owner.client.get(`/api/files/${empty.id}/download`, { range: 'bytes=0-' });
    expect(first.status).toBe(416);
    expect(first.headers.get('content-range')).toBe('bytes */0');
  });

  test.each([['bytes=abc'], ['bytes=0-1,5-6'], ['items=0-5'], ['bytes=9-3']])(
    'an ignorable Range %s → 200 with the whole file',
    async (range) => {
      const res = await owner.client.get(`/api/files/${big.id}/download`, { range });
      expect(res.status).toBe(200);
      expect((await bytes(res)).length).toBe(N);
    },
  );

  test('a file of many request and read chunks (freed as they are used) comes back byte-exact, whole and in ranges', async () => {
    // 1.5 MiB: about 25 request chunks up, six 256 KiB read chunks down, segments spanning them.
    const data = randomBytes(1536 * 1024 + 333);
    const file = await upload(owner.client, 'chunks.bin', data);
    expect((await bytes(await owner.client.get(`/api/files/${file.id}/download`))).equals(data)).toBe(true);
    for (const [start, end] of [
      [262_000, 787_000],
      [3 * SEGMENT + 7, data.length],
    ] as const) {
      const res = await owner.client.get(`/api/files/${file.id}/download`, { range: `bytes=${start}-${end - 1}` });
      expect((await bytes(res)).equals(data.subarray(start, end))).toBe(true);
    }
  });

  test('inline=1 only for detected raster images; SVG, HTML and images in name only stay attachments', async () => {
    const png = await upload(owner.client, 'pixel.png', PNG, { type: 'image/png' });
    const svg = await upload(owner.client, 'draw.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', {
      type: 'image/svg+xml',
    });
    const html = await upload(owner.client, 'page.html', '<html><script>alert(1)</script></html>', { type: 'text/html' });
    const fake = await upload(owner.client, 'fake.png', 'not really an image', { type: 'image/png' });
    const inline = await owner.client.get(`/api/files/${png.id}/download?inline=1`);
    expect(inline.headers.get('content-disposition')).toStartWith('inline;');
    expect(inline.headers.get('content-type')).toBe('image/png');
    expect((await bytes(inline)).equals(Buffer.from(PNG))).toBe(true);
    expect((await owner.client.get(`/api/files/${png.id}/download`)).headers.get('content-disposition')).toStartWith('attachment;');
    expect((await owner.client.get(`/api/files/${png.id}/download?inline=true`)).headers.get('content-disposition')).toStartWith(
      'attachment;',
    );
    for (const item of [svg, html, fake]) {
      const res = await owner.client.get(`/api/files/${item.id}/download?inline=1`);
      expect(res.headers.get('content-disposition')).toStartWith('attachment;');
      await res.arrayBuffer();
    }
  });

  test('Content-Disposition carries an ASCII fallback and the UTF-8 name', async () => {
    const item = await upload(owner.client, 'résumé (final) 日本.txt', 'cv');
    const res = await owner.client.get(`/api/files/${item.id}/download`);
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="r_sum_ (final) __.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%28final%29%20%E6%97%A5%E6%9C%AC.txt`,
    );
  });

  test('a trashed or missing file → 404', async () => {
    const item = await upload(owner.client, 'soon-gone.txt', 'x');
    await owner.client.post('/api/files/delete', { ids: [item.id] });
    expect((await owner.client.get(`/api/files/${item.id}/download`)).status).toBe(404);
    expect((await owner.client.get('/api/files/missing-item-id-0000/download')).status).toBe(404);
  });

  test('downloading marks the file read, at most once an hour', async () => {
    const item = await upload(owner.client, 'read-me.txt', 'x');
    clock.advance(2 * 3600_000);
    await bytes(await owner.client.get(`/api/files/${item.id}/download`));
    t.server.ctx.services.access.flush();
    const first = (await json(await owner.client.get(`/api/files/${item.id}/info`))).accessedAt;
    expect(first).toBe(new Date(clock.now()).toISOString());
    clock.advance(10 * 30_000);
    await bytes(await owner.client.get(`/api/files/${item.id}/download`));
    t.server.ctx.services.access.flush();
    expect((await json(await owner.client.get(`/api/files/${item.id}/info`))).accessedAt).toBe(first);
  });
});

describe('HEAD and 304 at the WebDAV door', () => {
  test('HEAD of a file answers the headers GET does (disposition, caching, CSP), without a body; a 304 keeps the caching', async () => {
    const dav = await davLogin(t, owner);
    await upload(owner.client, 'héad.txt', 'head me');
    const path = encodeURIComponent('héad.txt');
    const get = await dav.request('GET', path);
    expect(await get.text()).toBe('head me');
    const head = await dav.request('HEAD', path);
    expect(await head.text()).toBe('');
    expect(head.headers.get('content-length')).toBe('7');
    // GET's Content-Length is dropped by Bun for a stream (oven-sh/bun#10507), so it is left out here.
    const named = [
      'content-type',
      'content-disposition',
      'cache-control',
      'content-security-policy',
      'accept-ranges',
      'etag',
      'last-modified',
    ];
    const pick = (res: Response) => Object.fromEntries(named.map((h) => [h, res.headers.get(h)]));
    expect(pick(head)).toEqual(pick(get));
    expect(get.headers.get('content-disposition')).toContain("filename*=UTF-8''h%C3%A9ad.txt");
    const notModified = await dav.request('GET', path, { headers: { 'if-none-match': get.headers.get('etag')! } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('cache-control')).toBe(get.headers.get('cache-control'));
  });
});

describe('files typed as script, style, JSON or WebAssembly', () => {
  test('go out as text/plain at every door (API, share link, WebDAV GET and HEAD), byte-exact: no page of the origin can load one as a script or stylesheet', async () => {
    const dav = await davLogin(t, owner);
    const cases: Array<[string, string, Uint8Array | string]> = [
      ['evil.js', 'text/javascript', 'fetch("/api/files").then(r => r.text()).then(alert)'],
      ['old.js', 'application/x-javascript', 'alert(1)'],
      ['module.mjs', 'application/javascript; charset=utf-8', 'export default 1'],
      ['look.css', 'text/css', 'body { background: red }'],
      ['data.json', 'application/json', '{"a": 1}'],
      ['manifest.webmanifest', 'application/manifest+json', '{"name": "x"}'],
      ['code.wasm', 'application/wasm', new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00])],
    ];
    for (const [name, type, content] of cases) {
      const file = await upload(owner.client, name, content, { type });
      const sent = typeof content === 'string' ? Buffer.from(content) : Buffer.from(content);
      const { links } = await json(await owner.client.post('/api/files/share', { ids: [file.id], shared: true }));
      const token = String(links[file.id]).split('/s/')[1];
      const doors: Array<[string, Response]> = [
        ['api', await owner.client.get(`/api/files/${file.id}/download`)],
        ['inline', await owner.client.get(`/api/files/${file.id}/download?inline=1`)],
        ['link', await t.client().get(`/s/${token}/file/${file.id}`)],
        ['dav', await dav.request('GET', encodeURIComponent(name))],
      ];
      for (const [door, res] of doors) {
        expect({ name, door, status: res.status, type: res.headers.get('content-type') }).toEqual({
          name,
          door,
          status: 200,
          type: 'text/plain',
        });
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect((await bytes(res)).equals(sent)).toBe(true);
      }
      expect((await dav.request('HEAD', encodeURIComponent(name))).headers.get('content-type')).toBe('text/plain');
    }
  });
});

describe('ZIP downloads', () => {
  test('a folder downloads as <folder>.zip with entries under <folder>/, empty folders included, trash left out', async () => {
    const top = await folder(owner.client, 'Album');
    const sub = await folder(owner.client, 'nested', top.id);
    await folder(owner.client, 'empty', sub.id);
    const a = randomBytes(SEGMENT + 3);
    await upload(owner.client, 'a.bin', a, { parentId: top.id });
    await upload(owner.client, 'b.txt', 'bee', { parentId: sub.id });
    const gone = await upload(owner.client, 'gone.txt', 'gone', { parentId: sub.id });
    await owner.client.post('/api/files/delete', { ids: [gone.id] });
    clock.advance(2 * 3600_000);
    const res = await owner.client.get(`/api/files/${top.id}/download`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Album.zip"; filename*=UTF-8''Album.zip`);
    expect(res.headers.get('accept-ranges')).toBeNull();
    const entries = readZip(await bytes(res));
    expect(entries.map((e) => e.name).sort()).toEqual([
      'Album/',
      'Album/a.bin',
      'Album/nested/',
      'Album/nested/b.txt',
      'Album/nested/empty/',
    ]);
    expect(entries.find((e) => e.name === 'Album/a.bin')!.data.equals(a)).toBe(true);
    expect(entries.find((e) => e.name === 'Album/nested/b.txt')!.data.toString()).toBe('bee');
    // The folder and every entry are marked read.
    t.server.ctx.services.access.flush();
    const now = new Date(clock.now()).toISOString();
    expect((await json(await owner.client.get(`/api/files/${top.id}/info`))).accessedAt).toBe(now);
    expect((await json(await owner.client.get(`/api/files/${sub.id}/info`))).accessedAt).toBe(now);
  });

  test('bulk: one root → <name>.zip; several → download-<YYYYMMDD-HHMMSS>.zip; duplicate root names stay apart', async () => {
    const d1 = await folder(owner.client, 'bulk-one');
    const inner = await folder(owner.client, 'dup', d1.id);
    const x = await upload(owner.client, 'x.txt', 'xx', { parentId: inner.id });
    const y = await upload(owner.client, 'x.txt', 'yy');
    const single = await owner.client.post('/api/files/download/bulk', { ids: [d1.id] });
    expect(single.headers.get('content-disposition')).toContain('filename="bulk-one.zip"');
    expect(
      readZip(await bytes(single))
        .map((e) => e.name)
        .sort(),
    ).toEqual(['bulk-one/', 'bulk-one/dup/', 'bulk-one/dup/x.txt']);
    const many = await owner.client.post('/api/files/download/bulk', { ids: [x.id, y.id] });
    expect(many.status).toBe(200);
    const stamp = new Date(clock.now()).toISOString();
    const expected = `download-${stamp.slice(0, 10).replaceAll('-', '')}-${stamp.slice(11, 19).replaceAll(':', '')}.zip`;
    expect(many.headers.get('content-disposition')).toContain(`filename="${expected}"`);
    const entries = readZip(await bytes(many));
    expect(entries.map((e) => [e.name, e.data.toString()])).toEqual([
      ['x.txt', 'xx'],
      ['x (1).txt', 'yy'],
    ]);
    expect((await owner.client.post('/api/files/download/bulk', { ids: [x.id, 'missing-id-0000000000'] })).status).toBe(404);
    expect((await owner.client.post('/api/files/download/bulk', { ids: [] })).status).toBe(422);
  });

  test('bulk as a browser form post (ids repeated, urlencoded): the same ZIP; another origin 403; empty 422', async () => {
    const a = await upload(owner.client, 'form-a.txt', 'aa');
    const b = await upload(owner.client, 'form-b.txt', 'bbb');
    const form = (ids: string[], headers: Record<string, string> = {}) =>
      owner.client.request('/api/files/download/bulk', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: t.url, ...headers },
        body: new URLSearchParams(ids.map((id): [string, string] => ['ids', id])).toString(),
      });
    const res = await form([a.id, b.id]);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(readZip(await bytes(res)).map((e) => [e.name, e.data.toString()])).toEqual([
      ['form-a.txt', 'aa'],
      ['form-b.txt', 'bbb'],
    ]);
    const one = await form([a.id]);
    expect(readZip(await bytes(one)).map((e) => e.name)).toEqual(['form-a.txt']);
    expect((await form([a.id], { origin: 'http://evil.example' })).status).toBe(403);
    expect((await form([])).status).toBe(422);
    const stranger = await seed.owner(t);
    const foreign = await stranger.client.request('/api/files/download/bulk', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `ids=${a.id}`,
    });
    expect(foreign.status).toBe(404);
  });

  test('a client that stops reading a ZIP part-way leaves the server serving the next one', async () => {
    const dir = await folder(owner.client, 'cancelled');
    await upload(owner.client, 'large.bin', randomBytes(4 * 1024 * 1024), { parentId: dir.id });
    await upload(owner.client, 'small.txt', 'small', { parentId: dir.id });
    const res = await owner.client.get(`/api/files/${dir.id}/download`);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    // Nothing marks when the server has seen the cancel (with S3 no file is open locally): give it a moment.
    await Bun.sleep(50);
    const again = readZip(await bytes(await owner.client.get(`/api/files/${dir.id}/download`)));
    expect(again.map((e) => e.name).sort()).toEqual(['cancelled/', 'cancelled/large.bin', 'cancelled/small.txt']);
  });

  test('a ZIP cancelled while an entry is being opened leaves no stored file open', async () => {
    const dir = await folder(owner.client, 'opening');
    await upload(owner.client, 'only.bin', randomBytes(300 * 1024), { parentId: dir.id });
    const blobs = `${t.dataDir}/blobs/`;
    const openBlobs = () => openPaths().filter((p) => p.startsWith(blobs)).length;
    // Hold the entry's open until the client has gone.
    const storage = t.server.ctx.storage;
    const realGet = storage.get.bind(storage);
    let entered!: () => void;
    const reached = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    storage.get = async (...args: Parameters<typeof realGet>) => {
      entered();
      await gate;
      return realGet(...args);
    };
    try {
      const client = new AbortController();
      const res = owner.client.request(`/api/files/${dir.id}/download`, { signal: client.signal }).catch(() => null);
      await reached;
      client.abort();
      await res;
      // The abort must reach the server before the held open goes on; nothing outside marks that it has.
      await Bun.sleep(50);
      release();
      await eventually(() => expect(openBlobs()).toBe(0));
    } finally {
      storage.get = realGet;
      release();
    }
  });

  test('HEAD of a folder ZIP (API and share link) answers GET headers and reads no file of the folder', async () => {
    const dir = await folder(owner.client, 'Head zip');
    for (let i = 0; i < 3; i++) await upload(owner.client, `h${i}.txt`, `file ${i}`, { parentId: dir.id });
    const { links } = await json(await owner.client.post('/api/files/share', { ids: [dir.id], shared: true }));
    const token = String(links[dir.id]).split('/s/')[1];
    await countingReads(async (readsSince) => {
      for (const [url, client] of [
        [`/api/files/${dir.id}/download`, owner.client],
        [`/s/${token}/zip`, t.client()],
      ] as const) {
        readsSince();
        const head = await client.request(url, { method: 'HEAD' });
        expect({ url, status: head.status, reads: readsSince() }).toEqual({ url, status: 200, reads: 0 });
        const get = await client.get(url);
        expect(readZip(await bytes(get)).length).toBeGreaterThanOrEqual(3);
        const named = ['content-type', 'content-disposition', 'cache-control', 'content-length', 'transfer-encoding'];
        expect(headersOf(head, named)).toEqual(headersOf(get, named));
      }
    });
  });

  test('a folder of 300 files streams as a valid ZIP', async () => {
    const dir = await folder(owner.client, 'many');
    const form = new FormData();
    form.append('parentId', dir.id);
    for (let i = 0; i < 300; i++) form.append('files', new File([`file number ${i}`], `f${i}.txt`));
    expect((await owner.client.request('/api/files/upload/bulk', { method: 'POST', body: form })).status).toBe(200);
    const entries = readZip(await bytes(await owner.client.get(`/api/files/${dir.id}/download`)));
    expect(entries.length).toBe(301);
    expect(entries.find((e) => e.name === 'many/f123.txt')!.data.toString()).toBe('file number 123');
  });

  test('a ZIP of 2,000 entries keeps no abort listener per entry (each one scanned those before it: CPU quadratic in the entries)', async () => {
    const dir = await folder(owner.client, 'listeners');
    seedRows(t, owner.id, dir.id, 2000, (i) => ({ name: `empty-${i}`, type: 'folder' }));
    // The server runs in this process: abort listeners added and not removed while the ZIP streams are counted here.
    const { addEventListener, removeEventListener } = EventTarget.prototype;
    let held = 0;
    EventTarget.prototype.addEventListener = function (this: EventTarget, ...args: Parameters<EventTarget['addEventListener']>) {
      if (this instanceof AbortSignal && args[0] === 'abort') held++;
      return addEventListener.apply(this, args);
    };
    EventTarget.prototype.removeEventListener = function (this: EventTarget, ...args: Parameters<EventTarget['removeEventListener']>) {
      if (this instanceof AbortSignal && args[0] === 'abort') held--;
      return removeEventListener.apply(this, args);
    };
    try {
      const entries = readZip(await bytes(await owner.client.get(`/api/files/${dir.id}/download`)));
      expect(entries.length).toBe(2001);
    } finally {
      EventTarget.prototype.addEventListener = addEventListener;
      EventTarget.prototype.removeEventListener = removeEventListener;
    }
    expect(held).toBeLessThan(10);
  });

  test('a ZIP of 30,000 entries holds little memory as it ends: its directory is kept as bytes, not as an object per entry', async () => {
    const dir = await folder(owner.client, 'thirty-thousand');
    const insert = t.server.ctx.db.$client.query(
      "INSERT INTO items (id, account_id, parent_id, type, name, name_key, modified_at, accessed_at, created_at) VALUES (?1, ?2, ?3, 'folder', ?4, ?5, ?6, ?6, ?6)",
    );
    // Ids starting with "!" come before every generated one: the file uploaded below is the ZIP's last entry.
    t.server.ctx.db.$client.transaction(() => {
      for (let i = 0; i < 30_000; i++) insert.run(`!${i}`, owner.id, dir.id, `entry-${i}`, `entry-${i}`, clock.now());
    })();
    await upload(owner.client, 'last.txt', 'the last entry', { parentId: dir.id });
    // What the ZIP holds is read while its last entry is being opened: every other entry's record is kept by then.
    const storage = t.server.ctx.storage;
    const realGet = storage.get.bind(storage);
    let entered!: () => void;
    const reached = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    storage.get = async (...args: Parameters<typeof realGet>) => {
      entered();
      await gate;
      return realGet(...args);
    };
    // Live heap after a full collection: unlike the process's peak memory, it does not move with how late the collector runs.
    const liveMiB = () => {
      Bun.gc(true);
      return heapStats().heapSize / 1024 / 1024;
    };
    try {
      const before = liveMiB();
      const zip = bytes(await owner.client.get(`/api/files/${dir.id}/download`));
      await reached;
      const held = liveMiB() - before;
      release();
      const entries = readZip(await zip);
      expect(entries.length).toBe(30_002);
      expect(entries.at(-1)!.name).toBe('thirty-thousand/last.txt');
      // Kept as objects (archiver's own way), the 30,000 records held 13 MiB here; as bytes, 2 (and up to 2 more of the ZIP read by this client).
      expect(held).toBeLessThan(8);
    } finally {
      storage.get = realGet;
      release();
    }
  }, 60_000);

  test('a chain of 500 folders is walked with the same call stack at every level (a generator per level overflowed it some thousands down)', async () => {
    const top = await folder(owner.client, 'chain');
    folderChain(t, owner.id, top.id, 500);
    const deepest = await deepestCallStack(t.server.ctx.repos.items, 'liveChildren', async () => {
      const entries = readZip(await bytes(await owner.client.get(`/api/files/${top.id}/download`)));
      expect(entries.length).toBe(501);
      expect(entries.at(-1)!.name).toBe(`chain/${'d/'.repeat(500)}`);
    });
    expect(deepest).toBeLessThan(100);
  });

  test('a path past the 65,535 bytes a ZIP entry name holds (230 levels of 100 CJK characters) ends the ZIP unfinished, never with a cut name', async () => {
    const top = await folder(owner.client, 'deep');
    let parent = top.id;
    for (let i = 0; i < 230; i++) parent = (await folder(owner.client, '界'.repeat(100), parent)).id;
    await upload(owner.client, 'bottom.txt', 'at the bottom', { parentId: parent });
    const res = await owner.client.get(`/api/files/${top.id}/download`);
    expect(res.status).toBe(200);
    // The answer is already under way: the only way left to say it failed is to end it without the ZIP's directory.
    const read = await res.arrayBuffer().then(
      () => 'whole',
      () => 'cut off',
    );
    expect(read).toBe('cut off');
    expect((await owner.client.get(`/api/files/${big.id}/download`)).status).toBe(200);
  });
});

describe('ZIPs made at once', () => {
  let capped: TestServer;
  beforeAll(async () => {
    capped = await startTestServer({ startWorker: false, env: { COFFER_MAX_ZIPS: '2', COFFER_MAX_ZIPS_PER_ACCOUNT: '1' } });
  });
  afterAll(() => capped.stop());

  async function folderOfOne(login: seed.SeededLogin): Promise<string> {
    const dir = await folder(login.client, 'zipped');
    await upload(login.client, 'large.bin', randomBytes(1024 * 1024), { parentId: dir.id });
    return dir.id;
  }

  test("past the account's cap 429, past the instance's 503, each with Retry-After and a message; a finished one frees its slot", async () => {
    const [a, b, c] = [await seed.admin(capped), await seed.owner(capped), await seed.owner(capped)];
    const [dirA, dirB, dirC] = [await folderOfOne(a), await folderOfOne(b), await folderOfOne(c)];
    const release = holdOpens(capped);
    try {
      const first = await a.client.get(`/api/files/${dirA}/download`);
      expect(first.status).toBe(200);
      const other = await b.client.get(`/api/files/${dirB}/download`);
      expect(other.status).toBe(200);
      const again = await a.client.post('/api/files/download/bulk', { ids: [dirA] });
      expect(again.status).toBe(429);
      expect(again.headers.get('retry-after')).toBe('30');
      expect((await json(again)).message).toBe(
        "This account's ZIP downloads being made already reach the limit of 1 at once; try again when one has finished (or cancel one)",
      );
      const full = await c.client.get(`/api/files/${dirC}/download`);
      expect(full.status).toBe(503);
      expect(full.headers.get('retry-after')).toBe('30');
      expect((await json(full)).message).toBe('The server is making as many ZIP downloads as it can at once (2); try again in a minute');
      release();
      expect(readZip(await bytes(other)).map((e) => e.name)).toEqual(['zipped/', 'zipped/large.bin']);
      expect((await c.client.get(`/api/files/${dirC}/download`)).status).toBe(200);
      await first.body!.cancel();
    } finally {
      release();
    }
  });

  test('no slot is kept after a ZIP ends any way: read whole, client gone mid-way, body never read, HEAD, failed part-way', async () => {
    const owner = await seed.owner(capped);
    const dir = await folderOfOne(owner);
    const url = `/api/files/${dir}/download`;
    // With one ZIP per account, each way of ending is followed by a ZIP the account must get.
    const nextZipServed = () =>
      eventually(async () => {
        const res = await owner.client.get(url);
        if (res.status !== 200) return false;
        expect(readZip(await bytes(res)).length).toBe(2);
        return true;
      });

    await bytes(await owner.client.get(url));
    await nextZipServed();

    const release = holdOpens(capped);
    const gone = new AbortController();
    const reading = await owner.client.request(url, { signal: gone.signal });
    expect(reading.status).toBe(200);
    gone.abort();
    release();
    await nextZipServed();

    // A client that sends the request and hangs up before reading a byte of the answer.
    const cookie = [...owner.client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(new URL(capped.url).port), '127.0.0.1', () => {
        socket.write(`GET ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\n\r\n`);
        socket.destroy();
        resolve();
      });
    });
    await nextZipServed();

    expect((await owner.client.request(url, { method: 'HEAD' })).status).toBe(200);
    await nextZipServed();

    const storage = capped.server.ctx.storage;
    const realGet = storage.get.bind(storage);
    storage.get = () => Promise.reject(new Error('the stored object is unreadable'));
    try {
      // The failure ends the answer unfinished, or before its head when no byte had gone out yet.
      const read = await owner.client.get(url).then((res) => res.arrayBuffer());
      expect(read).toBeUndefined();
    } catch {
      // Cut off, as it must be.
    } finally {
      storage.get = realGet;
    }
    await nextZipServed();
  });
});
