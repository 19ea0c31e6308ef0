import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test';
import { createHash, randomBytes } from 'node:crypto';
import { generate } from 'otplib';
import { ManualClock } from '../../../src/clock.ts';
import type { AuditEvent } from '../../../src/contract/admin.ts';
import { runCli } from '../../helpers/cli.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import {
  authorize,
  finishSignIn,
  newPerson,
  type ProviderAccount,
  type SsoServer,
  signInWithProvider,
  startSignIn,
  startSsoServer,
  startTestProvider,
  type TestProvider,
} from '../../helpers/oidc.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { eventually } from '../../helpers/eventually.ts';

const PROVIDER_NAME = 'Test IdP';
let provider: TestProvider;
const servers: TestServer[] = [];

/** A Coffer whose single sign-on goes through the test provider; stopped after the file. */
async function coffer(
  env: Record<string, string> = {},
  opts: { clock?: ManualClock; secretInFile?: boolean; host?: string } = {},
): Promise<SsoServer> {
  const c = await startSsoServer(provider, { ...opts, env: { OIDC_PROVIDER_NAME: PROVIDER_NAME, ...env } });
  servers.push(c.t);
  return c;
}

const person = (claims: Partial<ProviderAccount> = {}) => newPerson(provider, claims);

function audit(t: TestServer, action: string, user?: string): AuditEvent[] {
  t.server.ctx.services.audit.flush();
  return t.server.ctx.services.audit.list({ action, user, limit: 1000 }).reverse();
}

const cookieLine = (res: Response, name: string) => res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
const warnings = (c: SsoServer, code: string) => c.logs.filter((l) => l.msg === 'single sign-on failed' && l.fields.code === code);

/** Signs `subject` in through the provider and expects to land on `/login?error=<code>`, with no session. */
async function expectRefused(c: SsoServer, subject: string, code: string): Promise<TestClient> {
  const client = c.t.client();
  expect(await signInWithProvider(provider, client, subject)).toBe(`/login?error=${code}`);
  expect(client.cookies.has('token')).toBe(false);
  return client;
}

beforeAll(async () => {
  provider = await startTestProvider();
});
afterAll(async () => {
  await Promise.all(servers.map((t) => t.stop()));
  await provider.stop();
});

describe('an empty instance reachable beyond loopback', () => {
  test('the provider cannot make the first account: /login?error=setup_code_required, no account; the set-up page with the code can', async () => {
    const c = await coffer({}, { host: '0.0.0.0' });
    const eve = person();
    await expectRefused(c, eve, 'setup_code_required');
    expect(c.t.server.ctx.services.accounts.noLoginYet()).toBe(true);
    const code = c.t.server.ctx.services.setupCode.current()!;
    const admin = { email: seed.uniqueEmail('first'), password: 'correct horse battery', name: 'First', setupCode: code };
    expect((await c.t.client().post('/api/signup', admin)).status).toBe(200);
  });
});

describe('an empty instance: the first sign-in through the provider creates the admin', () => {
  let c: SsoServer;
  let alice: string;
  let aliceClient: TestClient;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    c = await coffer({}, { clock });
    alice = person({ name: 'Alice Admin' });
  });
  // A fresh window of the sign-in limiter (25 callbacks per 15 minutes per address) for each test.
  beforeEach(() => clock.advance(15 * 60_000));

  test('without a session, the sign-in page learns the provider is on and its name', async () => {
    const anonymous = c.t.client();
    expect(await json(await anonymous.get('/api/idp/enabled'))).toEqual({ enabled: true });
    expect(await json(await anonymous.get('/api/signup-status'))).toEqual({
      signupEnabled: true,
      firstUser: true,
      setupCodeRequired: false,
      passwordLogin: true,
      idp: { enabled: true, name: PROVIDER_NAME },
    });
  });

  test('GET /api/idp/login: 302 to the provider with the code flow, PKCE S256, state and nonce in a signed 10-minute cookie', async () => {
    const client = c.t.client();
    const res = await client.get('/api/idp/login');
    expect(res.status).toBe(302);
    const url = new URL(res.headers.get('location')!);
    expect(url.origin).toBe(provider.issuer);
    const p = url.searchParams;
    expect([p.get('response_type'), p.get('scope'), p.get('code_challenge_method')]).toEqual(['code', 'openid email profile', 'S256']);
    expect(p.get('redirect_uri')).toBe(`${c.t.url}/api/idp/callback`);
    for (const name of ['state', 'nonce', 'code_challenge']) expect(p.get(name)!.length).toBeGreaterThanOrEqual(32);
    const cookie = cookieLine(res, 'coffer_idp_state')!;
    expect(cookie).toMatch(/; Path=\/api\/idp; HttpOnly; SameSite=Lax; Max-Age=600$/);
  });

  test('first sign-in: the account is created as admin with no password, sign-up closes, `next` is honoured, the session is a normal one', async () => {
    aliceClient = c.t.client();
    const res = await finishSignIn(aliceClient, await authorize(provider, (await startSignIn(aliceClient, '/trash')).href, alice));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/trash');
    expect(cookieLine(res, 'token')).toMatch(/^token=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
    expect(cookieLine(res, 'coffer_idp_state')).toMatch(/Max-Age=0/);

    const profile = await json(await aliceClient.get('/api/profile'));
    expect(profile).toMatchObject({ email: provider.accounts.get(alice)!.email, name: 'Alice Admin', signInMethods: ['idp'] });
    expect(c.t.server.ctx.services.accounts.findById(profile.id)!.isAdmin).toBe(true);
    expect((await aliceClient.get('/api/user/all')).status).toBe(200);
    expect((await json(await c.t.client().get('/api/signup-status'))).signupEnabled).toBe(false);

    expect(audit(c.t, 'auth.signup', profile.id)).toMatchObject([{ status: 'success', details: { method: 'idp', admin: true } }]);
    expect(audit(c.t, 'auth.sign_in', profile.id)).toMatchObject([{ status: 'success', details: { method: 'idp', mfa: false } }]);
  });

  test('the same provider identity signs in to the same account, even after its email changed at the provider', async () => {
    const before = await json(await aliceClient.get('/api/profile'));
    provider.accounts.set(alice, { ...provider.accounts.get(alice)!, email: seed.uniqueEmail('renamed') });
    const client = c.t.client();
    expect(await signInWithProvider(provider, client, alice)).toBe('/');
    expect((await json(await client.get('/api/profile'))).id).toBe(before.id);
    provider.accounts.set(alice, { ...provider.accounts.get(alice)!, email: before.email });
  });

  test('the session is listed beside the others, can be revoked, and logout-all ends it', async () => {
    const client = c.t.client();
    await signInWithProvider(provider, client, alice);
    expect((await client.post('/api/sessions/heartbeat')).status).toBe(200);
    const { sessions } = await json(await aliceClient.get('/api/sessions?refreshIp=true'));
    const mine = (await json(await client.get('/api/sessions?refreshIp=true'))).sessions.find((s: { isCurrent: boolean }) => s.isCurrent);
    expect(sessions.map((s: { id: string }) => s.id)).toContain(mine.id);
    expect(sessions.find((s: { id: string }) => s.id === mine.id).is_online).toBe(true);

    expect((await aliceClient.delete(`/api/sessions/${mine.id}`)).status).toBe(200);
    const revoked = await client.get('/api/profile');
    expect(revoked.status).toBe(401);
    expect((await json(revoked)).message).toBe('Session has been revoked. Please login again.');

    const other = c.t.client();
    await signInWithProvider(provider, other, alice);
    expect((await other.post('/api/logout-all')).status).toBe(200);
    expect((await aliceClient.get('/api/profile')).status).toBe(401);
    aliceClient = c.t.client();
    await signInWithProvider(provider, aliceClient, alice);
  });

  test('a `next` too long for the state cookie goes home: the cookie stays within the 4 KiB browsers keep and the sign-in completes', async () => {
    // Each é is six characters once the URL is normalised (%C3%A9).
    const next = `/files/abc?q=${'\u00e9'.repeat(500)}`;
    const client = c.t.client();
    const res = await client.get(`/api/idp/login?next=${encodeURIComponent(next)}`);
    expect(cookieLine(res, 'coffer_idp_state')!.length).toBeLessThanOrEqual(4096);
    expect(await signInWithProvider(provider, c.t.client(), alice, next)).toBe('/');
    expect(await signInWithProvider(provider, c.t.client(), alice, '/files/abc?q=short')).toBe('/files/abc?q=short');
  });

  test('`next` is a path on this origin only: another origin, a scheme-relative URL or a path that normalises to one goes home', async () => {
    for (const [next, landing] of [
      ['/files/abc?view=grid#x', '/files/abc?view=grid#x'],
      ['/files/./a/../b', '/files/b'],
      ['//evil.example/steal', '/'],
      ['/\\evil.example', '/'],
      ['https://evil.example/', '/'],
      ['javascript:alert(1)', '/'],
      ['/.//evil.example', '/'],
      ['/..//evil.example/x', '/'],
      ['/a/..//evil.example', '/'],
      ['/%2e//evil.example', '/'],
      ['/files\\..\\\\evil.example', '/'],
      ['/files\tx', '/'],
    ]) {
      expect(await signInWithProvider(provider, c.t.client(), alice, next)).toBe(landing!);
    }
  });

  test('a disabled account is sent to /login?error=account_disabled; enabled again, it signs in', async () => {
    const dana = person();
    expect((await aliceClient.post('/api/user/signup-toggle', { enabled: true })).status).toBe(200);
    expect(await signInWithProvider(provider, c.t.client(), dana)).toBe('/');
    expect((await aliceClient.post('/api/user/signup-toggle', { enabled: false })).status).toBe(200);
    const row = c.t.server.ctx.services.accounts.findByEmail(provider.accounts.get(dana)!.email!)!;
    expect((await aliceClient.send('PATCH', `/api/user/${row.id}`, { disabled: true })).status).toBe(200);
    await expectRefused(c, dana, 'account_disabled');
    expect((await aliceClient.send('PATCH', `/api/user/${row.id}`, { disabled: false })).status).toBe(200);
    expect(await signInWithProvider(provider, c.t.client(), dana)).toBe('/');
  });

  test('a disabled account with a password is not linked by email: account_disabled and no link; enabled again, it is linked', async () => {
    const erin = await seed.owner(c.t);
    const sub = person({ email: erin.email, email_verified: true });
    expect((await aliceClient.send('PATCH', `/api/user/${erin.id}`, { disabled: true })).status).toBe(200);
    await expectRefused(c, sub, 'account_disabled');
    expect(c.t.server.ctx.repos.idp.userOf(provider.issuer, sub)).toBeNull();
    expect(audit(c.t, 'auth.idp_link', erin.id)).toEqual([]);
    expect((await aliceClient.send('PATCH', `/api/user/${erin.id}`, { disabled: false })).status).toBe(200);
    expect(await signInWithProvider(provider, c.t.client(), sub)).toBe('/');
    expect(c.t.server.ctx.repos.idp.userOf(provider.issuer, sub)).toBe(erin.id);
  });

  test('sign-up closed: an unknown provider account is sent to /login?error=signup_disabled and no account is created', async () => {
    const bob = person();
    await expectRefused(c, bob, 'signup_disabled');
    expect(c.t.server.ctx.services.accounts.findByEmail(provider.accounts.get(bob)!.email!)).toBeNull();
    expect(warnings(c, 'signup_disabled').at(-1)!.fields.reason).toMatch(/sign-up is closed/);
    // The admin opens sign-up: the same person gets in, as an ordinary account.
    expect((await aliceClient.post('/api/user/signup-toggle', { enabled: true })).status).toBe(200);
    const client = c.t.client();
    expect(await signInWithProvider(provider, client, bob)).toBe('/');
    const row = c.t.server.ctx.services.accounts.findByEmail(provider.accounts.get(bob)!.email!)!;
    expect([row.isAdmin, row.passwordHash]).toEqual([false, null]);
    expect((await aliceClient.post('/api/user/signup-toggle', { enabled: false })).status).toBe(200);
  });

  test('an account with a password is linked by email when the provider verified it; then both ways sign in', async () => {
    const carol = await seed.owner(c.t);
    const sub = person({ email: carol.email.toUpperCase(), email_verified: true });
    const client = c.t.client();
    expect(await signInWithProvider(provider, client, sub)).toBe('/');
    expect(await json(await client.get('/api/profile'))).toMatchObject({ id: carol.id, signInMethods: ['password', 'idp'] });
    expect(audit(c.t, 'auth.idp_link', carol.id)).toMatchObject([{ details: { subject: sub } }]);
    expect((await seed.login(c.t, carol.email)).cookies.has('token')).toBe(true);
  });

  test('an address typed at public sign-up is not linked, even verified by the provider (anyone can sign up as anyone): email_unconfirmed, until the admin confirms it', async () => {
    // Someone signs up first with the address of a person who will later sign in through the provider.
    const email = seed.uniqueEmail('victim');
    expect((await aliceClient.post('/api/user/signup-toggle', { enabled: true })).status).toBe(200);
    const squatter = await c.t.client().post('/api/signup', { email, password: 'the squatter knows this' });
    expect((await aliceClient.post('/api/user/signup-toggle', { enabled: false })).status).toBe(200);
    const squatted = (await json(squatter)).user.id;
    const victim = person({ email, email_verified: true });
    await expectRefused(c, victim, 'email_unconfirmed');
    expect(c.t.server.ctx.repos.idp.userOf(provider.issuer, victim)).toBeNull();
    expect(warnings(c, 'email_unconfirmed').at(-1)!.fields.reason).toMatch(/chosen at sign-up or by its owner/);
    expect(audit(c.t, 'auth.idp_link', squatted)).toEqual([]);

    // The admin, who knows the address is that person's, confirms it: the next sign-in links it.
    const r = await runCli(['users', 'confirm-email', email, '--data-dir', c.t.dataDir]);
    expect([r.code, r.stdout.trim()]).toEqual([0, `the address ${email} is confirmed`]);
    expect(audit(c.t, 'user.email_confirm', undefined).at(-1)).toMatchObject({ targetId: squatted, actor: 'cli' });
    expect(await signInWithProvider(provider, c.t.client(), victim)).toBe('/');
    expect(c.t.server.ctx.repos.idp.userOf(provider.issuer, victim)).toBe(squatted);
  });

  test("a sub-user's address (its owner typed it) is never linked by email; an account the admin made with `coffer users create` is", async () => {
    const owner = await seed.owner(c.t);
    const sub = await seed.subUser(c.t, owner, ['files.download']);
    await expectRefused(c, person({ email: sub.email, email_verified: true }), 'email_unconfirmed');

    const email = seed.uniqueEmail('made');
    const made = await runCli(['users', 'create', email, '--data-dir', c.t.dataDir], { stdin: 'a fine password\n' });
    expect(made.code).toBe(0);
    const subject = person({ email, email_verified: true });
    expect(await signInWithProvider(provider, c.t.client(), subject)).toBe('/');
    expect(c.t.server.ctx.repos.idp.userOf(provider.issuer, subject)).toBe(c.t.server.ctx.services.accounts.findByEmail(email)!.id);
  });

  test("an unverified email is never linked: a second provider account claiming the admin's address does not get in", async () => {
    const admin = await json(await aliceClient.get('/api/profile'));
    const mallory = person({ email: admin.email, email_verified: false });
    await expectRefused(c, mallory, 'email_not_verified');
    expect(c.t.server.ctx.repos.idp.userOf(provider.issuer, mallory)).toBeNull();
    // Verified or not, the admin already has an identity at this provider: a second one is not added by email.
    provider.accounts.set(mallory, { ...provider.accounts.get(mallory)!, email_verified: true });
    await expectRefused(c, mallory, 'account_linked');
    expect(c.t.server.ctx.repos.idp.userOf(provider.issuer, mallory)).toBeNull();
    expect(audit(c.t, 'auth.sign_in').filter((e) => e.status === 'failure' && e.details?.method === 'idp').length).toBeGreaterThanOrEqual(
      2,
    );
  });

  test('an account without a password: change-password is 400; the CLI sets one, then password sign-in works', async () => {
    const change = await aliceClient.post('/api/change-password', { oldPassword: 'anything', newPassword: 'a new password' });
    expect(change.status).toBe(400);
    expect((await json(change)).message).toBe('Password change is not available for this account');

    const admin = await json(await aliceClient.get('/api/profile'));
    const r = await runCli(['users', 'reset-password', admin.email, '--data-dir', c.t.dataDir], { stdin: 'a new password\n' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const byPassword = c.t.client();
    expect((await byPassword.post('/api/login', { email: admin.email, password: 'a new password' })).status).toBe(200);
    expect((await json(await byPassword.get('/api/profile'))).signInMethods).toEqual(['password', 'idp']);
    // The reset signed the account out everywhere; the provider still signs it in.
    aliceClient = c.t.client();
    await signInWithProvider(provider, aliceClient, alice);
    expect((await aliceClient.get('/api/profile')).status).toBe(200);
  });

  test('a provider that does not share an email address: /login?error=email_missing', async () => {
    await expectRefused(c, person({ email: undefined }), 'email_missing');
  });

  test('the person cancels at the provider: /login?error=access_denied', async () => {
    const client = c.t.client();
    const back = await authorize(provider, (await startSignIn(client)).href, alice, { cancel: true });
    expect(back.searchParams.get('error')).toBe('access_denied');
    const res = await finishSignIn(client, back);
    expect(res.headers.get('location')).toBe('/login?error=access_denied');
  });

  describe('refused: every check of the callback', () => {
    test('a tampered state: /login?error=state_mismatch, no session', async () => {
      const client = c.t.client();
      const back = await authorize(provider, (await startSignIn(client)).href, alice);
      back.searchParams.set('state', 'forged-state-value');
      const res = await finishSignIn(client, back);
      expect(res.headers.get('location')).toBe('/login?error=state_mismatch');
      expect(client.cookies.has('token')).toBe(false);
    });

    test('a state cookie that is not ours (forged or signed with another key): state_mismatch', async () => {
      const client = c.t.client();
      const back = await authorize(provider, (await startSignIn(client)).href, alice);
      const real = client.cookies.get('coffer_idp_state')!;
      client.cookies.set('coffer_idp_state', `${real.slice(0, -4)}AAAA`);
      expect((await finishSignIn(client, back)).headers.get('location')).toBe('/login?error=state_mismatch');
    });

    test('a callback in a browser that did not start the sign-in (no state cookie): /login?error=expired', async () => {
      const back = await authorize(provider, (await startSignIn(c.t.client())).href, alice);
      const other = c.t.client();
      expect((await finishSignIn(other, back)).headers.get('location')).toBe('/login?error=expired');
      expect(other.cookies.has('token')).toBe(false);
    });

    test('the state cookie expires after 10 minutes', async () => {
      const client = c.t.client();
      const back = await authorize(provider, (await startSignIn(client)).href, alice);
      clock.advance(10 * 60_000 + 1000);
      expect((await finishSignIn(client, back)).headers.get('location')).toBe('/login?error=expired');
    });

    test('the callback replayed with the state cookie kept aside: the code was used, so the provider refuses it', async () => {
      const client = c.t.client();
      const back = await authorize(provider, (await startSignIn(client)).href, alice);
      const state = client.cookies.get('coffer_idp_state')!;
      expect((await finishSignIn(client, back)).headers.get('location')).toBe('/');
      client.cookies.set('coffer_idp_state', state);
      client.cookies.delete('token');
      expect((await finishSignIn(client, back)).headers.get('location')).toBe('/login?error=expired');
      expect(client.cookies.has('token')).toBe(false);
    });

    test('a nonce that is not the one Coffer sent (the authorization request was altered): invalid_token', async () => {
      const client = c.t.client();
      const start = await startSignIn(client);
      start.searchParams.set('nonce', 'an-attacker-chosen-nonce');
      const res = await finishSignIn(client, await authorize(provider, start.href, alice));
      expect(res.headers.get('location')).toBe('/login?error=invalid_token');
      expect(warnings(c, 'invalid_token').at(-1)!.fields.reason).toMatch(/nonce/);
    });

    test('an ID token issued to another client (audience) is refused, though the provider signed it', async () => {
      const other = `other-${randomBytes(4).toString('hex')}`;
      const redirect = 'http://127.0.0.1:9/other-client/callback';
      await provider.registerClient(other, 'other-secret', [redirect]);
      const client = c.t.client();
      const start = await startSignIn(client);
      // The same person signs in to the other client, with Coffer's nonce; that client's ID token is swapped into Coffer's exchange.
      const verifier = randomBytes(32).toString('base64url');
      const otherAuth = new URL(`${provider.issuer}/auth`);
      for (const [k, v] of Object.entries({
        client_id: other,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: redirect,
        state: 'other-state',
        nonce: start.searchParams.get('nonce')!,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }))
        otherAuth.searchParams.set(k, v);
      const otherBack = await authorize(provider, otherAuth.href, alice);
      const tokenRes = await fetch(`${provider.issuer}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${btoa(`${other}:other-secret`)}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: otherBack.searchParams.get('code')!,
          redirect_uri: redirect,
          code_verifier: verifier,
        }),
      });
      const { id_token } = await json(tokenRes);
      expect(JSON.parse(Buffer.from(id_token.split('.')[1], 'base64url').toString()).aud).toBe(other);
      provider.rewriteTokenResponse = (body) => ({ ...body, id_token });
      try {
        const res = await finishSignIn(client, await authorize(provider, start.href, alice));
        expect(res.headers.get('location')).toBe('/login?error=invalid_token');
      } finally {
        provider.rewriteTokenResponse = null;
      }
      expect(warnings(c, 'invalid_token').at(-1)!.fields.reason).toMatch(/aud/);
      expect(client.cookies.has('token')).toBe(false);
    });

    test('an expired authorization code: the provider refuses the exchange, /login?error=expired', async () => {
      provider.codeTtlSeconds = 1;
      try {
        const client = c.t.client();
        const back = await authorize(provider, (await startSignIn(client)).href, alice);
        // The provider's own clock must pass the code's 1 s lifetime: it takes no test clock.
        await Bun.sleep(2100);
        expect((await finishSignIn(client, back)).headers.get('location')).toBe('/login?error=expired');
        expect(warnings(c, 'expired').at(-1)!.fields.reason).toMatch(/invalid_grant/);
      } finally {
        provider.codeTtlSeconds = 60;
      }
    });
  });

  describe('an account with MFA: a pending second step, then a normal session', () => {
    let eve: string;
    let secret: string;
    let backupCodes: string[];
    const totp = (offsetS = 0) => generate({ secret, epoch: Math.floor(clock.now() / 1000) + offsetS });

    beforeAll(async () => {
      eve = person();
      await aliceClient.post('/api/user/signup-toggle', { enabled: true });
      const client = c.t.client();
      await signInWithProvider(provider, client, eve);
      await aliceClient.post('/api/user/signup-toggle', { enabled: false });
      secret = (await json(await client.post('/api/mfa/setup'))).secret;
      backupCodes = (await json(await client.post('/api/mfa/verify', { code: await totp() }))).backupCodes;
    });
    // A new 30-second step for each test, and a fresh minute of the MFA rate limit.
    beforeEach(() => clock.advance(61_000));

    /** Through the provider up to the second step: the pending cookie, no session. */
    async function pending(next?: string): Promise<TestClient> {
      const client = c.t.client();
      const res = await finishSignIn(client, await authorize(provider, (await startSignIn(client, next)).href, eve));
      expect(res.headers.get('location')).toBe(next ? `/login?mfa=1&next=${encodeURIComponent(next)}` : '/login?mfa=1');
      expect(cookieLine(res, 'coffer_idp_mfa')).toMatch(/; Path=\/api\/idp; HttpOnly; SameSite=Lax; Max-Age=300$/);
      expect(client.cookies.has('token')).toBe(false);
      expect((await client.get('/api/profile')).status).toBe(401);
      return client;
    }

    test('wrong code refused (and may be retried), right code signs in with the token cookie', async () => {
      const client = await pending('/starred');
      const wrong = await client.post('/api/idp/mfa-verify', { code: '000000' });
      expect(wrong.status).toBe(401);
      expect((await json(wrong)).message).toBe('Invalid MFA code');
      const right = await client.post('/api/idp/mfa-verify', { code: await totp() });
      expect(right.status).toBe(200);
      expect((await json(right)).user).toMatchObject({ email: provider.accounts.get(eve)!.email, mfaEnabled: true });
      expect(cookieLine(right, 'coffer_idp_mfa')).toMatch(/Max-Age=0/);
      expect((await client.get('/api/profile')).status).toBe(200);
      const profile = await json(await client.get('/api/profile'));
      expect(audit(c.t, 'auth.sign_in', profile.id).at(-1)).toMatchObject({ status: 'success', details: { method: 'idp', mfa: true } });
    });

    test('the code just used is refused (replay), and a used pending step cannot be used again', async () => {
      const used = await totp();
      expect((await (await pending()).post('/api/idp/mfa-verify', { code: used })).status).toBe(200);
      const client = await pending();
      const replay = await client.post('/api/idp/mfa-verify', { code: used });
      expect(replay.status).toBe(401);
      expect((await json(replay)).message).toBe('Invalid MFA code');
      const pendingId = client.cookies.get('coffer_idp_mfa')!;
      const backup = await client.post('/api/idp/mfa-verify', { code: backupCodes[0] });
      expect(backup.status).toBe(200);
      // The first success consumed the pending step: the same cookie, even with another good code, is refused.
      client.cookies.set('coffer_idp_mfa', pendingId);
      const again = await client.post('/api/idp/mfa-verify', { code: backupCodes[1] });
      expect(again.status).toBe(401);
      expect((await json(again)).message).toBe('This sign-in has expired or was already completed. Sign in again.');
      // A spent backup code stays spent.
      const spent = await (await pending()).post('/api/idp/mfa-verify', { code: backupCodes[0] });
      expect(spent.status).toBe(401);
    });

    test('the pending step expires after 5 minutes', async () => {
      const client = await pending();
      clock.advance(5 * 60_000 + 1000);
      const res = await client.post('/api/idp/mfa-verify', { code: await totp() });
      expect(res.status).toBe(401);
      expect((await json(res)).message).toBe('This sign-in has expired or was already completed. Sign in again.');
    });

    test("rate limit: password sign-in's, 25 per 15 minutes per address and account, shared with that account's password sign-ins", async () => {
      const email = provider.accounts.get(eve)!.email!;
      // 15 and 10: a login's wrong codes are also limited to 10 per 15 minutes from all addresses (signin-limits.test.ts).
      for (let i = 0; i < 15; i++) expect((await c.t.client().post('/api/login', { email, password: 'not it at all' })).status).toBe(401);
      const client = await pending();
      for (let i = 0; i < 10; i++) expect((await client.post('/api/idp/mfa-verify', { code: '111111' })).status).toBe(401);
      const limited = await client.post('/api/idp/mfa-verify', { code: await totp() });
      expect(limited.status).toBe(429);
      expect(await json(limited)).toEqual({ error: 'Too many requests, please try again later' });
      expect((await c.t.client().post('/api/login', { email, password: 'not it at all' })).status).toBe(429);
      // Another account's attempts are counted apart.
      const another = c.t.client();
      another.cookies.set('coffer_idp_mfa', 'unknown');
      expect((await another.post('/api/idp/mfa-verify', { code: '111111' })).status).toBe(401);
      // Once the window has passed, a new sign-in's code step is accepted.
      clock.advance(15 * 60_000);
      expect((await (await pending()).post('/api/idp/mfa-verify', { code: await totp() })).status).toBe(200);
    });
  });
});

describe('sign-up disabled, with OIDC_AUTO_CREATE (and the client secret in OIDC_CLIENT_SECRET_FILE)', () => {
  test('a new account is created on first sign-in even though sign-up is closed; it is not the admin', async () => {
    const c = await coffer({ OIDC_AUTO_CREATE: 'true' }, { secretInFile: true });
    await seed.admin(c.t);
    expect((await json(await c.t.client().get('/api/signup-status'))).signupEnabled).toBe(false);
    const dave = person({ name: 'Dave' });
    const client = c.t.client();
    expect(await signInWithProvider(provider, client, dave)).toBe('/');
    expect(await json(await client.get('/api/profile'))).toMatchObject({ name: 'Dave', signInMethods: ['idp'] });
    expect((await client.get('/api/user/all')).status).toBe(403);
  });
});

describe("the provider's display name", () => {
  test('cut at 100 between whole characters (never half an emoji, stored as U+FFFD), without control or bidirectional characters', async () => {
    const c = await coffer({ OIDC_AUTO_CREATE: 'true' });
    await seed.admin(c.t);
    const cases = [
      // The emoji takes units 99 and 100 of 101: slicing at 100 kept its first half.
      { name: `${'a'.repeat(99)}\u{1F600}b`, stored: 'a'.repeat(99) },
      { name: 'Eve\u202Egnp.exe\u0007 Admin', stored: 'Evegnp.exe Admin' },
    ];
    for (const { name, stored } of cases) {
      const client = c.t.client();
      expect(await signInWithProvider(provider, client, person({ name }))).toBe('/');
      expect((await json(await client.get('/api/profile'))).name).toBe(stored);
    }
  });

  test('one with nothing visible (controls, bidi marks, zero-width or blank characters) counts as none: the next claim, else no name as when the provider gives none', async () => {
    const c = await coffer({ OIDC_AUTO_CREATE: 'true' });
    await seed.admin(c.t);
    const none = c.t.client();
    expect(await signInWithProvider(provider, none, person({ name: undefined }))).toBe('/');
    const noName = (await json(await none.get('/api/profile'))).name;
    const cases = [
      { claims: { name: '\u202E\u200F\u0007 \u3000' }, stored: noName },
      { claims: { name: '\u200B\u2060\uFEFF\u00AD\u3164' }, stored: noName },
      { claims: { name: '\u202E\u200F', preferred_username: 'ida.p' }, stored: 'ida.p' },
      { claims: { name: '\u200B', preferred_username: '\u2066\u2069' }, stored: noName },
    ];
    for (const { claims, stored } of cases) {
      const client = c.t.client();
      expect(await signInWithProvider(provider, client, person(claims))).toBe('/');
      expect((await json(await client.get('/api/profile'))).name).toBe(stored);
    }
  });
});

describe('OIDC_DISABLE_PASSWORD_LOGIN', () => {
  test('password sign-in and sign-up are 403 with a message naming the provider; the provider and the CLI still work', async () => {
    const c = await coffer({ OIDC_DISABLE_PASSWORD_LOGIN: 'true' });
    expect(await json(await c.t.client().get('/api/signup-status'))).toMatchObject({ passwordLogin: false, idp: { enabled: true } });
    const signup = await c.t.client().post('/api/signup', { email: seed.uniqueEmail(), password: 'long enough' });
    expect(signup.status).toBe(403);
    expect((await json(signup)).message).toBe(`Password sign-in is turned off on this Coffer: sign in with ${PROVIDER_NAME} instead`);

    const created = await runCli(['users', 'create', 'cli-made@example.test', '--data-dir', c.t.dataDir], {
      stdin: 'a password\n',
      env: { OIDC_ISSUER_URL: provider.issuer, OIDC_CLIENT_ID: 'x', OIDC_CLIENT_SECRET: 'y', OIDC_DISABLE_PASSWORD_LOGIN: 'true' },
    });
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const login = await c.t.client().post('/api/login', { email: 'cli-made@example.test', password: 'a password' });
    expect(login.status).toBe(403);
    expect((await json(login)).message).toBe(`Password sign-in is turned off on this Coffer: sign in with ${PROVIDER_NAME} instead`);

    // The account the CLI made signs in through the provider (linked by its verified email).
    const sub = person({ email: 'cli-made@example.test' });
    const client = c.t.client();
    expect(await signInWithProvider(provider, client, sub)).toBe('/');
    expect((await json(await client.get('/api/profile'))).email).toBe('cli-made@example.test');
  });
});

describe('rate limit of the callback', () => {
  test('25 callbacks per 15 minutes from one address, like sign-in; the 26th is 429', async () => {
    const c = await coffer();
    const client = c.t.client();
    for (let i = 0; i < 25; i++) expect((await client.get('/api/idp/callback?code=x&state=y')).status).toBe(302);
    const limited = await client.get('/api/idp/callback?code=x&state=y');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).not.toBeNull();
  });
});

describe('discovery', () => {
  test('a provider that is down at start-up is a warning, not a crash; sign-in retries and works once it is up', async () => {
    provider.down = true;
    let c: SsoServer;
    try {
      c = await coffer();
      const warning = await eventually(() => c.logs.find((l) => l.msg.startsWith('single sign-on provider discovery failed')) ?? false, {
        intervalMs: 10,
      });
      expect(warning.level).toBe('warn');
      expect(await json(await c.t.client().get('/api/idp/enabled'))).toEqual({ enabled: true });
      const res = await c.t.client().get('/api/idp/login');
      expect(res.headers.get('location')).toBe('/login?error=provider_unavailable');
    } finally {
      provider.down = false;
    }
    expect(await signInWithProvider(provider, c.t.client(), person())).toBe('/');
  });

  test('without OIDC_ISSUER_URL: disabled, and the flow says so', async () => {
    const t = await startTestServer();
    servers.push(t);
    const client = t.client();
    expect(await json(await client.get('/api/idp/enabled'))).toEqual({ enabled: false });
    expect((await json(await client.get('/api/signup-status'))).idp).toEqual({ enabled: false, name: null });
    expect((await client.get('/api/idp/login')).headers.get('location')).toBe('/login?error=not_configured');
    const verify = await client.post('/api/idp/mfa-verify', { code: '123456' });
    expect(verify.status).toBe(404);
    expect((await json(verify)).message).toBe('Single sign-on is not configured on this Coffer');
  });
});
