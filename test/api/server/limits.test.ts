import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import { uploadRaw } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ env: { COFFER_UPLOAD_RATE_LIMIT: '3', COFFER_AUTH_RATE_LIMIT: '4' } });
  await seed.admin(t);
});
afterAll(() => t.stop());

describe('configured rate limits', () => {
  test('COFFER_UPLOAD_RATE_LIMIT: the fourth upload of a login in the window is 429, with the configured limit in its headers', async () => {
    const o = await seed.owner(t);
    for (let i = 0; i < 3; i++) expect((await uploadRaw(o.client, `f${i}.txt`, 'x')).status).toBe(200);
    const res = await uploadRaw(o.client, 'f3.txt', 'x');
    expect(res.status).toBe(429);
    expect(res.headers.get('ratelimit-limit')).toBe('3');
    expect(await json(res)).toEqual(errors.tooManyRequests);
    // Another login has its own count; the general limiter is untouched.
    const other = await seed.owner(t);
    expect((await uploadRaw(other.client, 'g.txt', 'x')).status).toBe(200);
    expect((await o.client.get('/api/files')).status).toBe(200);
  });

  test('COFFER_AUTH_RATE_LIMIT: the fifth sign-in attempt for one address and email is 429', async () => {
    const o = await seed.owner(t);
    // seed.owner signed in once already.
    for (let i = 0; i < 3; i++)
      expect((await t.client().post('/api/login', { email: o.email, password: 'wrong password' })).status).toBe(401);
    const res = await t.client().post('/api/login', { email: o.email, password: o.password });
    expect(res.status).toBe(429);
    expect(res.headers.get('ratelimit-limit')).toBe('4');
  });
});
