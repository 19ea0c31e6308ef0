import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';
import { ALL_PERMISSIONS, PERMISSION_CATALOG, type Permission } from '../../../src/contract/permissions.ts';
import { ROUTES } from '../../../src/http/policy.ts';
import { permissionFor } from '../../../src/services/identity/permissions.ts';

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
  ['POST', () => `/api/user/${target}/confirm-email`, undefined, adminOnly],
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

describe('every route a permission guards, walked from the policy table', () => {
  const guarded = Object.entries(ROUTES).flatMap(([key, policy]) => {
    const access = (policy as { access: unknown }).access;
    if (typeof access !== 'object' || access === null) return [];
    const [method, pattern] = key.split(' ') as [string, string];
    // Any id: the permission is checked before the item is looked up or the body read.
    return [
      {
        method,
        path: pattern.replace(/:[A-Za-z]+/g, 'AAAAAAAAAAAAAAAAAAAAAA'),
        needed: permissionFor((access as { operation: never }).operation),
      },
    ];
  });
  const logins = new Map<string, TestClient>();
  beforeAll(async () => {
    const o = await seed.owner(t);
    for (const p of ALL_PERMISSIONS) {
      logins.set(
        `without ${p}`,
        (
          await seed.subUser(
            t,
            o,
            ALL_PERMISSIONS.filter((q) => q !== p),
          )
        ).client,
      );
      logins.set(`only ${p}`, (await seed.subUser(t, o, [p])).client);
    }
  });
  const bodyOf = (method: string) => (method === 'GET' || method === 'DELETE' ? undefined : {});
  const label = (p: Permission) => PERMISSION_CATALOG.find((c) => c.key === p)!.label;

  test.each(guarded)(
    '$method $path: a sub-user with every other permission 403 naming $needed; with only it, past the guard',
    async ({ method, path, needed }) => {
      const refused = await logins.get(`without ${needed}`)!.send(method, path, bodyOf(method));
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain(label(needed));
      expect([401, 403]).not.toContain((await logins.get(`only ${needed}`)!.send(method, path, bodyOf(method))).status);
    },
  );
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
