import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';

let t: TestServer;
let callers: Record<'admin' | 'owner' | 'subUser' | 'anonymous', TestClient>;
let target: string;

beforeAll(async () => {
  t = await startTestServer();
  const a = await seed.admin(t);
  const o = await seed.owner(t);
  const sub = await seed.subUser(t, o, ['files.download', 'files.upload', 'files.edit', 'files.share', 'files.delete', 'files.trash']);
  target = o.id;
  callers = { admin: a.client, owner: o.client, subUser: sub.client, anonymous: t.client() };
});
afterAll(() => t.stop());

type Row = [method: string, path: () => string, body: unknown, expected: Record<'admin' | 'owner' | 'subUser' | 'anonymous', number>];
const adminOnly = { admin: 200, owner: 403, subUser: 403, anonymous: 401 };
const ownerOnly = { admin: 200, owner: 200, subUser: 403, anonymous: 401 };
const anyLogin = { admin: 200, owner: 200, subUser: 200, anonymous: 401 };

const MATRIX: Row[] = [
  ['GET', () => '/api/user/all', undefined, adminOnly],
  ['PUT', () => '/api/user/storage-limit', () => ({ targetUserId: target, storageLimit: 10 ** 12 }), adminOnly],
  ['GET', () => '/api/user/active-clients', undefined, adminOnly],
  ['PATCH', () => `/api/user/${target}`, () => ({ disabled: false }), adminOnly],
  ['POST', () => '/api/user/signup-toggle', () => ({ enabled: false }), adminOnly],
  ['GET', () => '/api/user/docserver-config', undefined, adminOnly],
  ['PUT', () => '/api/user/docserver-config', () => ({ url: null, jwtSecret: null }), adminOnly],
  ['GET', () => '/api/user/share-base-url-config', undefined, adminOnly],
  ['PUT', () => '/api/user/share-base-url-config', () => ({ url: null }), adminOnly],
  ['PUT', () => '/api/user/max-upload-size-config', () => ({ maxBytes: 10737418240 }), adminOnly],
  ['GET', () => '/api/user/known-proxies-config', undefined, adminOnly],
  ['PUT', () => '/api/user/known-proxies-config', () => ({ knownProxies: [] }), adminOnly],
  ['PUT', () => '/api/user/hide-file-extensions-config', () => ({ hidden: false }), adminOnly],
  ['PUT', () => '/api/user/desktop-only-access-config', () => ({ enabled: false }), adminOnly],
  ['PUT', () => '/api/user/password-change-config', () => ({ enabled: true }), adminOnly],
  ['GET', () => '/api/user/sub-users', undefined, ownerOnly],
  ['GET', () => '/api/user/signup-status', undefined, anyLogin],
  ['GET', () => '/api/user/storage', undefined, anyLogin],
  ['GET', () => '/api/user/max-upload-size-config', undefined, anyLogin],
  ['GET', () => '/api/user/hide-file-extensions-config', undefined, anyLogin],
  ['GET', () => '/api/user/desktop-only-access-config', undefined, anyLogin],
  ['GET', () => '/api/user/password-change-config', undefined, anyLogin],
  ['GET', () => '/api/user/docserver-configured', undefined, anyLogin],
  ['GET', () => '/api/profile', undefined, anyLogin],
  ['GET', () => '/api/version', undefined, anyLogin],
  ['GET', () => '/api/mfa/status', undefined, anyLogin],
  ['GET', () => '/api/sessions', undefined, anyLogin],
  // Passkeys are each login's own: a sub-user has its own list (another login's id is 404: passkeys.test.ts).
  ['GET', () => '/api/passkeys', undefined, anyLogin],
  ['GET', () => '/api/signup-status', undefined, { admin: 200, owner: 200, subUser: 200, anonymous: 200 }],
  // A sign-in page asks before anyone is signed in (docs/compatibility.md › Deliberate widenings).
  ['GET', () => '/api/idp/enabled', undefined, { admin: 200, owner: 200, subUser: 200, anonymous: 200 }],
];

describe('access matrix: admin, owner, sub-user and anonymous on each guarded endpoint', () => {
  for (const [method, path, body, expected] of MATRIX) {
    for (const who of ['admin', 'owner', 'subUser', 'anonymous'] as const) {
      test(`${method} ${path()} as ${who} → ${expected[who]}`, async () => {
        const res = await callers[who].send(method, path(), typeof body === 'function' ? body() : body);
        expect(res.status).toBe(expected[who]);
        if (expected[who] === 401) expect(await json(res)).toEqual(errors.noToken);
        if (expected[who] === 403) expect(await json(res)).toEqual(expected === adminOnly ? errors.adminOnly : errors.ownerOnly);
      });
    }
  }
});

describe('backup codes under concurrency', () => {
  test('one backup code used by two simultaneous logins signs in exactly once', async () => {
    const o = await seed.owner(t);
    const setup = await json(await o.client.post('/api/mfa/setup'));
    const code = await t.server.ctx.services.mfa.currentCode(setup.secret);
    const { backupCodes } = await json(await o.client.post('/api/mfa/verify', { code }));
    const attempt = () => t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: backupCodes[0] });
    const statuses = (await Promise.all([attempt(), attempt(), attempt()])).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 401, 401]);
  });
});
