import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { listAll } from '../../helpers/files.ts';
import { parseXml } from '../../../src/lib/xml.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false, env: { LOG_LEVEL: 'error' } });
  await seed.admin(t);
});
afterAll(() => t.stop());

const propertyUpdate = (props: string) =>
  `<D:propertyupdate xmlns:D="DAV:" xmlns:x="urn:x"><D:set><D:prop>${props}</D:prop></D:set></D:propertyupdate>`;
const nested = (levels: number) => `${'<x:v>'.repeat(levels)}${'</x:v>'.repeat(levels)}`;

describe('hostile XML bodies', () => {
  test('a namespace flood from a sub-user without permissions is 413 with the reason, and the server keeps answering', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, await seed.subUser(t, o, []));
    // The audit's 1 MB body (26,000 declarations, 140,000 children) took 71 s; this smaller one took seconds.
    const declarations = Array.from({ length: 2000 }, (_, i) => ` xmlns:p${i}="urn:p${i}"`).join('');
    const body = `<D:propfind xmlns:D="DAV:"${declarations}><D:prop>${'<p1:a/>'.repeat(20_000)}</D:prop></D:propfind>`;
    const res = await dav.propfind('', '1', body);
    expect(res.status).toBe(413);
    expect((await json(res)).message).toBe('The XML body is too large to process: more than 1,000 namespace declarations');
    expect((await fetch(`${t.url}/health`)).status).toBe(200);
  });

  test('nesting past 400 levels in a PROPPATCH value or a LOCK owner is 413, not a stack overflow', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('deep.txt', 'x');
    const deep = await dav.request('PROPPATCH', 'deep.txt', { body: propertyUpdate(`<x:p xmlns:x="urn:x">${nested(400)}</x:p>`) });
    expect(deep.status).toBe(413);
    expect((await json(deep)).message).toBe('The XML body is too large to process: more than 400 levels of nested elements');
    const owner = `<D:owner xmlns:x="urn:x">${nested(399)}</D:owner>`;
    const lock = await dav.request('LOCK', 'deep.txt', {
      body: `<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>${owner}</D:lockinfo>`,
    });
    expect(lock.status).toBe(413);
    // Within the limit, a nested value is kept and given back.
    const kept = await dav.request('PROPPATCH', 'deep.txt', { body: propertyUpdate(`<x:p xmlns:x="urn:x">${nested(390)}</x:p>`) });
    expect(kept.status).toBe(207);
    const found = await dav.propfind('deep.txt', '0', '<D:propfind xmlns:D="DAV:"><D:prop><x:p xmlns:x="urn:x"/></D:prop></D:propfind>');
    expect((await found.text()).match(/<v[ >/]/g)).toHaveLength(390);
  });

  test('character references to characters XML excludes (&#xD800;, &#0;) are 400, and nothing is stored', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('chars.txt', 'x');
    for (const ref of ['&#xD800;', '&#0;']) {
      const res = await dav.request('PROPPATCH', 'chars.txt', { body: propertyUpdate(`<x:p xmlns:x="urn:x">a${ref}b</x:p>`) });
      expect(res.status).toBe(400);
      expect((await json(res)).message).toContain('not allowed in XML');
    }
    expect(await (await dav.propfind('chars.txt', '0')).text()).not.toContain('urn:x');
  });

  test('a name stored before U+FFFE/U+FFFF and controls were refused comes back in PROPFIND as XML a reader takes (U+FFFD in their place)', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    expect((await dav.request('MKCOL', 'old')).status).toBe(201);
    expect((await dav.put('old/name.txt', 'x')).status).toBe(201);
    // As an older Coffer could have stored it: written straight into the database.
    const stored = 'old\ufffe\uffff\u0001name.txt';
    const changed = t.server.ctx.db.$client
      .query("UPDATE items SET name = ?, name_key = ? WHERE name = 'name.txt' AND account_id = ?")
      .run(stored, stored, o.id);
    expect(changed.changes).toBe(1);
    const res = await dav.propfind('old', '1');
    expect(res.status).toBe(207);
    const names = parseXml(await res.text())
      .children.flatMap((r) => (r.kind === 'element' ? r.children : []))
      .flatMap(function texts(n): string[] {
        return n.kind === 'text' ? [n.text] : n.children.flatMap(texts);
      });
    expect(names).toContain('old\ufffd\ufffd\ufffdname.txt');
  });

  test('an attribute or namespace declaration given twice on one element is 400 (not well formed), not kept as its last value', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('twice.txt', 'x');
    for (const [value, message] of [
      ['<x:p><x:v a="1" a="2"/></x:p>', 'duplicate attribute a'],
      // Two prefixes of one namespace name one attribute too (Namespaces in XML §6.3).
      ['<x:p><x:v xmlns:y="urn:y" xmlns:z="urn:y" y:a="1" z:a="2"/></x:p>', 'duplicate attribute z:a'],
      ['<x:p><x:v xmlns:y="urn:y" xmlns:y="urn:z"/></x:p>', 'duplicate attribute xmlns:y'],
    ]) {
      const res = await dav.request('PROPPATCH', 'twice.txt', { body: propertyUpdate(value!) });
      expect(res.status).toBe(400);
      expect((await json(res)).message).toStartWith(`The XML body is malformed: ${message} at offset `);
    }
    expect(await (await dav.propfind('twice.txt', '0')).text()).not.toContain('urn:x');
    // One attribute each, or one name in two namespaces, is kept as sent.
    const kept = await dav.request('PROPPATCH', 'twice.txt', { body: propertyUpdate('<x:p><x:v xmlns:y="urn:y" a="1" y:a="2"/></x:p>') });
    expect(kept.status).toBe(207);
    const found = await dav.propfind('twice.txt', '0', '<D:propfind xmlns:D="DAV:"><D:prop><x:p xmlns:x="urn:x"/></D:prop></D:propfind>');
    expect(await found.text()).toContain('<v xmlns="urn:x" a="1" xmlns:a0="urn:y" a0:a="2"/>');
  });

  test('line breaks and tabs in a value come back as an XML reader took them from the PROPPATCH: references kept, literal ones read as XML reads them', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('lines.txt', 'x');
    // In an attribute, a written tab or line break is a space and a reference is that character; in text, CR LF is LF and &#13; is CR.
    const value = '<x:p><x:v a="one&#10;two&#9;three" b="four\nfive\tsix">l1\r\nl2&#13;l3</x:v></x:p>';
    expect((await dav.request('PROPPATCH', 'lines.txt', { body: propertyUpdate(value) })).status).toBe(207);
    const found = await dav.propfind('lines.txt', '0', '<D:propfind xmlns:D="DAV:"><D:prop><x:p xmlns:x="urn:x"/></D:prop></D:propfind>');
    expect(await found.text()).toContain('<v xmlns="urn:x" a="one&#10;two&#9;three" b="four five six">l1\nl2&#13;l3</v>');
  });

  test('a PROPPATCH value in bytes that are not UTF-8 is 400, not stored with U+FFFD in their place', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('latin.txt', 'x');
    // "café" written in ISO-8859-1: its 0xE9 alone is no UTF-8.
    const body = Buffer.from(propertyUpdate('<x:p>café</x:p>'), 'latin1');
    const res = await dav.request('PROPPATCH', 'latin.txt', { body });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toBe('The request body is not valid UTF-8: send XML bodies encoded as UTF-8');
    expect(await (await dav.propfind('latin.txt', '0')).text()).not.toContain('urn:x');
  });

  test('an XML body sent chunked (no Content-Length) past 1 MiB is 413 naming the XML limit', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 17; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const res = await fetch(`${t.url}/dav/`, {
      method: 'PROPFIND',
      headers: { authorization: dav.authorization, depth: '0' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await json(res)).message).toBe('Request body too large (the limit for XML bodies is 1 MiB)');
  });
});

describe('compressed request bodies', () => {
  const refusal = (encoding: string) => ({ message: `Content-Encoding ${encoding} is not supported: send the request body uncompressed` });

  test('an XML body sent with a Content-Encoding (PROPFIND, PROPPATCH, LOCK, REPORT) is 415 naming it, not an XML parse error; identity is read', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('a.txt', 'x');
    const gz = (xml: string) => Bun.gzipSync(xml);
    const sent = [
      ['PROPFIND', '', '<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>', { depth: '0' }],
      ['PROPPATCH', 'a.txt', propertyUpdate('<x:p>v</x:p>'), {}],
      [
        'LOCK',
        'a.txt',
        '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>',
        {},
      ],
      [
        'REPORT',
        '',
        '<D:sync-collection xmlns:D="DAV:"><D:sync-token/><D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>',
        {},
      ],
    ] as const;
    for (const [method, path, xml, headers] of sent) {
      for (const encoding of ['gzip', 'deflate, br']) {
        const res = await dav.request(method, path, {
          headers: { ...headers, 'content-type': 'application/xml', 'content-encoding': encoding },
          body: gz(xml),
        });
        expect({ method, status: res.status, body: await json(res) }).toEqual({ method, status: 415, body: refusal(encoding) });
      }
    }
    // Nothing of the PROPPATCH or the LOCK was kept.
    expect(await (await dav.propfind('a.txt', '0')).text()).not.toContain('urn:x');
    expect((await dav.put('a.txt', 'y')).status).toBe(204);
    const plain = await dav.request('PROPFIND', '', { headers: { depth: '0', 'content-encoding': 'identity' }, body: sent[0][2] });
    expect(plain.status).toBe(207);
    // No body, nothing to decode: the header alone refuses nothing.
    expect((await dav.request('PROPFIND', '', { headers: { depth: '0', 'content-encoding': 'gzip' } })).status).toBe(207);
    expect((await dav.request('MKCOL', 'made', { headers: { 'content-encoding': 'gzip' } })).status).toBe(201);
  });

  test('a PUT (whole, or a chunk of a Nextcloud chunked upload) sent with a Content-Encoding is 415, and the compressed bytes are not stored as the file', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const res = await dav.put('notes.txt', Bun.gzipSync('hello'), { 'content-encoding': 'gzip' });
    expect({ status: res.status, body: await json(res) }).toEqual({ status: 415, body: refusal('gzip') });
    expect(await listAll(o.client, '/api/files')).toEqual([]);
    await dav.put('kept.txt', 'kept');
    const over = await dav.put('kept.txt', Bun.gzipSync('other'), { 'content-encoding': 'gzip' });
    expect(over.status).toBe(415);
    expect(await (await dav.request('GET', 'kept.txt')).text()).toBe('kept');
    const uploads = `${t.url}/remote.php/dav/uploads/${o.id}/web-file-upload-1`;
    const auth = { authorization: dav.authorization };
    expect((await fetch(uploads, { method: 'MKCOL', headers: auth })).status).toBe(201);
    const chunk = await fetch(`${uploads}/00001`, {
      method: 'PUT',
      headers: { ...auth, 'content-encoding': 'gzip' },
      body: Bun.gzipSync('part'),
    });
    // The Nextcloud doors answer in Sabre's XML, which the clients show.
    expect({ status: chunk.status, body: await chunk.text() }).toEqual({
      status: 415,
      body: expect.stringContaining(`<s:message>${refusal('gzip').message}</s:message>`),
    });
    const listed = await fetch(uploads, { method: 'PROPFIND', headers: { ...auth, depth: '1' } });
    expect(await listed.text()).not.toContain('00001');
  });
});

describe('dead properties and what a PROPFIND may ask', () => {
  const names = (n: number) => Array.from({ length: n }, (_, i) => `<x:p${i}/>`).join('');
  const propfindOf = (props: string, ns = 'urn:x') => `<D:propfind xmlns:D="DAV:" xmlns:x="${ns}"><D:prop>${props}</D:prop></D:propfind>`;

  test('a body-less PROPFIND of a file with 50,000 dead properties (stored before the caps) lists them in linear time', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('many.txt', 'x');
    const [file] = await listAll(o.client, '/api/files');
    const { davProperties, transactions } = t.server.ctx.repos;
    transactions.batch(() => {
      for (let i = 0; i < 50_000; i++) davProperties.set({ itemId: file!.id, ns: 'urn:x', name: `p${i}`, value: '', lang: null });
    });
    // CPU time of this process (the server runs in it), not wall time: other load on the machine does not count.
    const started = process.cpuUsage();
    const res = await dav.propfind('many.txt', '0');
    const text = await res.text();
    const { user, system } = process.cpuUsage(started);
    expect(res.status).toBe(207);
    expect(text.match(/<x:p\d+ /g)).toHaveLength(50_000);
    // Finding each name among all of them took 8 s here.
    expect((user + system) / 1000).toBeLessThan(1500);
  });

  test('a PROPFIND naming more than 1,000 properties or 65,536 characters of names is 413; at the limits every row gets its answer', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.request('MKCOL', 'ask');
    for (const name of ['a.txt', 'b.txt']) await dav.put(`ask/${name}`, 'x');
    const many = await dav.propfind('ask/', '1', propfindOf(names(1001)));
    expect(many.status).toBe(413);
    expect((await json(many)).message).toBe(
      'A PROPFIND may name at most 1,000 properties, of 65,536 characters of namespaces and names together; this one names 1,001 of 8,900 characters',
    );
    // A long namespace named again and again counts each time it is named.
    const long = `urn:${'n'.repeat(1020)}`;
    expect((await dav.propfind('ask/', '1', propfindOf(names(70), long))).status).toBe(413);
    const atLimit = await dav.propfind('ask/', '1', propfindOf(names(1000)));
    expect(atLimit.status).toBe(207);
    const text = await atLimit.text();
    expect(text.match(/<D:response>/g)).toHaveLength(3);
    expect(text.match(/<x:p999 /g)).toHaveLength(3);
  });

  test('PROPPATCH past 1,000 properties or 64 KiB on one item is 507 with the reason, and none of it is kept', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await dav.put('capped.txt', 'x');
    const count = async () => ((await (await dav.propfind('capped.txt', '0')).text()).match(/<x:[pq]\d+ /g) ?? []).length;
    const tooMany = await dav.request('PROPPATCH', 'capped.txt', { body: propertyUpdate(names(1001)) });
    expect(tooMany.status).toBe(507);
    expect((await json(tooMany)).message).toBe(
      'This PROPPATCH has 1,001 instructions; an item keeps at most 1,000 WebDAV properties and 64.0 KiB of them',
    );
    expect((await dav.request('PROPPATCH', 'capped.txt', { body: propertyUpdate(names(600)) })).status).toBe(207);
    const more = Array.from({ length: 401 }, (_, i) => `<x:q${i}/>`).join('');
    const past = await dav.request('PROPPATCH', 'capped.txt', { body: propertyUpdate(more) });
    expect(past.status).toBe(507);
    expect((await json(past)).message).toStartWith('capped.txt would have 1001 properties of');
    const big = await dav.request('PROPPATCH', 'capped.txt', { body: propertyUpdate(`<x:big>${'v'.repeat(64 * 1024)}</x:big>`) });
    expect(big.status).toBe(507);
    expect(await count()).toBe(600);
  });

  test("an account's properties beyond each item's first KiB stop at 16 MiB (507) whatever its storage limit; a COPY past it is refused first", async () => {
    const o = await seed.owner(t);
    t.server.ctx.services.users.setStorageLimit(o.id, 1024 * 1024);
    const dav = await davLogin(t, o);
    const value = 'v'.repeat(63 * 1024);
    let refused: Response | null = null;
    let stored = 0;
    for (let i = 0; !refused && i < 300; i++) {
      expect((await dav.put(`f${i}.txt`, '')).status).toBe(201);
      const res = await dav.request('PROPPATCH', `f${i}.txt`, { body: propertyUpdate(`<x:big xmlns:x="urn:x">${value}</x:big>`) });
      if (res.status === 507) refused = res;
      else stored++;
    }
    expect((await json(refused!)).message).toBe(
      'The WebDAV properties of this account are full: beyond 1.00 KiB per item they may take 16.0 MiB; remove some first',
    );
    // 62 KiB beyond the first KiB of each item: 264 fit in 16 MiB.
    expect(stored).toBe(264);
    expect((await json(await o.client.get('/api/user/storage'))).used).toBe(0);
    const copy = await dav.request('COPY', 'f0.txt', { headers: { destination: `${t.url}/dav/f-copy.txt` } });
    expect(copy.status).toBe(507);
    expect((await dav.request('GET', 'f-copy.txt')).status).toBe(404);
    // The trash still holds what a trashed item carries.
    expect((await dav.request('DELETE', 'f2.txt')).status).toBe(204);
    const again = await dav.request('PROPPATCH', `f${stored}.txt`, { body: propertyUpdate(`<x:big>${value}</x:big>`) });
    expect(again.status).toBe(507);
    // Removing properties makes room again; small ones (a KiB per item) never count.
    const remove = '<D:propertyupdate xmlns:D="DAV:"><D:remove><D:prop><x:big xmlns:x="urn:x"/></D:prop></D:remove></D:propertyupdate>';
    expect((await dav.request('PROPPATCH', 'f0.txt', { body: remove })).status).toBe(207);
    expect((await dav.request('COPY', 'f1.txt', { headers: { destination: `${t.url}/dav/f-copy.txt` } })).status).toBe(201);
    expect(
      (await dav.request('PROPPATCH', 'f0.txt', { body: propertyUpdate(`<x:small xmlns:x="urn:x">${'s'.repeat(900)}</x:small>`) })).status,
    ).toBe(207);
  });
});
