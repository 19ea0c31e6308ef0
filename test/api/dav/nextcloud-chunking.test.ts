import { describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ManualClock } from '../../../src/clock.ts';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { downloaded, folder, listAll, upload } from '../../helpers/files.ts';
import { eventually } from '../../helpers/eventually.ts';
import { hangUpMidBody } from '../../helpers/raw-http.ts';
import { stagedFiles } from '../../helpers/tus.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';

const clock = new ManualClock();
let t: TestServer;
let admin: seed.SeededLogin;

serverWithAdmin((s) => ({ t, admin } = s), { clock });

const chunkKeys = () =>
  t.server.ctx.db.$client
    .query<{ k: string }, []>('SELECT storage_key AS k FROM upload_chunks WHERE storage_key IS NOT NULL')
    .all()
    .map((r) => r.k);
const chunkRows = () => t.server.ctx.db.$client.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM upload_chunks').get()!.n;
const sha1 = (b: Uint8Array) => createHash('sha1').update(b).digest('hex');

/** A Nextcloud client's requests: the uploads and files doors, HTTP Basic with an app password. */
class Nc {
  constructor(
    readonly id: string,
    readonly authorization: string,
  ) {}
  uploads(method: string, rel: string, opts: { headers?: Record<string, string>; body?: RequestInit['body'] } = {}) {
    return fetch(`${t.url}/remote.php/dav/uploads/${this.id}/${rel}`, {
      method,
      headers: { authorization: this.authorization, ...opts.headers },
      body: opts.body,
    });
  }
  files(method: string, rel: string, opts: { headers?: Record<string, string>; body?: RequestInit['body'] } = {}) {
    return fetch(`${this.filesUrl(rel)}`, { method, headers: { authorization: this.authorization, ...opts.headers }, body: opts.body });
  }
  filesUrl(rel: string) {
    return `${t.url}/remote.php/dav/files/${this.id}/${rel}`;
  }
  /** oc:checksums of a file (Depth 0), or null where none is known. */
  async checksum(rel: string): Promise<string | null> {
    const body = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:checksums/><d:getetag/></d:prop></d:propfind>`;
    const res = await this.files('PROPFIND', rel, { headers: { depth: '0' }, body });
    expect(res.status).toBe(207);
    const xml = await res.text();
    const found = /<D:propstat><D:prop>([\s\S]*?)<\/D:prop><D:status>HTTP\/1.1 200/.exec(xml)![1]!;
    return /<x:checksum>([^<]*)<\/x:checksum>/.exec(found)?.[1] ?? null;
  }
  /** MOVE of the upload's assembled file to `rel` under the files door. */
  finish(transfer: string, rel: string, headers: Record<string, string> = {}) {
    return this.uploads('MOVE', `${transfer}/.file`, { headers: { destination: this.filesUrl(rel), ...headers } });
  }
}

async function nc(login: seed.SeededLogin): Promise<Nc> {
  const dav = await davLogin(t, login, 'Nextcloud chunking test');
  return new Nc(login.id, dav.authorization);
}

/** Holds the next call of `obj[method]` (later ones run at once) until `release`; `reached` resolves when it is made. */
function holdNext<T extends object, K extends keyof T>(obj: T, method: K) {
  const slot = obj as Record<K, unknown>;
  const original = slot[method] as (...args: unknown[]) => Promise<unknown>;
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const open = new Promise<void>((r) => (release = r));
  const restore = () => {
    slot[method] = original;
  };
  slot[method] = async (...args: unknown[]) => {
    restore();
    reach();
    await open;
    return original.apply(obj, args);
  };
  return { reached, release, restore };
}

function bytes(n: number, seedByte: number): Buffer {
  return Buffer.from(Array.from({ length: n }, (_, i) => (i * 7 + seedByte) % 251));
}

/** Every file under the data directory holding `needle`. */
function filesHolding(root: string, needle: Buffer): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    if (fs.readFileSync(full).includes(needle)) found.push(full);
  }
  return found;
}

describe('Nextcloud chunked upload (/remote.php/dav/uploads/)', () => {
  test('an OPTIONS probe without credentials is answered (the guard lets it through), with or without a session cookie', async () => {
    const o = await seed.owner(t);
    for (const [path, headers] of [
      ['/remote.php/dav/uploads/x', {}],
      ['/remote.php/dav/uploads/*?parentId=not-a-uuid', {}],
      ['/remote.php/dav/uploads/x/y', { cookie: [...o.client.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }],
    ] as const) {
      const res = await fetch(`${t.url}${path}`, { method: 'OPTIONS', headers });
      expect({ path, status: res.status, dav: res.headers.get('dav') }).toEqual({ path, status: 200, dav: '1, 2' });
    }
  });

  test('capabilities advertise chunking and SHA1 checksums', async () => {
    const caps = (await json(await fetch(`${t.url}/ocs/v2.php/cloud/capabilities?format=json`))).ocs.data.capabilities;
    expect(caps.dav.chunking).toBe('1.0');
    expect(caps.files.bigfilechunking).toBe(true);
    expect(caps.checksums).toEqual({ supportedTypes: ['SHA1'], preferredUploadType: 'SHA1' });
  });

  test('a final MOVE with If-Match over a file another door saves while the file is made is 412; the other save stays', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    const driver = t.server.ctx.driver;
    // With OC-Total-Length the upload's own object is published at the MOVE; without, the chunks are written into a new object.
    for (const [transfer, total, hold] of [
      ['sized', true, () => holdNext(driver.staging, 'publish')],
      ['unsized', false, () => holdNext(driver, 'put')],
    ] as const) {
      const file = await upload(o.client, `${transfer}.bin`, 'first');
      const etag = (await c.files('HEAD', `${transfer}.bin`)).headers.get('etag')!;
      const headers: Record<string, string> = { destination: c.filesUrl(`${transfer}.bin`), ...(total && { 'oc-total-length': '2000' }) };
      expect((await c.uploads('MKCOL', transfer, { headers })).status).toBe(201);
      expect((await c.uploads('PUT', `${transfer}/1`, { body: bytes(2000, 7) })).status).toBe(201);
      const held = hold();
      try {
        const move = c.finish(transfer, `${transfer}.bin`, { 'if-match': etag });
        await held.reached;
        const form = new FormData();
        form.append('file', new File(['saved meanwhile'], `${transfer}.bin`));
        expect((await o.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
        held.release();
        expect((await move).status).toBe(412);
      } finally {
        held.restore();
      }
      expect((await downloaded(o.client, file.id)).toString()).toBe('saved meanwhile');
      // The upload stays for another MOVE; ended here, so the counts of later tests start from none.
      expect((await c.uploads('DELETE', transfer)).status).toBe(204);
    }
  });

  test('chunks sent out of order are sealed on disk, listed, and the final MOVE makes the file in name order with its mtime', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    const marker = Buffer.from('CHUNK-PLAINTEXT-MARKER-7f3a9c');
    const parts = [Buffer.concat([marker, bytes(100 * 1024, 1)]), bytes(70_001, 2), Buffer.from('tail')];
    const whole = Buffer.concat(parts);
    expect((await c.files('MKCOL', 'Big')).status).toBe(201);
    const mk = await c.uploads('MKCOL', 'transfer-1', {
      headers: { 'oc-total-length': String(whole.length), destination: c.filesUrl('Big/file.bin') },
    });
    expect(mk.status).toBe(201);
    // The desktop client's names: zero-padded offsets; chunking v2's: 1 to 10,000. Either sorts by value.
    const names = ['0000000000000001', '2', '00010'];
    for (const i of [2, 0, 1]) {
      const res = await c.uploads('PUT', `transfer-1/${names[i]}`, { body: parts[i] });
      expect(res.status).toBe(201);
    }
    expect(filesHolding(t.dataDir, marker)).toEqual([]);
    const listing = await c.uploads('PROPFIND', 'transfer-1', { headers: { depth: '1' } });
    expect(listing.status).toBe(207);
    const text = await listing.text();
    for (const [i, name] of names.entries()) {
      expect(text).toContain(`${name}</d:href>`);
      expect(text).toContain(`<d:getcontentlength>${parts[i]!.length}</d:getcontentlength>`);
    }
    expect((await c.uploads('GET', `transfer-1/${names[0]}`)).status).toBe(403);

    const mtime = 1_600_000_000;
    const done = await c.finish('transfer-1', 'Big/file.bin', { 'x-oc-mtime': String(mtime), 'oc-checksum': `SHA1:${sha1(whole)}` });
    expect(done.status).toBe(201);
    expect(done.headers.get('x-oc-mtime')).toBe('accepted');
    expect(done.headers.get('oc-fileid')).toMatch(/^\d{8}/);
    expect(done.headers.get('oc-etag')).toBe(done.headers.get('etag'));
    const got = await c.files('GET', 'Big/file.bin');
    expect(Buffer.from(await got.arrayBuffer()).equals(whole)).toBe(true);
    expect(new Date(got.headers.get('last-modified')!).getTime()).toBe(mtime * 1000);
    expect(await c.checksum('Big/file.bin')).toBe(`SHA1:${sha1(whole)}`);
    expect((await c.uploads('PROPFIND', 'transfer-1', { headers: { depth: '1' } })).status).toBe(404);
    expect(chunkRows()).toBe(0);
  });

  test('with OC-Total-Length the chunks are sealed into the file as they come: its size is reserved, its SHA1 checked, a restart survived', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    const whole = bytes(300_000, 5);
    const parts = [whole.subarray(0, 100_000), whole.subarray(100_000, 250_000), whole.subarray(250_000)];
    expect((await admin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit: 1_000_000 })).status).toBe(200);
    const free = async () => (await json(await o.client.get('/api/user/storage'))).free;
    const start = await free();
    const headers = { 'oc-total-length': String(whole.length), destination: c.filesUrl('sealed.bin') };
    expect((await c.uploads('MKCOL', 'sealed', { headers })).status).toBe(201);
    expect(await free()).toBe(start - whole.length);
    // A second upload that would not fit beside the first one's reservation is refused up front.
    expect((await c.uploads('MKCOL', 'second', { headers: { 'oc-total-length': String(start - whole.length + 1) } })).status).toBe(507);
    expect((await c.uploads('PUT', 'sealed/1', { body: parts[0] })).status).toBe(201);
    expect((await c.uploads('PUT', 'sealed/0', { body: 'x' })).status).toBe(400);
    expect((await c.uploads('PUT', 'sealed/1', { body: parts[0] })).status).toBe(409);
    // Sealed into the upload's own object: no chunk is an object of its own.
    expect(chunkKeys()).toEqual([]);
    await t.restart({ samePort: true });
    expect((await c.uploads('PUT', 'sealed/2', { body: parts[1] })).status).toBe(201);
    expect((await c.uploads('PUT', 'sealed/3', { body: parts[2] })).status).toBe(201);
    const wrong = await c.finish('sealed', 'sealed.bin', { 'oc-checksum': `SHA1:${sha1(Buffer.from('no'))}` });
    expect(wrong.status).toBe(400);
    expect((await c.files('GET', 'sealed.bin')).status).toBe(404);
    const done = await c.finish('sealed', 'sealed.bin', { 'oc-checksum': `SHA1:${sha1(whole)}`, 'x-oc-mtime': '1500000000' });
    expect(done.status).toBe(201);
    expect(done.headers.get('x-oc-mtime')).toBe('accepted');
    expect(done.headers.get('oc-fileid')).toMatch(/^\d{8}/);
    const got = await c.files('GET', 'sealed.bin');
    expect(got.headers.get('etag')).toBe(done.headers.get('oc-etag'));
    expect(new Date(got.headers.get('last-modified')!).getTime()).toBe(1_500_000_000_000);
    expect(Buffer.from(await got.arrayBuffer()).equals(whole)).toBe(true);
    expect(await c.checksum('sealed.bin')).toBe(`SHA1:${sha1(whole)}`);
    expect(await free()).toBe(start - whole.length);
    expect((await c.uploads('PROPFIND', 'sealed')).status).toBe(404);
  });

  test('a chunk cut off mid-body is sent again from its start and the file is whole', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    const whole = bytes(400_000, 11);
    expect((await c.uploads('MKCOL', 'cut', { headers: { 'oc-total-length': String(whole.length) } })).status).toBe(201);
    expect((await c.uploads('PUT', 'cut/1', { body: whole.subarray(0, 100_000) })).status).toBe(201);
    const head =
      `PUT /remote.php/dav/uploads/${o.id}/cut/2 HTTP/1.1\r\nHost: ${new URL(t.url).host}\r\n` +
      `Authorization: ${c.authorization}\r\nContent-Length: 300000\r\n\r\n`;
    await hangUpMidBody(t.url, head, whole.subarray(100_000, 250_000), 200);
    // Whether the cut-off request is still ending (the chunk then waits as an object of its own) or not, it is taken.
    expect((await c.uploads('PUT', 'cut/2', { body: whole.subarray(100_000) })).status).toBe(201);
    expect((await c.finish('cut', 'cut.bin', { 'oc-checksum': `SHA1:${sha1(whole)}` })).status).toBe(201);
    expect(Buffer.from(await (await c.files('GET', 'cut.bin')).arrayBuffer()).equals(whole)).toBe(true);
  });

  test('the MOVE onto an existing file keeps a version; a stale If-Match is 412 and a wrong OC-Checksum 400, each changing nothing', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    expect((await c.files('PUT', 'doc.bin', { body: 'first content' })).status).toBe(201);
    const etag = (await c.files('HEAD', 'doc.bin')).headers.get('etag')!;
    const next = bytes(200_000, 9);
    const send = async (transfer: string) => {
      expect((await c.uploads('MKCOL', transfer)).status).toBe(201);
      expect((await c.uploads('PUT', `${transfer}/1`, { body: next.subarray(0, 150_000) })).status).toBe(201);
      expect((await c.uploads('PUT', `${transfer}/2`, { body: next.subarray(150_000) })).status).toBe(201);
    };
    await send('wrong-sum');
    const wrong = await c.finish('wrong-sum', 'doc.bin', { 'oc-checksum': `SHA1:${sha1(Buffer.from('other'))}` });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toMatch(/<s:message>[^<]*SHA1/);
    expect(await (await c.files('GET', 'doc.bin')).text()).toBe('first content');

    await c.files('PUT', 'doc.bin', { body: 'second content' });
    const stale = await c.finish('wrong-sum', 'doc.bin', { 'if-match': etag });
    expect(stale.status).toBe(412);
    expect(await (await c.files('GET', 'doc.bin')).text()).toBe('second content');

    const ok = await c.finish('wrong-sum', 'doc.bin', { 'oc-checksum': `SHA1:${sha1(next)}`, 'oc-total-length': String(next.length) });
    expect(ok.status).toBe(204);
    expect(Buffer.from(await (await c.files('GET', 'doc.bin')).arrayBuffer()).equals(next)).toBe(true);
    const [file] = await listAll(o.client, '/api/files');
    const versions = await json(await o.client.get(`/api/files/${file.id}/versions`));
    expect(JSON.stringify(versions)).toContain('"size":14');
  });

  test('the final MOVE’s If header, tagged with the Destination as the desktop client sends it, is checked on that file, in a share too', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const docs = await folder(o.client, 'Shared docs');
    expect((await o.client.post(`/api/files/${docs.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const c = await nc(o);
    const m = await nc(member);
    expect((await c.files('PUT', 'Shared%20docs/doc.bin', { body: 'first' })).status).toBe(201);
    for (const [who, rel] of [
      [c, 'Shared%20docs/doc.bin'],
      [m, 'Shared%20with%20me/Shared%20docs/doc.bin'],
    ] as const) {
      // The desktop client's If-Match, moved onto the Destination: If: <its path> (["<ETag>"]) (PropagateUploadFileNG).
      const tagged = (etag: string) => ({ if: `<${new URL(who.filesUrl(rel)).pathname}> ([${etag}])` });
      const transfer = `edit-${who.id}`;
      expect((await who.uploads('MKCOL', transfer)).status).toBe(201);
      expect((await who.uploads('PUT', `${transfer}/1`, { body: `by ${who.id}` })).status).toBe(201);
      expect((await who.finish(transfer, rel, tagged('"stale"'))).status).toBe(412);
      const etag = (await who.files('HEAD', rel)).headers.get('etag')!;
      expect((await who.finish(transfer, rel, tagged(etag))).status).toBe(204);
      expect(await (await who.files('GET', rel)).text()).toBe(`by ${who.id}`);
    }
  });

  test('OC-Checksum on a plain PUT: a mismatch is 400 and creates nothing; a match is kept as oc:checksums while the content lasts', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    const bad = await c.files('PUT', 'p.txt', { body: 'hello', headers: { 'oc-checksum': `SHA1:${sha1(Buffer.from('hullo'))}` } });
    expect(bad.status).toBe(400);
    expect((await c.files('GET', 'p.txt')).status).toBe(404);
    expect((await c.files('PUT', 'p.txt', { body: 'hello', headers: { 'oc-checksum': 'SHA1:xyz' } })).status).toBe(400);
    const good = await c.files('PUT', 'p.txt', {
      body: 'hello',
      headers: { 'oc-checksum': `SHA1:${sha1(Buffer.from('hello')).toUpperCase()}` },
    });
    expect(good.status).toBe(201);
    expect(await c.checksum('p.txt')).toBe(`SHA1:${sha1(Buffer.from('hello'))}`);
    // A new content without one: the SHA1 of the old one is no longer said.
    expect((await c.files('PUT', 'p.txt', { body: 'changed' })).status).toBe(204);
    expect(await c.checksum('p.txt')).toBeNull();
    // Other checksum types are not checked, and do not stop the upload.
    expect((await c.files('PUT', 'q.txt', { body: 'x', headers: { 'oc-checksum': 'MD5:0123' } })).status).toBe(201);
  });

  test('checked up front: OC-Total-Length over the max upload size is 413, over the quota 507; a chunk past it is refused; DELETE aborts', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    t.server.ctx.services.settings.set('maxUploadBytes', 1024 * 1024);
    try {
      expect((await c.uploads('MKCOL', 'huge', { headers: { 'oc-total-length': String(2 * 1024 * 1024) } })).status).toBe(413);
      expect((await c.uploads('MKCOL', 'open')).status).toBe(201);
      expect((await c.uploads('PUT', 'open/1', { body: bytes(700_000, 1) })).status).toBe(201);
      expect((await c.uploads('PUT', 'open/2', { body: bytes(700_000, 2) })).status).toBe(413);
    } finally {
      t.server.ctx.services.settings.set('maxUploadBytes', 10 * 1024 ** 3);
    }
    expect((await admin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit: 1000 })).status).toBe(200);
    expect((await c.uploads('MKCOL', 'full', { headers: { 'oc-total-length': '5000' } })).status).toBe(507);
    expect((await c.uploads('MKCOL', 'small', { headers: { 'oc-total-length': '10' } })).status).toBe(201);
    expect((await c.uploads('PUT', 'small/1', { body: bytes(11, 1) })).status).toBe(400);
    expect((await c.uploads('MKCOL', 'small')).status).toBe(405);
    expect((await c.uploads('MKCOL', 'bad name!')).status).toBe(400);
    expect((await c.uploads('MKCOL', 'empty', { headers: { 'oc-total-length': '0' } })).status).toBe(201);
    expect((await c.finish('empty', 'empty.txt')).status).toBe(201);
    expect(await (await c.files('GET', 'empty.txt')).text()).toBe('');
    expect((await c.uploads('PUT', 'open/.file', { body: 'x' })).status).toBe(400);
    const before = chunkRows();
    expect((await c.uploads('DELETE', 'open')).status).toBe(204);
    expect((await c.uploads('PROPFIND', 'open')).status).toBe(404);
    expect((await c.uploads('PUT', 'open/3', { body: 'x' })).status).toBe(404);
    expect(chunkRows()).toBe(before - 1);
  });

  test('a chunk past a whole OC-Total-Length is a 400, not dropped (0 declared) nor a 500; an empty one after it adds nothing and the MOVE still works', async () => {
    const c = await nc(await seed.owner(t));
    const past = (total: number) => `This chunk takes the upload past its OC-Total-Length of ${total} bytes`;
    expect((await c.uploads('MKCOL', 'zero', { headers: { 'oc-total-length': '0' } })).status).toBe(201);
    const dropped = await c.uploads('PUT', 'zero/00001', { body: 'hello' });
    expect(dropped.status).toBe(400);
    expect(await dropped.text()).toContain(past(0));
    expect((await c.finish('zero', 'zero.txt')).status).toBe(201);
    expect(await (await c.files('GET', 'zero.txt')).text()).toBe('');

    // In order (sealed into the upload's object as they come) and out of order (each waits as its own object).
    for (const [transfer, order] of [
      ['whole', ['00001', '00002']],
      ['swapped', ['00002', '00001']],
    ] as const) {
      expect((await c.uploads('MKCOL', transfer, { headers: { 'oc-total-length': '10' } })).status).toBe(201);
      for (const chunk of order) expect((await c.uploads('PUT', `${transfer}/${chunk}`, { body: 'hello' })).status).toBe(201);
      const extra = await c.uploads('PUT', `${transfer}/00003`, { body: 'extra' });
      expect(extra.status).toBe(400);
      expect(await extra.text()).toContain(past(10));
      expect((await c.uploads('PUT', `${transfer}/00004`, { body: '' })).status).toBe(201);
      expect((await c.finish(transfer, `${transfer}.txt`)).status).toBe(201);
      expect(await (await c.files('GET', `${transfer}.txt`)).text()).toBe('hellohello');
    }
  });

  test('the final MOVE checks the limit as it stands then: lowered meanwhile, 507 and the upload kept for a MOVE once it fits', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    const setLimit = (storageLimit: number) => admin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit });
    expect((await setLimit(10_000)).status).toBe(200);
    expect((await c.uploads('MKCOL', 'late', { headers: { 'oc-total-length': '6000' } })).status).toBe(201);
    expect((await c.uploads('PUT', 'late/1', { body: bytes(6000, 1) })).status).toBe(201);
    expect((await setLimit(5000)).status).toBe(200);
    expect((await c.finish('late', 'late.bin')).status).toBe(507);
    expect((await c.files('GET', 'late.bin')).status).toBe(404);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(0);
    expect((await setLimit(10_000)).status).toBe(200);
    expect((await c.finish('late', 'late.bin')).status).toBe(201);
    expect(Buffer.from(await (await c.files('GET', 'late.bin')).arrayBuffer()).equals(bytes(6000, 1))).toBe(true);
    expect(t.server.ctx.services.quota.usage(o.id)).toMatchObject({ used: 6000, free: 4000 });
  });

  test('another login’s uploads are 404; a sub-user without Upload is 403; a viewer member’s MOVE is 403, an editor’s lands in the share', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    const other = await nc(await seed.owner(t));
    expect((await c.uploads('MKCOL', 'mine')).status).toBe(201);
    expect((await c.uploads('PUT', 'mine/1', { body: 'secret' })).status).toBe(201);
    const theirs = (method: string, rel: string, headers: Record<string, string> = {}) =>
      fetch(`${t.url}/remote.php/dav/uploads/${o.id}/${rel}`, { method, headers: { authorization: other.authorization, ...headers } });
    for (const res of [
      await theirs('PROPFIND', 'mine'),
      await theirs('PUT', 'mine/2'),
      await theirs('DELETE', 'mine'),
      await theirs('MOVE', 'mine/.file', { destination: other.filesUrl('stolen.txt') }),
      await other.uploads('PROPFIND', 'mine'),
      await other.uploads('MOVE', 'mine/.file', { headers: { destination: other.filesUrl('stolen.txt') } }),
    ])
      expect(res.status).toBe(404);
    expect((await c.finish('mine', 'mine.txt')).status).toBe(201);
    expect(await (await c.files('GET', 'mine.txt')).text()).toBe('secret');

    const reader = await nc(await seed.subUser(t, o, ['files.download']));
    expect((await reader.uploads('MKCOL', 's1')).status).toBe(403);
    // Checked at every chunk: Upload taken away after the upload began, its next chunk is refused too.
    const uploader = await seed.subUser(t, o, ['files.upload']);
    const u = await nc(uploader);
    expect((await u.uploads('MKCOL', 'u1')).status).toBe(201);
    expect((await u.uploads('PUT', 'u1/1', { body: 'one' })).status).toBe(201);
    expect((await o.client.put(`/api/user/sub-users/${uploader.id}`, { permissions: ['files.download'] })).status).toBe(200);
    expect((await u.uploads('PUT', 'u1/2', { body: 'two' })).status).toBe(403);
    // Without Upload a sub-user may still replace a file's content (Edit), not create one.
    const editor = await nc(await seed.subUser(t, o, ['files.download', 'files.edit']));
    expect((await editor.uploads('MKCOL', 's1')).status).toBe(201);
    expect((await editor.uploads('PUT', 's1/1', { body: 'edited' })).status).toBe(201);
    expect((await editor.finish('s1', 'new.txt')).status).toBe(403);
    expect((await editor.finish('s1', 'mine.txt')).status).toBe(204);
    expect(await (await c.files('GET', 'mine.txt')).text()).toBe('edited');

    const member = await seed.owner(t);
    const m = await nc(member);
    const team = await folder(o.client, 'Team');
    const family = await folder(o.client, 'Family');
    expect((await o.client.post(`/api/files/${team.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    expect((await o.client.post(`/api/files/${family.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    for (const [transfer, into] of [
      ['to-family', 'Family'],
      ['to-team', 'Team'],
    ] as const) {
      // Without Destination the size is reserved in the member's own account; the file still lands in the owner's.
      expect((await m.uploads('MKCOL', transfer, { headers: { 'oc-total-length': String(`for ${into}`.length) } })).status).toBe(201);
      expect((await m.uploads('PUT', `${transfer}/1`, { body: `for ${into}` })).status).toBe(201);
    }
    // With Destination in a share the member may write to, the size is reserved in the owner's account, and the
    // upload's object becomes the owner's file; a viewer's Destination reserves nothing there.
    expect((await admin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit: 1_000_000 })).status).toBe(200);
    const ownerFree = async () => (await json(await o.client.get('/api/user/storage'))).free;
    const freeBefore = await ownerFree();
    const into = (share: string) => ({ 'oc-total-length': '7', destination: m.filesUrl(`Shared%20with%20me/${share}/y.txt`) });
    expect((await m.uploads('MKCOL', 'family-y', { headers: into('Family') })).status).toBe(201);
    expect(await ownerFree()).toBe(freeBefore);
    expect((await m.uploads('MKCOL', 'team-y', { headers: into('Team') })).status).toBe(201);
    expect(await ownerFree()).toBe(freeBefore - 7);
    expect((await m.uploads('PUT', 'team-y/1', { body: 'team y!' })).status).toBe(201);
    expect((await m.finish('team-y', 'Shared%20with%20me/Team/y.txt')).status).toBe(201);
    expect(await ownerFree()).toBe(freeBefore - 7);
    expect((await m.finish('to-family', 'Shared%20with%20me/Family/x.txt')).status).toBe(403);
    expect((await m.finish('to-team', 'Shared%20with%20me/Team/x.txt')).status).toBe(201);
    const inTeam = await listAll(o.client, `/api/files?parentId=${team.id}`);
    expect(inTeam.map((i) => i.name).sort()).toEqual(['x.txt', 'y.txt']);
    expect((await downloaded(o.client, inTeam.find((i) => i.name === 'x.txt').id)).toString()).toBe('for Team');
    expect((await downloaded(o.client, inTeam.find((i) => i.name === 'y.txt').id)).toString()).toBe('team y!');
    expect(await listAll(o.client, `/api/files?parentId=${family.id}`)).toEqual([]);
  });

  test("a member's upload reserved in the owner's account ends when its last editor share there ends (removed or made a viewer)", async () => {
    const o = await seed.owner(t);
    expect((await admin.client.put('/api/user/storage-limit', { targetUserId: o.id, storageLimit: 1_000_000 })).status).toBe(200);
    const member = await seed.owner(t);
    const m = await nc(member);
    const team = await folder(o.client, 'Team');
    const other = await folder(o.client, 'Other');
    const share = (id: string, role: string) => o.client.post(`/api/files/${id}/members`, { email: member.email, role });
    expect((await share(team.id, 'editor')).status).toBe(201);
    expect((await share(other.id, 'editor')).status).toBe(201);
    const ownerFree = async () => (await json(await o.client.get('/api/user/storage'))).free;
    const freeBefore = await ownerFree();
    const into = { 'oc-total-length': '7', destination: m.filesUrl('Shared%20with%20me/Team/y.txt') };
    expect((await m.uploads('MKCOL', 'team-y', { headers: into })).status).toBe(201);
    expect((await m.uploads('PUT', 'team-y/1', { body: 'team y!' })).status).toBe(201);
    expect(await ownerFree()).toBe(freeBefore - 7);
    // Still an editor of another of the owner's folders: the upload may go there, and keeps its reservation.
    expect((await o.client.delete(`/api/files/${team.id}/members/${member.id}`)).status).toBe(200);
    expect(await ownerFree()).toBe(freeBefore - 7);
    expect((await o.client.send('PATCH', `/api/files/${other.id}/members/${member.id}`, { role: 'viewer' })).status).toBe(200);
    await eventually(async () => expect(await ownerFree()).toBe(freeBefore));
    expect((await m.uploads('PROPFIND', 'team-y', { headers: { depth: '1' } })).status).toBe(404);
    expect(
      t.server.ctx.db.$client
        .query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM chunked_uploads WHERE account_id = ?')
        .get(member.id)!.n,
    ).toBe(0);
  });

  test("a member's upload reserved in an account that is then deleted ends with it: its row and its bytes go", async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const m = await nc(member);
    const team = await folder(o.client, 'Team');
    expect((await o.client.post(`/api/files/${team.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const into = { 'oc-total-length': '20000', destination: m.filesUrl('Shared%20with%20me/Team/y.bin') };
    expect((await m.uploads('MKCOL', 'orphaned', { headers: into })).status).toBe(201);
    expect((await m.uploads('PUT', 'orphaned/1', { body: bytes(10_000, 3) })).status).toBe(201);
    const stored = t.server.ctx.db.$client
      .query<{ k: string }, [string]>('SELECT storage_key AS k FROM chunked_uploads WHERE account_id = ?')
      .get(member.id)!.k;
    expect(stagedFiles(t.dataDir)).toContain(stored);
    expect((await admin.client.delete(`/api/user/${o.id}`)).status).toBe(202);
    await eventually(() => expect(t.server.ctx.repos.users.byId(o.id)).toBeNull());
    await eventually(async () => expect((await m.uploads('PROPFIND', 'orphaned', { headers: { depth: '1' } })).status).toBe(404));
    await eventually(() => expect(stagedFiles(t.dataDir)).not.toContain(stored));
  });

  test("a member's final MOVE: its share ending (404) or turning viewer (403) while the file is made, or a folder at the Destination (405, as a PUT), stores and changes nothing", async () => {
    const seen: unknown[] = [];
    const expected: unknown[] = [];
    for (const [end, sized, status] of [
      ['remove', true, 404],
      ['viewer', true, 403],
      ['remove', false, 404],
      ['viewer', false, 403],
      ['folder', true, 405],
      ['folder', false, 405],
      ['viewer onto a file', true, 403],
      ['viewer onto a file', false, 403],
    ] as const) {
      const o = await seed.owner(t);
      const member = await seed.owner(t);
      const m = await nc(member);
      const team = await folder(o.client, 'Team');
      await folder(o.client, 'Sub', team.id);
      const old = await upload(o.client, 'old.txt', 'old', { parentId: team.id });
      expect((await o.client.post(`/api/files/${team.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
      const usedBefore = (await json(await o.client.get('/api/user/storage'))).used;
      const rel = `Shared%20with%20me/Team/${{ folder: 'Sub', 'viewer onto a file': 'old.txt' }[end as string] ?? 'late.bin'}`;
      const headers: Record<string, string> = sized ? { 'oc-total-length': '8', destination: m.filesUrl(rel) } : {};
      expect((await m.uploads('MKCOL', 'late', { headers })).status).toBe(201);
      expect((await m.uploads('PUT', 'late/1', { body: 'late one' })).status).toBe(201);
      const uploads = t.server.ctx.services.uploads;
      const commit = uploads.commitResumed.bind(uploads);
      const uploadRow = uploads.uploadRow.bind(uploads);
      const replace = uploads.replace.bind(uploads);
      const change = async () => {
        if (end === 'remove') expect((await o.client.delete(`/api/files/${team.id}/members/${member.id}`)).status).toBe(200);
        if (end !== 'remove' && end !== 'folder')
          expect((await o.client.send('PATCH', `/api/files/${team.id}/members/${member.id}`, { role: 'viewer' })).status).toBe(200);
      };
      uploads.commitResumed = async (...args) => {
        await change();
        return commit(...args);
      };
      uploads.uploadRow = async (...args) => {
        await change();
        return uploadRow(...args);
      };
      uploads.replace = async (...args) => {
        await change();
        return replace(...args);
      };
      let res: Response;
      try {
        res = await m.finish('late', rel);
      } finally {
        uploads.commitResumed = commit;
        uploads.uploadRow = uploadRow;
        uploads.replace = replace;
      }
      const names = (await listAll(o.client, `/api/files?parentId=${team.id}`)).map((i) => i.name);
      const used = (await json(await o.client.get('/api/user/storage'))).used - usedBefore;
      const content = (await downloaded(o.client, old.id)).toString();
      seen.push({ end, sized, status: res.status, names, used, content });
      expected.push({ end, sized, status, names: ['Sub', 'old.txt'], used: 0, content: 'old' });
    }
    expect(seen).toEqual(expected);
  });

  test('the final MOVE into a folder trashed while the file is made is 404 and puts nothing anywhere; the upload stays for a MOVE elsewhere', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    const inbox = await folder(o.client, 'Inbox');
    expect((await c.uploads('MKCOL', 'late', { headers: { 'oc-total-length': '4' } })).status).toBe(201);
    expect((await c.uploads('PUT', 'late/1', { body: 'late' })).status).toBe(201);
    const uploads = t.server.ctx.services.uploads;
    const commit = uploads.commitResumed.bind(uploads);
    uploads.commitResumed = async (...args) => {
      expect((await o.client.post('/api/files/delete', { ids: [inbox.id] })).status).toBe(200);
      return commit(...args);
    };
    try {
      expect((await c.finish('late', 'Inbox/late.txt')).status).toBe(404);
    } finally {
      uploads.commitResumed = commit;
    }
    expect((await listAll(o.client, '/api/files')).map((i) => i.name)).toEqual([]);
    expect((await c.finish('late', 'late.txt')).status).toBe(201);
    expect(await (await c.files('GET', 'late.txt')).text()).toBe('late');
  });

  test('an abandoned upload is kept from orphan review, then removed with its chunks after 24 hours', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    expect((await c.uploads('MKCOL', 'abandoned')).status).toBe(201);
    expect((await c.uploads('PUT', 'abandoned/1', { body: bytes(5000, 3) })).status).toBe(201);
    // One sealed into its own object as it came: its staged bytes go with it too.
    expect((await c.uploads('MKCOL', 'abandoned-sealed', { headers: { 'oc-total-length': '10000' } })).status).toBe(201);
    expect((await c.uploads('PUT', 'abandoned-sealed/1', { body: bytes(5000, 4) })).status).toBe(201);
    const staged = async () => {
      const keys: string[] = [];
      for await (const o of t.server.ctx.storage.driver.staging.list()) keys.push(o.key);
      return keys;
    };
    expect((await staged()).length).toBeGreaterThanOrEqual(1);
    const chunked = t.server.ctx.services.chunkedUploads;
    // Eventually: an earlier test's request cut mid-body may still hold a stored object it is about to remove.
    const noOrphans = () =>
      eventually(async () => expect((await t.server.ctx.services.orphans.scan({ graceMinutes: 0 })).storageOrphans.count).toBe(0));
    await noOrphans();
    expect(await chunked.sweep()).toBe(0);
    clock.advance(25 * 3600_000);
    expect(await chunked.sweep()).toBeGreaterThanOrEqual(2);
    expect((await c.uploads('PROPFIND', 'abandoned')).status).toBe(404);
    expect((await c.uploads('PROPFIND', 'abandoned-sealed')).status).toBe(404);
    expect(await staged()).toEqual([]);
    await noOrphans();
  });
  test('the clock set two days ahead while an upload is under way removes nothing: it stays until 24 hours of real time pass', async () => {
    const o = await seed.owner(t);
    const c = await nc(o);
    expect((await c.uploads('MKCOL', 'jumped')).status).toBe(201);
    expect((await c.uploads('PUT', 'jumped/1', { body: bytes(5000, 5) })).status).toBe(201);
    const chunked = t.server.ctx.services.chunkedUploads;
    clock.jump(2 * 24 * 3600_000);
    await chunked.sweep();
    expect((await c.uploads('PROPFIND', 'jumped')).status).toBe(207);
    clock.jump(-2 * 24 * 3600_000);
    clock.advance(25 * 3600_000);
    await chunked.sweep();
    expect((await c.uploads('PROPFIND', 'jumped')).status).toBe(404);
  });
});
