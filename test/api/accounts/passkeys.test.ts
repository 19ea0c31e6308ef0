import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generate } from 'otplib';
import { ManualClock } from '../../../src/clock.ts';
import { Messages } from '../../../src/errors.ts';
import { json, TestClient } from '../../helpers/client.ts';
import { runCli } from '../../helpers/cli.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { createPasskey, type SoftPasskey, signWithPasskey } from '../../helpers/webauthn.ts';

let t: TestServer;
const clock = new ManualClock(Date.now());
// Browsers refuse an address as the relying party: the tests speak to the server as localhost.
let origin: string;
const client = () => new TestClient(origin);
// Adding a passkey asks for the password again: each signed-in client remembers its login's.
const passwordOf = new WeakMap<TestClient, string>();
const signInAs = async (s: seed.SeededLogin) => {
  const c = client();
  const res = await c.post('/api/login', { email: s.email, password: s.password });
  expect(res.status).toBe(200);
  passwordOf.set(c, s.password);
  return c;
};
const registerOptions = (c: TestClient) => c.post('/api/passkeys/register/options', { password: passwordOf.get(c) });

beforeAll(async () => {
  t = await startTestServer({ clock });
  origin = `http://localhost:${new URL(t.url).port}`;
  await seed.admin(t);
});
afterAll(() => t.stop());

async function addPasskey(c: TestClient, name?: string): Promise<{ passkey: SoftPasskey; id: string }> {
  const options = await json(await registerOptions(c));
  const { passkey, response } = await createPasskey(options, origin);
  const res = await c.post('/api/passkeys', { ...(name === undefined ? {} : { name }), response });
  expect(res.status).toBe(201);
  return { passkey, id: (await json(res)).passkey.id };
}

async function passkeySignIn(passkey: SoftPasskey, opts: Parameters<typeof signWithPasskey>[3] = {}) {
  const c = client();
  const options = await json(await c.post('/api/passkeys/sign-in/options'));
  const answer = await signWithPasskey(passkey, options, origin, opts);
  return { c, answer, res: await c.post('/api/passkeys/sign-in', answer) };
}

async function enableMfa(c: TestClient): Promise<{ secret: string; backupCodes: string[] }> {
  const setup = await json(await c.post('/api/mfa/setup'));
  const code = await generate({ secret: setup.secret, epoch: Math.floor(clock.now() / 1000) });
  const verified = await c.post('/api/mfa/verify', { code });
  expect(verified.status).toBe(200);
  clock.advance(30_000);
  return { secret: setup.secret, backupCodes: (await json(verified)).backupCodes };
}

const auditOf = (action: string, loginId: string) => {
  t.server.ctx.services.audit.flush();
  return t.server.ctx.services.audit
    .list({ action, limit: 1000 })
    .filter((e) => e.loginId === loginId)
    .reverse();
};

describe('passkeys in settings', () => {
  test('added with a name (or a default one), listed with last use, removed; the profile names passkey as a way in', async () => {
    const o = await seed.owner(t);
    const c = await signInAs(o);
    expect(await json(await c.get('/api/passkeys'))).toEqual({ passkeys: [] });
    const options = await json(await registerOptions(c));
    expect(options.rp).toEqual({ name: 'Coffer', id: 'localhost' });
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required' });

    const { id } = await addPasskey(c, '  Work laptop ');
    await addPasskey(c);
    const list = (await json(await c.get('/api/passkeys'))).passkeys;
    expect(list.map((p: { name: string }) => p.name).sort()).toEqual(['Passkey 2', 'Work laptop']);
    expect(list.find((p: { id: string }) => p.id === id)).toMatchObject({ lastUsedAt: null, backedUp: false });
    expect((await json(await c.get('/api/profile'))).signInMethods).toEqual(['password', 'passkey']);

    // The second registration excludes the first credential, so one authenticator is not added twice.
    const again = await json(await registerOptions(c));
    expect(again.excludeCredentials).toHaveLength(2);

    expect(await json(await c.delete(`/api/passkeys/${id}`))).toEqual({ message: 'Passkey removed' });
    expect((await c.delete(`/api/passkeys/${id}`)).status).toBe(404);
    expect((await json(await c.get('/api/passkeys'))).passkeys).toHaveLength(1);
    expect(auditOf('passkey.add', o.id)).toHaveLength(2);
    expect(auditOf('passkey.remove', o.id)).toMatchObject([{ targetId: id, details: { name: 'Work laptop' } }]);
  });

  test("another login's passkey is 404 to remove and absent from its list; a sub-user has its own", async () => {
    const a = await seed.owner(t);
    const b = await seed.owner(t);
    const sub = await seed.subUser(t, a, ['files.download']);
    const ca = await signInAs(a);
    const { id } = await addPasskey(ca, 'Mine');
    const cb = await signInAs(b);
    const cs = await signInAs(sub);
    expect(await json(await cb.delete(`/api/passkeys/${id}`))).toEqual({ message: 'Passkey not found' });
    expect((await cs.delete(`/api/passkeys/${id}`)).status).toBe(404);
    expect((await json(await cs.get('/api/passkeys'))).passkeys).toEqual([]);
    const own = await addPasskey(cs, 'Sub phone');
    expect((await json(await cs.get('/api/passkeys'))).passkeys.map((p: { id: string }) => p.id)).toEqual([own.id]);
    expect((await json(await ca.get('/api/passkeys'))).passkeys.map((p: { id: string }) => p.id)).toEqual([id]);
    const signedIn = await passkeySignIn(own.passkey);
    expect(signedIn.res.status).toBe(200);
    expect((await json(signedIn.res)).user.id).toBe(sub.id);
  });

  test('a sub-user deleted by its owner while it adds a passkey: 404 or 401 saying why, never a 500; nothing is left behind', async () => {
    const owner = await seed.owner(t);
    const ownerClient = await signInAs(owner);
    const statuses = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const sub = await seed.subUser(t, owner, ['files.download']);
      const cs = await signInAs(sub);
      const { response } = await createPasskey(await json(await registerOptions(cs)), origin);
      // The registration's answer and the owner's delete, sent together: the delete lands during the verification.
      const [added, deleted] = await Promise.all([
        cs.post('/api/passkeys', { name: 'Racing', response }),
        ownerClient.delete(`/api/user/sub-users/${sub.id}`),
      ]);
      expect(deleted.status).toBe(200);
      statuses.add(added.status);
      if (added.status === 404) expect((await json(added)).message).toBe(Messages.loginGone);
      expect([201, 401, 404]).toContain(added.status);
      expect(t.server.ctx.repos.passkeys.list(sub.id)).toEqual([]);
    }
    expect(statuses.has(404)).toBe(true);
  });

  test("ceremonies begun together below the limit of 50 end with at most 50 passkeys: the rest get the options step's 400", async () => {
    const o = await seed.owner(t);
    const c = await signInAs(o);
    for (let i = 0; i < 48; i++)
      t.server.ctx.repos.passkeys.insert(
        {
          id: `seeded-${o.id}-${i}`,
          userId: o.id,
          credentialId: Buffer.from(`seeded ${o.id} ${i}`).toString('base64url'),
          publicKey: 'AA',
          counter: 0,
          transports: '[]',
          name: `Seeded ${i}`,
          backedUp: false,
          createdAt: clock.now(),
          lastUsedAt: null,
        },
        50,
      );
    // Four ceremonies begun at 48, when each options step still sees room, then finished together.
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await createPasskey(await json(await registerOptions(c)), origin)).response);
    const results = await Promise.all(answers.map((response) => c.post('/api/passkeys', { response })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 400, 400]);
    for (const r of results.filter((r) => r.status === 400))
      expect((await json(r)).message).toBe('A login can hold at most 50 passkeys. Remove one first.');
    expect(t.server.ctx.repos.passkeys.count(o.id)).toBe(50);
  });

  test('bad input: a forged or foreign answer, a reused challenge, a long name or one with control characters, an address as host are 4xx that say why', async () => {
    const o = await seed.owner(t);
    const c = await signInAs(o);
    const options = await json(await registerOptions(c));
    const { response } = await createPasskey(options, 'http://localhost:1');
    const wrongOrigin = await c.post('/api/passkeys', { response });
    expect(wrongOrigin.status).toBe(400);
    expect((await json(wrongOrigin)).message).toBe('The passkey could not be verified. Try again, or sign in another way.');
    // That answer spent its challenge.
    const fresh = await createPasskey(options, origin);
    expect((await json(await c.post('/api/passkeys', { response: fresh.response }))).message).toBe(
      'This passkey request has expired or was already used. Start again.',
    );
    const long = await createPasskey(await json(await registerOptions(c)), origin);
    const named = await c.post('/api/passkeys', { name: 'x'.repeat(65), response: long.response });
    expect(named.status).toBe(422);
    expect((await json(named)).details).toEqual([{ field: 'name', message: 'Passkey name must be at most 64 characters' }]);
    expect((await c.post('/api/passkeys', { response: { id: 'not base64!' } })).status).toBe(422);
    // The answer's id must be the attested one, of at most WebAuthn's 1,023 bytes: a 40 KB one under a short id was kept,
    // could never sign in, and rode in every later options answer.
    for (const bytes of [1024, 40_000, 32]) {
      const odd = await createPasskey(await json(await registerOptions(c)), origin, { credentialBytes: bytes });
      const short = Buffer.from('another credential').toString('base64url');
      const res = await c.post('/api/passkeys', { response: { ...odd.response, id: short, rawId: short } });
      expect({ bytes, status: res.status }).toEqual({ bytes, status: 400 });
      expect((await json(res)).message).toBe('The passkey could not be verified. Try again, or sign in another way.');
    }
    // A line break, a NUL or a right-to-left override would disguise the name in lists and the audit log.
    for (const name of ['Work\nlaptop', 'Key\u0000', 'Phone\u202egnp.exe']) {
      const res = await c.post('/api/passkeys', { name, response: long.response });
      expect(res.status).toBe(422);
      expect((await json(res)).details).toEqual([
        { field: 'name', message: 'Passkey name cannot hold control characters (line breaks, tabs...)' },
      ]);
    }
    expect((await json(await c.get('/api/passkeys'))).passkeys).toEqual([]);

    // Another login's registration challenge is not this one's.
    const other = await signInAs(await seed.owner(t));
    const foreign = await createPasskey(await json(await registerOptions(other)), origin);
    expect((await c.post('/api/passkeys', { response: foreign.response })).status).toBe(400);

    const byAddress = await (await seed.login(t, o.email, o.password)).post('/api/passkeys/register/options');
    expect(byAddress.status).toBe(400);
    expect((await json(byAddress)).message).toStartWith(`Passkeys need HTTPS, or http://localhost: browsers refuse them at ${t.url}.`);
    expect((await t.client().post('/api/passkeys/sign-in/options')).status).toBe(400);
    expect((await client().post('/api/passkeys/register/options')).status).toBe(401);
  });
});

describe('adding a passkey asks who you are again', () => {
  test('a session alone is refused: the password, or a code of the second factor, is asked again and checked', async () => {
    const o = await seed.owner(t);
    const c = await signInAs(o);
    const bare = await c.post('/api/passkeys/register/options');
    expect(bare.status).toBe(400);
    expect((await json(bare)).message).toStartWith('Enter your password to add a passkey');
    const wrong = await c.post('/api/passkeys/register/options', { password: 'not the password' });
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).message).toBe(Messages.wrongCurrentPassword);
    expect(auditOf('passkey.add', o.id)).toMatchObject([{ status: 'failure', details: { reason: 'wrong_password' } }]);
    expect((await json(await c.get('/api/passkeys'))).passkeys).toEqual([]);

    // With two-factor on, a code will do instead of the password; a wrong one is refused.
    const { secret } = await enableMfa(c);
    const badCode = await c.post('/api/passkeys/register/options', { code: '000000' });
    expect(badCode.status).toBe(400);
    expect((await json(badCode)).message).toBe(Messages.invalidMfaCode);
    const code = await generate({ secret, epoch: Math.floor(clock.now() / 1000) });
    const options = await json(await c.post('/api/passkeys/register/options', { code }));
    const { response } = await createPasskey(options, origin);
    expect((await c.post('/api/passkeys', { response })).status).toBe(201);
    expect((await registerOptions(c)).status).toBe(200);
  });

  test('a login without a password confirms with a code, and without a second factor is told to turn one on', async () => {
    const row = await t.server.ctx.services.accounts.createLogin({ email: seed.uniqueEmail('sso'), password: null, name: 'SSO' });
    const { token } = await t.server.ctx.services.sessions.start(row.id, { ip: '127.0.0.1', userAgent: 'test', requestId: 'test' });
    const c = client();
    c.cookies.set('token', token);
    const refused = await c.post('/api/passkeys/register/options', { password: 'anything' });
    expect(refused.status).toBe(400);
    expect((await json(refused)).message).toEndWith('Turn on two-factor authentication first.');
    const { backupCodes } = await enableMfa(c);
    const asked = await c.post('/api/passkeys/register/options');
    expect((await json(asked)).message).toStartWith('Enter a code from your authenticator app, or a backup code');
    expect((await c.post('/api/passkeys/register/options', { code: backupCodes[0] })).status).toBe(200);
  });

  test('codes of a second factor turned on, or backup codes made, after the session signed in do not confirm it (a stolen session); those of a later sign-in do', async () => {
    const o = await seed.owner(t);
    const stolen = await signInAs(o);
    clock.advance(11 * 60_000);
    const { secret, backupCodes } = await enableMfa(stolen);
    const totp = async () => generate({ secret, epoch: Math.floor(clock.now() / 1000) });
    const asks = [
      (code: string) => stolen.post('/api/passkeys/register/options', { code }),
      (code: string) => stolen.post('/api/user/app-passwords', { name: 'Planted', code }),
    ];
    for (const ask of asks)
      for (const code of [await totp(), backupCodes[0]!]) {
        const refused = await ask(code);
        expect(refused.status).toBe(400);
        expect((await json(refused)).message).toBe(Messages.mfaNewerThanSession);
      }
    const refusal = { status: 'failure', details: { reason: 'mfa_newer_than_session' } };
    expect(auditOf('passkey.add', o.id)).toMatchObject([refusal, refusal]);

    // A session signed in after the factor was turned on confirms with its code, until it makes new backup codes itself.
    const later = client();
    clock.advance(30_000);
    expect((await later.post('/api/login', { email: o.email, password: o.password, mfaCode: await totp() })).status).toBe(200);
    clock.advance(30_000);
    const fresh = (await json(await later.post('/api/mfa/backup-codes/regenerate'))).backupCodes as string[];
    const newer = await later.post('/api/passkeys/register/options', { code: fresh[0] });
    expect((await json(newer)).message).toBe(Messages.mfaNewerThanSession);
    expect((await later.post('/api/passkeys/register/options', { code: await totp() })).status).toBe(200);
    expect((await json(await stolen.get('/api/user/app-passwords'))).appPasswords ?? []).toEqual([]);
  });

  test('a password change keeps the passkeys unless asked to remove them, and then they sign in no more', async () => {
    const o = await seed.owner(t);
    const kept = await addPasskey(await signInAs(o), 'Kept');
    const changed = await (await signInAs(o)).post('/api/change-password', { oldPassword: o.password, newPassword: 'second password' });
    expect(changed.status).toBe(200);
    expect((await passkeySignIn(kept.passkey)).res.status).toBe(200);

    const c = client();
    expect((await c.post('/api/login', { email: o.email, password: 'second password' })).status).toBe(200);
    passwordOf.set(c, 'second password');
    const planted = await addPasskey(c, 'Planted');
    const cleared = await c.post('/api/change-password', {
      oldPassword: 'second password',
      newPassword: 'third password',
      removePasskeys: true,
    });
    expect(cleared.status).toBe(200);
    for (const { passkey } of [kept, planted]) expect((await passkeySignIn(passkey)).res.status).toBe(401);
    expect(auditOf('passkey.remove', o.id)).toMatchObject([{ targetType: 'user', details: { removed: 2 } }]);
  });
});

test('COFFER_PUBLIC_URL names the relying party, whatever host a request names (a reverse proxy); answers for another origin or host are 401', async () => {
  const proxied = await startTestServer({ env: { COFFER_PUBLIC_URL: 'https://files.example.com/' } });
  try {
    await seed.admin(proxied);
    const options = await json(await proxied.client().post('/api/passkeys/sign-in/options'));
    expect(options.rpId).toBe('files.example.com');

    // Only an answer made at that origin for that host signs in, whatever host the options were asked for by.
    const o = await seed.owner(proxied);
    const pub = 'https://files.example.com';
    const created = await createPasskey(await json(await o.client.post('/api/passkeys/register/options', { password: o.password })), pub);
    expect((await o.client.post('/api/passkeys', { response: created.response })).status).toBe(201);
    const attempt = async (origin: string, rpId: string) => {
      const c = proxied.client();
      const asked = await json(
        await c.post('/api/passkeys/sign-in/options', undefined, { host: 'evil.example', 'x-forwarded-host': 'evil.example' }),
      );
      expect(asked.rpId).toBe('files.example.com');
      return (await c.post('/api/passkeys/sign-in', await signWithPasskey(created.passkey, { ...asked, rpId }, origin))).status;
    };
    for (const [origin, rpId] of [
      ['http://files.example.com', 'files.example.com'],
      ['https://files.example.com:8443', 'files.example.com'],
      ['https://evil.files.example.com', 'files.example.com'],
      [pub, 'example.com'],
      [proxied.url, 'files.example.com'],
    ])
      expect({ origin, rpId, status: await attempt(origin!, rpId!) }).toEqual({ origin, rpId, status: 401 });
    expect(await attempt(pub, 'files.example.com')).toBe(200);
  } finally {
    await proxied.stop();
  }
});

describe('signing in with a passkey', () => {
  test('without an email: a session cookie, the last use recorded, auth.sign_in with method passkey and passkey.use', async () => {
    const o = await seed.owner(t);
    const { passkey, id } = await addPasskey(await signInAs(o), 'Phone');
    const { c, res } = await passkeySignIn(passkey);
    expect(res.status).toBe(200);
    expect((await json(res)).user).toMatchObject({ id: o.id, email: o.email });
    expect(c.cookies.has('token')).toBe(true);
    expect((await json(await c.get('/api/profile'))).id).toBe(o.id);
    const listed = (await json(await c.get('/api/passkeys'))).passkeys[0];
    expect(listed.lastUsedAt).toBe(new Date(clock.now()).toISOString());
    expect(auditOf('passkey.use', o.id)).toMatchObject([{ status: 'success', targetId: id, details: { secondFactor: false } }]);
    expect(auditOf('auth.sign_in', o.id).at(-1)).toMatchObject({ details: { method: 'passkey' } });
  });

  test('two-factor on: a passkey alone needs no code', async () => {
    const o = await seed.owner(t);
    const c = await signInAs(o);
    const { passkey } = await addPasskey(c);
    await enableMfa(c);
    const { res } = await passkeySignIn(passkey);
    expect(res.status).toBe(200);
    expect((await json(res)).user).toMatchObject({ id: o.id, mfaEnabled: true });
  });

  test('a replayed answer is refused, and so is a fresh one whose signature counter did not grow (a cloned key)', async () => {
    const o = await seed.owner(t);
    const { passkey, id } = await addPasskey(await signInAs(o));
    const first = await passkeySignIn(passkey);
    expect(first.res.status).toBe(200);
    const replay = await client().post('/api/passkeys/sign-in', first.answer);
    expect(replay.status).toBe(400);
    expect((await json(replay)).message).toBe('This passkey request has expired or was already used. Start again.');

    const cloned = await passkeySignIn(passkey, { counter: passkey.counter });
    expect(cloned.res.status).toBe(401);
    expect((await json(cloned.res)).message).toStartWith("This passkey's signature counter did not move forward");
    expect(auditOf('passkey.use', o.id).map((e) => [e.status, e.targetId, e.details?.reason])).toEqual([
      ['success', id, undefined],
      ['failure', id, 'expired_challenge'],
      ['failure', id, 'counter_not_increased'],
    ]);
    expect((await passkeySignIn(passkey)).res.status).toBe(200);
  });

  test('an unknown credential, a forged signature, an answer for another host, or no user verification are refused', async () => {
    const o = await seed.owner(t);
    const { passkey } = await addPasskey(await signInAs(o));
    const stranger = (await createPasskey({ challenge: 'x', rp: { id: 'localhost' }, user: { id: 'x' } }, origin)).passkey;
    const unknown = await passkeySignIn(stranger);
    expect(unknown.res.status).toBe(401);
    expect((await json(unknown.res)).message).toStartWith('This passkey is not registered on this Coffer');

    // Signed by another key under this passkey's credential id.
    const forged = await passkeySignIn({ ...passkey, keys: stranger.keys });
    expect(forged.res.status).toBe(401);
    expect((await json(forged.res)).message).toBe('The passkey could not be verified. Try again, or sign in another way.');

    const c = client();
    const options = await json(await c.post('/api/passkeys/sign-in/options'));
    const phished = await signWithPasskey(passkey, { ...options, rpId: 'coffer.example' }, 'https://coffer.example');
    expect((await c.post('/api/passkeys/sign-in', phished)).status).toBe(401);

    const noPin = await passkeySignIn(passkey, { userVerified: false });
    expect(noPin.res.status).toBe(401);
    expect((await json(noPin.res)).message).toStartWith('This passkey did not confirm it is you');
  });

  test("an answer whose user handle names another login is refused (401, audited), whichever login's handle it names", async () => {
    const a = await seed.owner(t);
    const b = await seed.owner(t);
    const { passkey, id } = await addPasskey(await signInAs(a));
    const other = await addPasskey(await signInAs(b));
    for (const userHandle of [other.passkey.userHandle, Buffer.from('nobody').toString('base64url')]) {
      const { c, res } = await passkeySignIn({ ...passkey, userHandle });
      expect(res.status).toBe(401);
      expect((await json(res)).message).toStartWith('This passkey answer names another account');
      expect(c.cookies.has('token')).toBe(false);
    }
    expect(auditOf('passkey.use', a.id).map((e) => [e.status, e.targetId, e.details?.reason])).toEqual([
      ['failure', id, 'user_handle_mismatch'],
      ['failure', id, 'user_handle_mismatch'],
    ]);
    // Its own handle, or none (an authenticator may leave it out), signs in.
    expect((await passkeySignIn(passkey)).res.status).toBe(200);
    expect((await passkeySignIn({ ...passkey, userHandle: '' })).res.status).toBe(200);
  });

  test('a challenge expires after five minutes', async () => {
    const o = await seed.owner(t);
    const { passkey } = await addPasskey(await signInAs(o));
    const c = client();
    const options = await json(await c.post('/api/passkeys/sign-in/options'));
    clock.advance(5 * 60_000 + 1);
    const late = await c.post('/api/passkeys/sign-in', await signWithPasskey(passkey, options, origin));
    expect(late.status).toBe(400);
    expect((await passkeySignIn(passkey)).res.status).toBe(200);
  });

  test("a flood of options from one address evicts only that address's own ceremonies; past 10,000 in all new ones are refused", async () => {
    const o = await seed.owner(t);
    const { passkey } = await addPasskey(await signInAs(o));
    const c = client();
    const mine = await json(await c.post('/api/passkeys/sign-in/options'));
    const rp = { id: 'localhost', origin };
    const passkeys = t.server.ctx.services.passkeys;
    const flooder = await passkeys.signInOptions(rp, '203.0.113.9');
    for (let i = 0; i < 10_000; i++) await passkeys.signInOptions(rp, '203.0.113.9');
    // The flooder's first ceremony made way for its later ones; the other address's is intact.
    const evicted = await client().post('/api/passkeys/sign-in', await signWithPasskey(passkey, flooder, origin));
    expect((await json(evicted)).message).toBe('This passkey request has expired or was already used. Start again.');
    expect((await c.post('/api/passkeys/sign-in', await signWithPasskey(passkey, mine, origin))).status).toBe(200);

    // Many addresses at once: once 10,000 are held, a new one is refused and none already held is evicted.
    const held = await json(await client().post('/api/passkeys/sign-in/options'));
    let refused: unknown = null;
    for (let i = 0; i < 10_000 && refused === null; i++) {
      await passkeys.signInOptions(rp, `198.51.${i >> 8}.${i & 255}`).catch((err: unknown) => {
        refused = err;
      });
    }
    expect(refused).toMatchObject({ status: 503, message: expect.stringContaining('Too many passkey sign-ins are under way') });
    const full = await client().post('/api/passkeys/sign-in/options');
    expect(full.status).toBe(503);
    expect((await client().post('/api/passkeys/sign-in', await signWithPasskey(passkey, held, origin))).status).toBe(200);
    // Expired ceremonies make room again.
    clock.advance(5 * 60_000 + 1);
    expect((await passkeySignIn(passkey)).res.status).toBe(200);
  });

  test('a disabled account is refused; reset-mfa removes the passkeys', async () => {
    const o = await seed.owner(t);
    const { passkey } = await addPasskey(await signInAs(o));
    t.server.ctx.services.users.setDisabled(o.id, true, 'cli');
    const refused = await passkeySignIn(passkey);
    expect(refused.res.status).toBe(403);
    expect((await json(refused.res)).message).toBe(Messages.accountDisabled);
    t.server.ctx.services.users.setDisabled(o.id, false, 'cli');

    const reset = await runCli(['users', 'reset-mfa', o.email, '--data-dir', t.dataDir, '--json']);
    expect(reset.code).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ email: o.email, passkeysRemoved: 1 });
    expect((await passkeySignIn(passkey)).res.status).toBe(401);
  });

  test('passkey sign-ins count against the sign-in limit of the login they name', async () => {
    const limited = await startTestServer({ env: { COFFER_AUTH_RATE_LIMIT: '5' } });
    try {
      const local = `http://localhost:${new URL(limited.url).port}`;
      const a = await seed.admin(limited);
      const c = new TestClient(local);
      await c.post('/api/login', { email: a.email, password: a.password });
      const options = await json(await c.post('/api/passkeys/register/options', { password: a.password }));
      const { passkey, response } = await createPasskey(options, local);
      expect((await c.post('/api/passkeys', { response })).status).toBe(201);
      // Sign-up, sign-in and the password asked again before adding spent three of the login's five attempts;
      // two passkey sign-ins spend the rest.
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const anon = new TestClient(local);
        const opts = await json(await anon.post('/api/passkeys/sign-in/options'));
        statuses.push((await anon.post('/api/passkeys/sign-in', await signWithPasskey(passkey, opts, local))).status);
      }
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await limited.stop();
    }
  });
});

describe('a passkey as the second step after a password', () => {
  test("the code step says a passkey is on offer; one of the login's passkeys replaces the code, another login's is refused", async () => {
    const o = await seed.owner(t);
    const c = await signInAs(o);
    const mine = await addPasskey(c);
    await enableMfa(c);
    const other = await seed.owner(t);
    const theirs = await addPasskey(await signInAs(other));

    const asked = await client().post('/api/login', { email: o.email, password: o.password });
    expect(asked.status).toBe(400);
    expect(await json(asked)).toEqual({ message: 'MFA code required', passkey: true });

    const second = async (passkey: SoftPasskey, password = o.password, opts: Parameters<typeof signWithPasskey>[3] = {}) => {
      const s = client();
      const options = await json(await s.post('/api/passkeys/sign-in/options'));
      const answer = await signWithPasskey(passkey, options, origin, opts);
      return { s, res: await s.post('/api/login', { email: o.email, password, passkey: answer }) };
    };
    const foreign = await second(theirs.passkey);
    expect(foreign.res.status).toBe(401);
    expect((await json(foreign.res)).message).toStartWith('This passkey belongs to another account.');
    expect((await second(mine.passkey, 'wrong password')).res.status).toBe(401);

    // A security key without a PIN may be the second step: the password was the first.
    const ok = await second(mine.passkey, o.password, { userVerified: false });
    expect(ok.res.status).toBe(200);
    expect((await json(await ok.s.get('/api/profile'))).id).toBe(o.id);
    expect(auditOf('passkey.use', o.id).at(-1)).toMatchObject({ status: 'success', details: { secondFactor: true } });
  });

  test('without passkeys the code step answers as before', async () => {
    const o = await seed.owner(t);
    await enableMfa(await signInAs(o));
    expect(await json(await client().post('/api/login', { email: o.email, password: o.password }))).toEqual({
      message: 'MFA code required',
    });
  });
});
