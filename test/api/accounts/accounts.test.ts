import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';
import { ManualClock } from '../../../src/clock.ts';

let t: TestServer;
const clock = new ManualClock(Date.now());
let adminLogin: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer({ clock });
  adminLogin = await seed.admin(t);
});
afterAll(() => t.stop());

describe('GET /api/profile', () => {
  test("carries the login's permissions: null for an owner, the granted keys in catalog order for a sub-user", async () => {
    const own = await json(await adminLogin.client.get('/api/profile'));
    expect(own.permissions).toBeNull();
    const sub = await seed.subUser(t, adminLogin, ['files.share', 'files.download']);
    const profile = await json(await sub.client.get('/api/profile'));
    expect(profile.permissions).toEqual(['files.download', 'files.share']);
    expect(Object.keys(profile).sort()).toEqual(['createdAt', 'email', 'id', 'mfaEnabled', 'name', 'permissions', 'signInMethods']);
    expect(profile.signInMethods).toEqual(['password']);
  });
});

describe('POST /api/signup', () => {
  test('the first account is the admin, and creating it closes signup → 403', async () => {
    const profile = await json(await adminLogin.client.get('/api/profile'));
    expect(profile.email).toBe(adminLogin.email);
    expect(t.server.ctx.services.accounts.findById(profile.id)!.isAdmin).toBe(true);
    const res = await t.client().post('/api/signup', { email: seed.uniqueEmail(), password: 'secret1' });
    expect(res.status).toBe(403);
    expect(await json(res)).toEqual(errors.signupDisabled);
  });

  test('answers {user: {id, email, name, createdAt, mfaEnabled}} and sets an HttpOnly SameSite=Lax token cookie', async () => {
    t.server.ctx.services.settings.set('signupEnabled', true);
    try {
      const email = seed.uniqueEmail('Mixed.Case');
      const client = t.client();
      const res = await client.post('/api/signup', { email, password: 'secret1', name: '  Ada  ' });
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(Object.keys(body.user).sort()).toEqual(['createdAt', 'email', 'id', 'mfaEnabled', 'name']);
      expect(body.user).toMatchObject({ email, name: 'Ada', mfaEnabled: false });
      expect(body.user.id.length).toBeGreaterThanOrEqual(16);
      const cookie = res.headers.get('set-cookie')!;
      expect(cookie).toMatch(/^token=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
      expect(t.server.ctx.services.accounts.findById(body.user.id)!.isAdmin).toBe(false);

      const dup = await t.client().post('/api/signup', { email: email.toUpperCase(), password: 'secret1' });
      expect(dup.status).toBe(409);
      expect(await json(dup)).toEqual(errors.emailInUse);
    } finally {
      t.server.ctx.services.settings.set('signupEnabled', false);
    }
  });

  test.each([
    [{ password: 'secret1' }, 'email'],
    [{ email: 'not-an-email', password: 'secret1' }, 'email'],
    [{ email: `${'a'.repeat(250)}@x.io`, password: 'secret1' }, 'email'],
    [{ email: 'a@b.io', password: '12345' }, 'password'],
    [{ email: 'a@b.io', password: 'x'.repeat(129) }, 'password'],
    [{ email: 'a@b.io', password: 'secret1', name: 'n'.repeat(101) }, 'name'],
  ])('invalid body %p → 422 naming %s', async (body, field) => {
    t.server.ctx.services.settings.set('signupEnabled', true);
    try {
      const res = await t.client().post('/api/signup', body);
      expect(res.status).toBe(422);
      const b = await json(res);
      expect(b.message).toBe('Validation failed');
      expect(b.details.map((d: { field: string }) => d.field)).toContain(field);
    } finally {
      t.server.ctx.services.settings.set('signupEnabled', false);
    }
  });
});

describe('POST /api/login', () => {
  test('wrong password and unknown email are the same 401; a valid login works with cookie and Bearer', async () => {
    const o = await seed.owner(t);
    for (const body of [
      { email: o.email, password: 'wrong-password' },
      { email: seed.uniqueEmail(), password: 'whatever' },
    ]) {
      const res = await t.client().post('/api/login', body);
      expect(res.status).toBe(401);
      expect(await json(res)).toEqual(errors.invalidCredentials);
    }
    const res = await t.client().post('/api/login', { email: o.email.toUpperCase(), password: o.password });
    expect(res.status).toBe(200);
    const token = /token=([^;]+)/.exec(res.headers.get('set-cookie')!)![1]!;
    const viaBearer = await t.client().get('/api/profile', { authorization: `Bearer ${token}` });
    expect(viaBearer.status).toBe(200);
    expect((await json(viaBearer)).email).toBe(o.email);
  });

  test('a login with a password over 128 characters → 422', async () => {
    const res = await t.client().post('/api/login', { email: 'a@b.io', password: 'x'.repeat(129) });
    expect(res.status).toBe(422);
  });

  test('the authentication limiter: 25 attempts per IP and email, then 429 with {error} and RateLimit headers', async () => {
    const email = seed.uniqueEmail('limited');
    for (let i = 0; i < 25; i++) expect((await t.client().post('/api/login', { email, password: 'x' })).status).toBe(401);
    const res = await t.client().post('/api/login', { email, password: 'x' });
    expect(res.status).toBe(429);
    expect(await json(res)).toEqual(errors.tooManyRequests);
    for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after']) expect(res.headers.get(h)).not.toBeNull();
    expect(res.headers.get('ratelimit-limit')).toBe('25');
    // Another email from the same address has its own budget.
    expect((await t.client().post('/api/login', { email: seed.uniqueEmail(), password: 'x' })).status).toBe(401);
  });
});

describe('tokens and sessions', () => {
  test('no token → 401 No token provided; a forged token → 401 Invalid token', async () => {
    const none = await t.client().get('/api/profile');
    expect(none.status).toBe(401);
    expect(await json(none)).toEqual(errors.noToken);
    const forged = await t.client().get('/api/profile', { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.x' });
    expect(forged.status).toBe(401);
    expect(await json(forged)).toEqual(errors.invalidToken);
  });

  test('logout clears the cookie and revokes the session at once', async () => {
    const o = await seed.owner(t);
    const token = o.client.cookies.get('token')!;
    const res = await o.client.post('/api/logout');
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toMatch(/^token=; .*Max-Age=0/);
    const after = await t.client().get('/api/profile', { authorization: `Bearer ${token}` });
    expect(after.status).toBe(401);
    expect(await json(after)).toEqual(errors.sessionRevoked);
  });

  test('logout-all invalidates every session of the login: Session expired', async () => {
    const o = await seed.owner(t);
    const second = await seed.login(t, o.email);
    const res = await o.client.post('/api/logout-all');
    expect(await json(res)).toEqual({ message: expect.any(String), sessionsInvalidated: true });
    const other = await second.get('/api/profile');
    expect(other.status).toBe(401);
    expect(await json(other)).toEqual(errors.sessionExpired);
  });

  test('a token past half its 7-day life is re-issued; past 7 days it is refused', async () => {
    const o = await seed.owner(t);
    const before = o.client.cookies.get('token');
    clock.advance(3 * 24 * 3600_000);
    const early = await o.client.get('/api/profile');
    expect(early.headers.get('set-cookie')).toBeNull();
    clock.advance(24 * 3600_000 + 1000);
    const later = await o.client.get('/api/profile');
    expect(later.status).toBe(200);
    expect(later.headers.get('set-cookie')).toMatch(/^token=/);
    expect(o.client.cookies.get('token')).not.toBe(before);
    // A Bearer client keeps the token it holds: only the cookie slides.
    const bearer = await t.client().get('/api/profile', { authorization: `Bearer ${before}` });
    expect(bearer.status).toBe(200);
    expect(bearer.headers.get('set-cookie')).toBeNull();
    clock.advance(8 * 24 * 3600_000);
    const stale = await t.client().get('/api/profile', { authorization: `Bearer ${before}` });
    expect(stale.status).toBe(401);
    expect(await json(stale)).toEqual(errors.invalidToken);
    clock.set(Date.now());
  });

  test('a cookie-authenticated state change from another Origin → 403; same origin and Bearer pass', async () => {
    const o = await seed.owner(t);
    const cross = await o.client.post('/api/logout-all', undefined, { origin: 'https://evil.example' });
    expect(cross.status).toBe(403);
    const same = await o.client.get('/api/profile', { origin: 'https://evil.example' });
    expect(same.status).toBe(200);
    const ok = await o.client.post('/api/logout', undefined, { origin: t.url });
    expect(ok.status).toBe(200);
  });

  test('a cookie-authenticated state change marked Sec-Fetch-Site: cross-site → 403 even without Origin; same-site, none and Bearer pass', async () => {
    const o = await seed.owner(t);
    const crossSite = { 'sec-fetch-site': 'cross-site' };
    const refused = await o.client.post('/api/files/folder', { name: 'from another site' }, crossSite);
    expect(refused.status).toBe(403);
    expect(await json(refused)).toEqual({ message: 'Cross-origin request refused' });
    expect((await o.client.get('/api/files', crossSite)).status).toBe(200);
    expect((await json(await o.client.get('/api/files'))).map((i: { name: string }) => i.name)).not.toContain('from another site');
    for (const site of ['same-origin', 'same-site', 'none']) {
      expect((await o.client.post('/api/files/folder', { name: site }, { 'sec-fetch-site': site })).status).toBe(200);
    }
    const bearer = { authorization: `Bearer ${o.client.cookies.get('token')}`, ...crossSite };
    expect((await t.client().post('/api/files/folder', { name: 'bearer' }, bearer)).status).toBe(200);
  });

  test('GET /api/version needs a session and answers a three-part version', async () => {
    expect((await t.client().get('/api/version')).status).toBe(401);
    const body = await json(await adminLogin.client.get('/api/version'));
    expect(body.backend).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('POST /api/change-password', () => {
  test('wrong current password 400; same password 422; success invalidates every session', async () => {
    const o = await seed.owner(t);
    const other = await seed.login(t, o.email);
    const wrong = await o.client.post('/api/change-password', { oldPassword: 'nope', newPassword: 'brand new pw' });
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).message).toBe('Current password is incorrect');
    const same = await o.client.post('/api/change-password', { oldPassword: o.password, newPassword: o.password });
    expect(same.status).toBe(422);
    expect((await json(same)).details[0].field).toBe('newPassword');
    const ok = await o.client.post('/api/change-password', { oldPassword: o.password, newPassword: 'brand new pw' });
    expect(ok.status).toBe(200);
    expect((await other.get('/api/profile')).status).toBe(401);
    expect((await o.client.get('/api/profile')).status).toBe(401);
    expect((await t.client().post('/api/login', { email: o.email, password: o.password })).status).toBe(401);
    await seed.login(t, o.email, 'brand new pw');
  });

  test('a sign-in with the old password racing the change keeps no session (its check waited while the new one was hashed)', async () => {
    const o = await seed.owner(t);
    const change = o.client.post('/api/change-password', { oldPassword: o.password, newPassword: 'brand new pw' });
    let changed = false;
    void change.then(() => (changed = true));
    // Sign-ins with the old password until the change is answered: those read while the new password is hashed wait behind it.
    const racers: Array<Promise<{ status: number; client: ReturnType<typeof t.client> }>> = [];
    while (!changed && racers.length < 20) {
      const c = t.client();
      racers.push(c.post('/api/login', { email: o.email, password: o.password }).then((res) => ({ status: res.status, client: c })));
      await Bun.sleep(30);
    }
    expect((await change).status).toBe(200);
    const signedIn = (await Promise.all(racers)).filter((r) => r.status === 200);
    for (const r of signedIn) expect((await r.client.get('/api/profile')).status).toBe(401);
  });

  test('an app password asked for with the old password while the change revokes them all is refused, not left behind', async () => {
    const o = await seed.owner(t);
    const other = await seed.login(t, o.email);
    const change = o.client.post('/api/change-password', {
      oldPassword: o.password,
      newPassword: 'brand new pw',
      revokeAppPasswords: true,
    });
    let changed = false;
    void change.then(() => (changed = true));
    // Those whose password check waited behind the new password's hash finish after every app password was revoked.
    const asked: Array<Promise<Response>> = [];
    while (!changed && asked.length < 20) {
      asked.push(other.post('/api/user/app-passwords', { name: `Phone ${asked.length}`, password: o.password }));
      await Bun.sleep(30);
    }
    expect((await change).status).toBe(200);
    for (const res of await Promise.all(asked)) expect([201, 401]).toContain(res.status);
    const fresh = await seed.login(t, o.email, 'brand new pw');
    expect((await json(await fresh.get('/api/user/app-passwords'))).appPasswords).toEqual([]);
  });

  test('two changes at once from two sessions: the first stands, the one checked against the password it replaced is refused', async () => {
    const o = await seed.owner(t);
    const other = await seed.login(t, o.email);
    const change = o.client.post('/api/change-password', { oldPassword: o.password, newPassword: 'the owner pw' });
    let changed = false;
    void change.then(() => (changed = true));
    const racing: Array<Promise<Response>> = [];
    while (!changed && racing.length < 20) {
      racing.push(other.post('/api/change-password', { oldPassword: o.password, newPassword: `someone else ${racing.length}` }));
      await Bun.sleep(30);
    }
    expect((await change).status).toBe(200);
    for (const res of await Promise.all(racing)) expect(res.status).toBeGreaterThanOrEqual(400);
    await seed.login(t, o.email, 'the owner pw');
  });

  test('the new password follows the contract for every login: 6 to 128 characters, a sub-user too (its first one needed 8)', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, []);
    const short = await sub.client.post('/api/change-password', { oldPassword: sub.password, newPassword: '12345' });
    expect(short.status).toBe(422);
    expect((await json(short)).details[0].field).toBe('newPassword');
    const long = await o.client.post('/api/change-password', { oldPassword: o.password, newPassword: 'x'.repeat(129) });
    expect((await json(long)).details[0].field).toBe('newPassword');
    expect((await sub.client.post('/api/change-password', { oldPassword: sub.password, newPassword: 'six666' })).status).toBe(200);
    await seed.login(t, sub.email, 'six666');
  });

  test('disabled by the admin → 403', async () => {
    const o = await seed.owner(t);
    t.server.ctx.services.settings.set('allowPasswordChange', false);
    try {
      const res = await o.client.post('/api/change-password', { oldPassword: o.password, newPassword: 'another pw' });
      expect(res.status).toBe(403);
    } finally {
      t.server.ctx.services.settings.set('allowPasswordChange', true);
    }
  });
});

describe('request bodies', () => {
  test('JSON over 1 MiB → 413; malformed JSON → 400; a non-JSON body → 400', async () => {
    const big = await t.client().request('/api/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@b.io', password: 'x'.repeat(1024 * 1024) }),
    });
    expect(big.status).toBe(413);
    const bad = await t
      .client()
      .request('/api/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":' });
    expect(bad.status).toBe(400);
    expect((await json(bad)).message).toBe('Request body is not valid JSON');
    const form = await t.client().request('/api/login', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'email=a' });
    expect(form.status).toBe(400);
  });
});

test('a JSON body sent compressed (Content-Encoding) → 415 naming the encoding, not "not valid JSON"', async () => {
  const body = Bun.gzipSync(JSON.stringify({ email: 'a@b.io', password: 'secret1' }));
  for (const encoding of ['gzip', 'br, gzip']) {
    const res = await t.client().request('/api/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      body,
    });
    expect(res.status).toBe(415);
    expect(await json(res)).toEqual({
      message: `Content-Encoding ${encoding} is not supported: send the request body uncompressed`,
    });
  }
  const plain = await t.client().request('/api/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
    body: JSON.stringify({ email: 'nobody@b.io', password: 'secret1' }),
  });
  expect(plain.status).toBe(401);
});

describe('display names', () => {
  const invisible = '\u200B\u202E \u200F\u3164';

  test('a name of only invisible characters is no name: sign-up and invitation store none, a sub-user (name required) → 422', async () => {
    t.server.ctx.services.settings.set('signupEnabled', true);
    try {
      const res = await t.client().post('/api/signup', { email: seed.uniqueEmail('blank'), password: 'secret1', name: invisible });
      expect(res.status).toBe(200);
      expect((await json(res)).user.name).toBe('');
    } finally {
      t.server.ctx.services.settings.set('signupEnabled', false);
    }
    const invited = await adminLogin.client.post('/api/user/invitations', { email: seed.uniqueEmail('blank-invite'), name: invisible });
    expect(invited.status).toBe(201);
    expect(JSON.stringify(await json(await adminLogin.client.get('/api/user/invitations')))).not.toContain('\u200B');

    const sub = await adminLogin.client.post('/api/user/sub-users', {
      email: seed.uniqueEmail('blank-sub'),
      password: 'longenough',
      name: invisible,
      permissions: [],
    });
    expect(sub.status).toBe(422);
    expect((await json(sub)).details).toEqual([{ field: 'name', message: 'Name is required' }]);
  });

  test('bidirectional controls inside a typed name are dropped, as in a name from sign-on', async () => {
    const res = await adminLogin.client.post('/api/user/sub-users', {
      email: seed.uniqueEmail('rlo-sub'),
      password: 'longenough',
      name: 'Ada\u202Egnp.exe',
      permissions: [],
    });
    expect(res.status).toBe(201);
    expect((await json(res)).subUser.name).toBe('Adagnp.exe');
  });
});
