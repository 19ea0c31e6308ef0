import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import { readZip, upload } from '../../helpers/files.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await seed.admin(t);
});
afterAll(() => t.stop());

// The server runs in this process: every lookup of a form field by name (each one scans the whole form) is counted here.
const { get, getAll } = URLSearchParams.prototype;
let lookups = 0;
function countLookups(): void {
  lookups = 0;
  URLSearchParams.prototype.get = function (this: URLSearchParams, name: string) {
    lookups++;
    return get.call(this, name);
  };
  URLSearchParams.prototype.getAll = function (this: URLSearchParams, name: string) {
    lookups++;
    return getAll.call(this, name);
  };
}
afterEach(() => {
  URLSearchParams.prototype.get = get;
  URLSearchParams.prototype.getAll = getAll;
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const fields = (n: number) => Array.from({ length: n }, (_, i) => `f${i}=`).join('&');

describe('form-encoded bodies (share unlock, bulk download, login flow poll)', () => {
  test('a public unlock posted with 20,000 distinct fields is read in one pass, not one scan of the form per field', async () => {
    countLookups();
    const res = await fetch(`${t.url}/s/no-such-link/unlock`, { method: 'POST', headers: FORM, body: fields(20_000) });
    expect(res.status).toBe(422);
    expect((await json(res)).details).toEqual([{ field: 'password', message: 'password is required' }]);
    expect(lookups).toBeLessThan(10);
  });

  test('repeated ids keep their order among 5,000 other fields, and a `__proto__` field is a plain field', async () => {
    const o = await seed.owner(t);
    const a = await upload(o.client, 'a.txt', 'aa');
    const b = await upload(o.client, 'b.txt', 'bbb');
    countLookups();
    const res = await o.client.request('/api/files/download/bulk', {
      method: 'POST',
      headers: FORM,
      body: `ids=${b.id}&__proto__=x&${fields(5_000)}&ids=${a.id}`,
    });
    expect(res.status).toBe(200);
    expect(readZip(Buffer.from(await res.arrayBuffer())).map((e) => e.name)).toEqual(['b.txt', 'a.txt']);
    expect(lookups).toBeLessThan(10);
  });
});
