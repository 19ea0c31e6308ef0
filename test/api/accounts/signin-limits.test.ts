import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { generate } from 'otplib';
import { ManualClock } from '../../../src/clock.ts';
import { json } from '../../helpers/client.ts';
import { DavClient, davLogin } from '../../helpers/dav.ts';
import { errors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// Small limits keep the argon2 checks these tests cause to a few dozen.
const AUTH_LIMIT = 5;
const HASH_BUDGET = 10;
const WRONG_DAV = { message: 'Wrong email or app password. Make an app password in Settings → App passwords.' };

const clock = new ManualClock(Date.now());
let t: TestServer;
let admin: seed.SeededLogin;
let addresses = 0;

beforeAll(async () => {
  t = await startTestServer({
    clock,
    startWorker: false,
    env: { COFFER_AUTH_RATE_LIMIT: String(AUTH_LIMIT), COFFER_PASSWORD_HASH_RATE_LIMIT: String(HASH_BUDGET) },
  });
  admin = await seed.admin(t);
  // Loopback is a known proxy, so each test can come from addresses of its own (X-Forwarded-For).
  expect((await admin.client.put('/api/user/known-proxies-config', { knownProxies: ['127.0.0.1'] })).status).toBe(200);
  await t.restart({ samePort: true });
});
afterAll(() => t.stop());
// A fresh minute of password hashes for the loopback address the seeds sign in from.
beforeEach(() => clock.advance(60_000));

/** A client address no other test has used. */
const newAddress = () => ({ 'x-forwarded-for': `10.20.${++addresses}.1` });

async function accountPasswords(enabled: boolean): Promise<void> {
  expect((await admin.client.put('/api/user/webdav-account-password-config', { enabled })).status).toBe(200);
}

const davAttempt = (email: string, password: string, from: Record<string, string>) =>
  new DavClient(t.url, email, password).request('PROPFIND', '', { headers: { depth: '0', ...from } });

const signIn = (email: string, password: string, from: Record<string, string>) => t.client().post('/api/login', { email, password }, from);

async function withMfa(): Promise<seed.SeededLogin> {
  const login = await seed.owner(t);
  const setup = await json(await login.client.post('/api/mfa/setup'));
  expect(
    (await login.client.post('/api/mfa/verify', { code: await generate({ secret: setup.secret, epoch: Math.floor(clock.now() / 1000) }) }))
      .status,
  ).toBe(200);
  return login;
}

const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {});

const WINDOW = 15 * 60_000;
/** Moves the clock to the start of a 15-minute window, so a test's attempts cannot straddle two. */
const windowStart = () => clock.advance(WINDOW - (clock.now() % WINDOW));

/** The audit log's entries of `action` (listed by its area's prefix) for which `match` holds. */
async function audited(action: string, match: (e: { loginId: string | null; email: string | null }) => boolean) {
  await t.server.ctx.services.audit.flush();
  return t.server.ctx.services.audit.list({ action: action.split('.')[0]! }).filter((e) => e.action === action && match(e));
}

describe('the sign-in limiter holds under concurrent guesses', () => {
  test('WebDAV with account passwords: each attempt is counted before its password is checked; past the limit even the right one waits', async () => {
    await accountPasswords(true);
    try {
      const o = await seed.owner(t);
      const from = newAddress();
      const guesses = await Promise.all(Array.from({ length: 20 }, (_, i) => davAttempt(o.email, `wrong guess ${i}`, from)));
      expect(tally(guesses.map((r) => r.status))).toEqual({ 401: AUTH_LIMIT, 429: 20 - AUTH_LIMIT });
      expect((await davAttempt(o.email, o.password, from)).status).toBe(429);
      // A success does not count: a device with the right password makes any number of requests.
      const device = newAddress();
      for (let i = 0; i < AUTH_LIMIT + 2; i++) expect((await davAttempt(o.email, o.password, device)).status).toBe(207);
    } finally {
      await accountPasswords(false);
    }
  });

  test('JSON sign-in: the same, each attempt counted before the hash', async () => {
    const o = await seed.owner(t);
    const from = newAddress();
    const guesses = await Promise.all(Array.from({ length: 20 }, (_, i) => signIn(o.email, `wrong guess ${i}`, from)));
    expect(tally(guesses.map((r) => r.status))).toEqual({ 401: AUTH_LIMIT, 429: 20 - AUTH_LIMIT });
    expect((await signIn(o.email, o.password, from)).status).toBe(429);
  });
});

describe('a device still sending a revoked app password', () => {
  test("is refused (401) as often as it retries, without using up the address's attempts: the login's other devices there keep working; each new wrong secret still counts", async () => {
    windowStart();
    const o = await seed.owner(t);
    const laptop = await davLogin(t, o, 'laptop');
    const oldPhone = await davLogin(t, o, 'old phone');
    expect((await o.client.delete(`/api/user/app-passwords/${oldPhone.id}`)).status).toBe(200);
    const home = newAddress();
    const propfind = (c: DavClient) => c.request('PROPFIND', '', { headers: { depth: '0', ...home } });
    const retries: number[] = [];
    for (let i = 0; i < AUTH_LIMIT * 4; i++) retries.push((await propfind(oldPhone)).status);
    expect(tally(retries)).toEqual({ 401: AUTH_LIMIT * 4 });
    expect((await propfind(laptop)).status).toBe(207);
    // Guesses are counted as before: past the limit every secret waits, the right one too.
    const guesses: number[] = [];
    for (let i = 0; i < AUTH_LIMIT; i++) guesses.push((await davAttempt(o.email, `guess ${i}`, home)).status);
    expect(tally(guesses)).toEqual({ 401: AUTH_LIMIT - 1, 429: 1 });
    const refused = await propfind(laptop);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test("where account passwords sign in too, each refusal counts as before: an old password retried stops at the address's limit, short of locking the email", async () => {
    windowStart();
    const o = await seed.owner(t);
    await accountPasswords(true);
    try {
      const home = newAddress();
      const statuses: number[] = [];
      for (let i = 0; i < 150; i++) statuses.push((await davAttempt(o.email, 'the password before', home)).status);
      expect(tally(statuses)).toEqual({ 401: AUTH_LIMIT, 429: 150 - AUTH_LIMIT });
      expect((await signIn(o.email, o.password, newAddress())).status).toBe(200);
      expect(await audited('auth.passwords_locked', (e) => e.email === o.email)).toEqual([]);
    } finally {
      await accountPasswords(false);
    }
  });

  test("a disabled account's device is not remembered as wrong: it gets in as soon as the account is enabled", async () => {
    windowStart();
    const o = await seed.owner(t);
    const phone = await davLogin(t, o, 'phone');
    const home = newAddress();
    t.server.ctx.services.users.setDisabled(o.id, true, 'cli');
    expect((await phone.request('PROPFIND', '', { headers: { depth: '0', ...home } })).status).toBe(401);
    t.server.ctx.services.users.setDisabled(o.id, false, 'cli');
    expect((await phone.request('PROPFIND', '', { headers: { depth: '0', ...home } })).status).toBe(207);
  });
});

describe('WebDAV sign-in does not tell which emails have an account', () => {
  test('app passwords only: an unknown email, a wrong password and an account with two-step verification get the same 401, and none costs a password hash', async () => {
    const o = await seed.owner(t);
    const m = await withMfa();
    const from = newAddress();
    const answers = [await davAttempt(o.email, 'wrong password', from), await davAttempt(m.email, m.password, from)];
    // More unknown emails than the address's hash budget: none is hashed, so none is refused for it.
    for (let i = 0; i <= HASH_BUDGET; i++) answers.push(await davAttempt(seed.uniqueEmail('nobody'), 'wrong password', from));
    for (const res of answers) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toStartWith('Basic realm=');
      expect(await json(res)).toEqual(WRONG_DAV);
    }
  });

  test('account passwords allowed: each of the three costs exactly one password hash, as an unknown email does', async () => {
    await accountPasswords(true);
    try {
      const o = await seed.owner(t);
      const m = await withMfa();
      for (const [email, password] of [
        [o.email, 'wrong password'],
        [m.email, m.password],
        [seed.uniqueEmail('nobody'), 'wrong password'],
      ] as const) {
        // The attempt and HASH_BUDGET - 1 unknown emails use up the budget exactly when the attempt cost one hash.
        const from = newAddress();
        const first = await davAttempt(email, password, from);
        expect(first.status).toBe(401);
        expect(await json(first)).toEqual(WRONG_DAV);
        for (let i = 1; i < HASH_BUDGET; i++) expect((await davAttempt(seed.uniqueEmail('nobody'), 'x', from)).status).toBe(401);
        expect({ email, next: (await davAttempt(seed.uniqueEmail('nobody'), 'x', from)).status }).toEqual({ email, next: 429 });
      }
    } finally {
      await accountPasswords(false);
    }
  });
});

describe('the client address behind a known proxy', () => {
  test('a proxy that adds the port (1.2.3.4:51234, [2001:db8::1]:443) names one client whichever connection it came on: its guesses share one count', async () => {
    windowStart();
    const o = await seed.owner(t);
    const n = ++addresses;
    for (const [i, client] of [`10.30.${n}.1`, `[2001:db8::${n.toString(16)}]`].entries()) {
      const statuses: number[] = [];
      for (let port = 40_000; port < 40_000 + AUTH_LIMIT + 1; port++) {
        statuses.push((await signIn(o.email, `wrong ${port}`, { 'x-forwarded-for': `203.0.113.1, ${client}:${port + i}` })).status);
      }
      expect(statuses).toEqual([...Array(AUTH_LIMIT).fill(401), 429]);
    }
    // Another client behind the same proxy is counted on its own.
    expect((await signIn(o.email, o.password, { 'x-forwarded-for': `10.31.${n}.1:40000` })).status).toBe(200);
  });

  test('an IPv6 client is its /64 (the block one home or phone is given): a new address of it each guess shares one count, and one password-hash budget', async () => {
    windowStart();
    const o = await seed.owner(t);
    const n = (++addresses).toString(16);
    const from = (i: number) => ({ 'x-forwarded-for': `2001:db8:${n}:1:${i.toString(16)}::1` });
    const statuses: number[] = [];
    for (let i = 0; i <= AUTH_LIMIT; i++) statuses.push((await signIn(o.email, `wrong ${i}`, from(i))).status);
    expect(statuses).toEqual([...Array(AUTH_LIMIT).fill(401), 429]);
    // Emails rotated over the block's addresses spend the one budget of password hashes.
    clock.advance(60_000 - (clock.now() % 60_000));
    const rotated: number[] = [];
    for (let i = 0; i <= HASH_BUDGET; i++) rotated.push((await signIn(seed.uniqueEmail('guess'), 'a guess', from(100 + i))).status);
    expect(rotated).toEqual([...Array(HASH_BUDGET).fill(401), 429]);
    // The next /64 is another client.
    expect((await signIn(o.email, o.password, { 'x-forwarded-for': `2001:db8:${n}:2::1` })).status).toBe(200);
  });
});

describe('password hashes per address, whichever emails they are for', () => {
  test('one address rotating emails gets 429 with Retry-After past the budget, at every door that hashes; other addresses and app passwords are unaffected', async () => {
    const o = await seed.owner(t);
    const app = await davLogin(t, o);
    await accountPasswords(true);
    try {
      clock.advance(60_000 - (clock.now() % 60_000));
      const from = newAddress();
      for (let i = 0; i < HASH_BUDGET; i++) expect((await signIn(seed.uniqueEmail('guess'), 'a guess', from)).status).toBe(401);
      const refused = await signIn(seed.uniqueEmail('guess'), 'a guess', from);
      expect(refused.status).toBe(429);
      expect(await json(refused)).toEqual(errors.tooManyRequests);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect((await signIn(o.email, o.password, from)).status).toBe(429);
      expect((await davAttempt(o.email, o.password, from)).status).toBe(429);
      expect((await t.client().post('/api/signup', { email: seed.uniqueEmail('new'), password: 'a password' }, from)).status).toBe(429);

      // Someone else signs in as usual; a device with an app password (no hash) keeps working from that address.
      expect((await signIn(o.email, o.password, newAddress())).status).toBe(200);
      expect((await app.request('PROPFIND', '', { headers: { depth: '0', ...from } })).status).toBe(207);

      clock.advance(60_000);
      expect((await signIn(o.email, o.password, from)).status).toBe(200);
    } finally {
      await accountPasswords(false);
    }
  });
});

describe('second-factor codes per login, from every address together', () => {
  test('past 10 wrong codes in 15 minutes every code is 429 whichever address sends it, audited; the next window lets the owner in', async () => {
    windowStart();
    const login = await seed.owner(t);
    const setup = await json(await login.client.post('/api/mfa/setup'));
    const code = () => generate({ secret: setup.secret, epoch: Math.floor(clock.now() / 1000) });
    expect((await login.client.post('/api/mfa/verify', { code: await code() })).status).toBe(200);
    clock.advance(60_000);
    const attempt = (mfaCode: string) =>
      t.client().post('/api/login', { email: login.email, password: login.password, mfaCode }, newAddress());
    const right = await code();
    const wrong = right === '000000' ? '000001' : '000000';
    for (let i = 0; i < 10; i++) expect((await attempt(wrong)).status).toBe(401);
    const refused = await attempt(right);
    expect(refused.status).toBe(429);
    expect(await json(refused)).toEqual(errors.tooManyRequests);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await audited('mfa.codes_locked', (e) => e.loginId === login.id)).toHaveLength(1);
    clock.advance(WINDOW);
    expect((await attempt(await code())).status).toBe(200);
  });
});

describe('wrong passwords per email, from every address together', () => {
  // 101 argon2 checks one after another: ~4 s on a quiet box, over 10 under a full run's load (hence its timeout).
  test('past 100 in 15 minutes every password is 429 whichever address sends it, the right one too, audited; app passwords keep working; the next window lets the owner in', async () => {
    windowStart();
    const o = await seed.owner(t);
    const app = await davLogin(t, o);
    const statuses: number[] = [];
    // Each address stays under its own limits (AUTH_LIMIT per address and email, HASH_BUDGET hashes a minute).
    let from = newAddress();
    for (let i = 0; i < 100; i++) {
      if (i % AUTH_LIMIT === 0) from = newAddress();
      statuses.push((await signIn(o.email, `wrong guess ${i}`, from)).status);
    }
    expect(tally(statuses)).toEqual({ 401: 100 });
    const refused = await signIn(o.email, o.password, newAddress());
    expect(refused.status).toBe(429);
    expect(await json(refused)).toEqual(errors.tooManyRequests);
    await accountPasswords(true);
    try {
      expect((await davAttempt(o.email, o.password, newAddress())).status).toBe(429);
    } finally {
      await accountPasswords(false);
    }
    expect((await app.propfind('', '0')).status).toBe(207);
    expect(await audited('auth.passwords_locked', (e) => e.email === o.email)).toHaveLength(1);
    clock.advance(WINDOW);
    expect((await signIn(o.email, o.password, newAddress())).status).toBe(200);
  }, 60_000);
});
