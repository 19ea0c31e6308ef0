import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../helpers/client.ts';
import { davLogin } from '../helpers/dav.ts';
import { listAll } from '../helpers/files.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

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
      for (let i = 0; i < 50_000; i++) davProperties.set({ itemId: file!.id, ns: 'urn:x', name: `p${i}`, value: '' });
    });
    const started = performance.now();
    const res = await dav.propfind('many.txt', '0');
    const text = await res.text();
    const ms = performance.now() - started;
    expect(res.status).toBe(207);
    expect(text.match(/<x:p\d+ /g)).toHaveLength(50_000);
    // Finding each name among all of them took 8 s here.
    expect(ms).toBeLessThan(1500);
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
});
