import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generate } from 'otplib';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';
import { ManualClock } from '../../../src/clock.ts';

let t: TestServer;
const clock = new ManualClock(Date.now());
const code = (secret: string, offsetS = 0) => generate({ secret, epoch: Math.floor(clock.now() / 1000) + offsetS });
const nextStep = () => clock.advance(30_000);

beforeAll(async () => {
  t = await startTestServer({ clock });
  await seed.admin(t);
});
afterAll(() => t.stop());

async function enableMfa(login: seed.SeededLogin) {
  const setup = await json(await login.client.post('/api/mfa/setup'));
  const verified = await json(await login.client.post('/api/mfa/verify', { code: await code(setup.secret) }));
  nextStep();
  return { secret: setup.secret as string, backupCodes: verified.backupCodes as string[] };
}

describe('MFA setup and verify', () => {
  test('setup gives a base32 secret and a PNG QR code; verify enables MFA with 10 backup codes', async () => {
    const o = await seed.owner(t);
    expect(await json(await o.client.get('/api/mfa/status'))).toEqual({ enabled: false });
    const setup = await json(await o.client.post('/api/mfa/setup'));
    expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(setup.qrCode).toMatch(/^data:image\/png;base64,/);
    expect(Buffer.from(setup.qrCode.split(',')[1], 'base64').subarray(1, 4).toString()).toBe('PNG');

    const wrong = await o.client.post('/api/mfa/verify', { code: '000000' });
    expect(wrong.status).toBe(400);
    const bad = await o.client.post('/api/mfa/verify', { code: '12ab' });
    expect(bad.status).toBe(422);

    const res = await o.client.post('/api/mfa/verify', { code: await code(setup.secret) });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.backupCodes).toHaveLength(10);
    for (const c of body.backupCodes) expect(c).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{4}-[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{4}$/);
    expect(typeof body.shouldPromptSessions).toBe('boolean');
    expect(await json(await o.client.get('/api/mfa/status'))).toEqual({ enabled: true });
    expect(await json(await o.client.get('/api/mfa/backup-codes/count'))).toEqual({ count: 10 });

    const again = await o.client.post('/api/mfa/verify', { code: await code(setup.secret) });
    expect(again.status).toBe(400);
    expect((await json(again)).message).toBe('MFA is already enabled');
  });

  test('the secret is stored encrypted with the master key', async () => {
    const o = await seed.owner(t);
    const { secret } = await enableMfa(o);
    const row = t.server.ctx.db.$client.query<{ mfa_secret: string }, [string]>('SELECT mfa_secret FROM users WHERE id = ?').get(o.id)!;
    expect(row.mfa_secret).not.toContain(secret);
    expect(row.mfa_secret).toStartWith('k1.');
  });

  test('count with MFA off → 400 MFA is not enabled', async () => {
    const o = await seed.owner(t);
    const res = await o.client.get('/api/mfa/backup-codes/count');
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ message: 'MFA is not enabled' });
  });
});

describe('login with MFA', () => {
  test('missing code 400, wrong code 401, TOTP accepted once (replay refused), previous step accepted', async () => {
    const o = await seed.owner(t);
    const { secret } = await enableMfa(o);
    const missing = await t.client().post('/api/login', { email: o.email, password: o.password });
    expect(missing.status).toBe(400);
    expect(await json(missing)).toEqual(errors.mfaCodeRequired);
    const wrong = await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: '123456' });
    expect(wrong.status).toBe(401);
    expect(await json(wrong)).toEqual(errors.invalidMfaCode);

    const current = await code(secret);
    expect((await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: current })).status).toBe(200);
    const replay = await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: current });
    expect(replay.status).toBe(401);

    nextStep();
    const previous = await code(secret, -30);
    expect((await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: previous })).status).toBe(401);
    nextStep();
    expect((await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: await code(secret, -30) })).status).toBe(
      200,
    );
    nextStep();
    expect((await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: await code(secret, -60) })).status).toBe(
      401,
    );
  });

  test('a backup code works once, with or without hyphen, in any case', async () => {
    const o = await seed.owner(t);
    const { backupCodes } = await enableMfa(o);
    const [first, second] = backupCodes as [string, string];
    expect((await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: first.toLowerCase() })).status).toBe(200);
    expect((await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: first })).status).toBe(401);
    expect((await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: second.replace('-', '') })).status).toBe(
      200,
    );
    expect(await json(await o.client.get('/api/mfa/backup-codes/count'))).toEqual({ count: 8 });
  });
});

describe('disable and regenerate', () => {
  test('disable with a TOTP code or a backup code; a wrong code is refused', async () => {
    const a = await seed.owner(t);
    const { secret } = await enableMfa(a);
    expect((await a.client.post('/api/mfa/disable', { code: '999999' })).status).toBe(400);
    const res = await a.client.post('/api/mfa/disable', { code: await code(secret) });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ message: expect.any(String), shouldPromptSessions: false });
    expect(await json(await a.client.get('/api/mfa/status'))).toEqual({ enabled: false });
    expect((await t.client().post('/api/login', { email: a.email, password: a.password })).status).toBe(200);

    const b = await seed.owner(t);
    const { backupCodes } = await enableMfa(b);
    expect((await b.client.post('/api/mfa/disable', { code: backupCodes[3] })).status).toBe(200);
  });

  test('regenerate replaces all codes; a second one within 5 minutes → 429 {message, retryAfterMs} with Retry-After', async () => {
    const o = await seed.owner(t);
    const { backupCodes } = await enableMfa(o);
    const res = await o.client.post('/api/mfa/backup-codes/regenerate');
    expect(res.status).toBe(200);
    const fresh = (await json(res)).backupCodes as string[];
    expect(fresh).toHaveLength(10);
    expect((await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: backupCodes[0] })).status).toBe(401);
    expect((await t.client().post('/api/login', { email: o.email, password: o.password, mfaCode: fresh[0] })).status).toBe(200);

    clock.advance(60_000);
    const cooldown = await o.client.post('/api/mfa/backup-codes/regenerate');
    expect(cooldown.status).toBe(429);
    const body = await json(cooldown);
    expect(body.retryAfterMs).toBe(4 * 60_000);
    expect(body.message).toBe('Please wait 4 minute(s) and 0 second(s) before regenerating backup codes again');
    // The headers of every 429 (docs/api.md › Limits): a client waiting on Retry-After waits the cooldown out.
    expect(cooldown.headers.get('retry-after')).toBe('240');
    expect(cooldown.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(cooldown.headers.get('ratelimit-reset'))).toBe(Math.ceil((clock.now() + 4 * 60_000) / 1000));
    clock.advance(4 * 60_000);
    expect((await o.client.post('/api/mfa/backup-codes/regenerate')).status).toBe(200);
  });

  test('verify/disable limiter: 5 per minute per IP and login', async () => {
    const o = await seed.owner(t);
    await o.client.post('/api/mfa/setup');
    for (let i = 0; i < 5; i++) expect((await o.client.post('/api/mfa/verify', { code: '000000' })).status).toBe(400);
    const limited = await o.client.post('/api/mfa/verify', { code: '000000' });
    expect(limited.status).toBe(429);
    expect(await json(limited)).toEqual(errors.tooManyRequests);
  });
});
