import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import { Messages } from '../../../src/errors.ts';

const DAY = 86_400_000;
const clock = new ManualClock();
let t: TestServer;
let admin: seed.SeededLogin;
serverWithAdmin((s) => ({ t, admin } = s), { clock });

/** The token of an invitation link (`…/invite#<token>`). */
const tokenOf = (url: string) => new URL(url).hash.slice(1);

async function invite(body: Record<string, unknown>): Promise<{ id: string; token: string; url: string }> {
  const res = await admin.client.post('/api/user/invitations', body);
  expect(res.status).toBe(201);
  const { invitation, url } = await json(res);
  return { id: invitation.id, token: tokenOf(url), url };
}

describe('invitations', () => {
  test('a name of only invisible characters given at acceptance is no name: the one the admin chose stays', async () => {
    const email = seed.uniqueEmail('invisible');
    const { token } = await invite({ email, name: 'Ada' });
    const accepted = await t.client().post('/api/invitations/accept', { token, password: 'a fine password', name: '\u200B\u202E\u3164' });
    expect(accepted.status).toBe(201);
    expect((await json(accepted)).user).toMatchObject({ email, name: 'Ada' });
  });

  test('the admin invites; the link works once, with sign-up closed, and sets the name and storage limit', async () => {
    expect((await json(await admin.client.get('/api/user/signup-status'))).signupEnabled).toBe(false);
    const email = seed.uniqueEmail('invited');
    const res = await admin.client.post('/api/user/invitations', { email, name: 'Ada', storageLimit: 2 ** 30 });
    expect(res.status).toBe(201);
    const { invitation, url } = await json(res);
    expect(invitation).toMatchObject({ email, name: 'Ada', storageLimit: 2 ** 30 });
    expect(Date.parse(invitation.expiresAt) - Date.parse(invitation.createdAt)).toBe(7 * DAY);
    expect(url).toStartWith(`${t.url}/invite#`);
    const token = tokenOf(url);
    expect(token.length).toBeGreaterThanOrEqual(40);
    expect((await json(await admin.client.get('/api/user/invitations'))).invitations.map((i: { id: string }) => i.id)).toContain(
      invitation.id,
    );
    // The token is not kept: no answer after the first one carries it.
    expect(JSON.stringify(await json(await admin.client.get('/api/user/invitations')))).not.toContain(token);

    const guest = t.client();
    expect(await json(await guest.post('/api/invitations/view', { token }))).toEqual({
      email,
      name: 'Ada',
      expiresAt: invitation.expiresAt,
    });
    const short = await guest.post('/api/invitations/accept', { token, password: 'short' });
    expect(short.status).toBe(422);
    const accepted = await guest.post('/api/invitations/accept', { token, password: 'a fine password' });
    expect(accepted.status).toBe(201);
    expect((await json(accepted)).user).toMatchObject({ email, name: 'Ada' });
    expect((await json(await guest.get('/api/profile'))).email).toBe(email);
    expect((await json(await guest.get('/api/user/storage'))).total).toBe(2 ** 30);
    await seed.login(t, email, 'a fine password');
    // The admin chose the address: single sign-on may link it by email (docs/sign-on.md).
    expect(t.server.ctx.services.accounts.findByEmail(email)!.emailTrusted).toBe(true);

    const again = await t.client().post('/api/invitations/accept', { token, password: 'another password' });
    expect(again.status).toBe(410);
    expect((await json(again)).message).toContain('already used');
    expect((await t.client().post('/api/invitations/view', { token })).status).toBe(410);
    expect((await json(await admin.client.get('/api/user/invitations'))).invitations.map((i: { id: string }) => i.id)).not.toContain(
      invitation.id,
    );
  });

  test('two acceptances at once: one account, the other refused', async () => {
    const { token } = await invite({ email: seed.uniqueEmail('race') });
    const results = await Promise.all([0, 1].map(() => t.client().post('/api/invitations/accept', { token, password: 'racing password' })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 410]);
  });

  test('the invitee may choose their own name; bad, used and withdrawn links are refused with a message', async () => {
    const email = seed.uniqueEmail('named');
    const { token, id } = await invite({ email, name: 'Given' });
    const accepted = await t.client().post('/api/invitations/accept', { token, password: 'a fine password', name: 'Chosen' });
    expect((await json(accepted)).user.name).toBe('Chosen');

    const unknown = await t.client().post('/api/invitations/view', { token: 'x'.repeat(43) });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).message).toContain('not valid');
    expect((await admin.client.delete(`/api/user/invitations/${id}`)).status).toBe(404);

    const withdrawn = await invite({ email: seed.uniqueEmail('withdrawn') });
    expect((await admin.client.delete(`/api/user/invitations/${withdrawn.id}`)).status).toBe(200);
    expect((await t.client().post('/api/invitations/accept', { token: withdrawn.token, password: 'a fine password' })).status).toBe(404);
  });

  test('a link withdrawn while its acceptance was under way says it was withdrawn (404), not used', async () => {
    const { token, id } = await invite({ email: seed.uniqueEmail('withdrawn-late') });
    // The chosen password is hashed first: the admin withdraws the link meanwhile.
    const accepting = t.client().post('/api/invitations/accept', { token, password: 'a fine password' });
    await Bun.sleep(15);
    expect((await admin.client.delete(`/api/user/invitations/${id}`)).status).toBe(200);
    const res = await accepting;
    expect(res.status).toBe(404);
    expect((await json(res)).message).toBe(Messages.invitationNotFound);
  });

  test('an address already in use, or already invited, is refused; an invitation carries no password', async () => {
    expect((await admin.client.post('/api/user/invitations', { email: admin.email.toUpperCase() })).status).toBe(409);
    const email = seed.uniqueEmail('twice');
    await invite({ email });
    const twice = await admin.client.post('/api/user/invitations', { email });
    expect(twice.status).toBe(409);
    expect((await json(twice)).message).toContain('already waiting');
    expect((await admin.client.post('/api/user/invitations', { email: 'not an email' })).status).toBe(422);
    expect((await admin.client.post('/api/user/invitations', { email: seed.uniqueEmail(), password: 'a fine password' })).status).toBe(400);
    expect((await admin.client.post('/api/user/invitations', { email: seed.uniqueEmail(), name: 'n'.repeat(101) })).status).toBe(422);
  });

  test('Add user with a password: the account exists at once, with its limit', async () => {
    const email = seed.uniqueEmail('direct');
    const res = await admin.client.post('/api/user/accounts', {
      email,
      name: 'Direct',
      password: 'set by admin',
      storageLimit: 5 * 2 ** 30,
    });
    expect(res.status).toBe(201);
    expect((await json(res)).user).toMatchObject({ email, name: 'Direct' });
    const c = await seed.login(t, email, 'set by admin');
    expect((await json(await c.get('/api/user/storage'))).total).toBe(5 * 2 ** 30);
    expect(t.server.ctx.services.accounts.findByEmail(email)!.emailTrusted).toBe(true);
    expect((await admin.client.post('/api/user/accounts', { email, password: 'set by admin' })).status).toBe(409);
    expect((await admin.client.post('/api/user/accounts', { email: seed.uniqueEmail() })).status).toBe(400);
    expect((await admin.client.post('/api/user/accounts', { email: seed.uniqueEmail(), password: 'short' })).status).toBe(422);
  });

  test('only the admin invites or adds: an owner and the admin’s sub-user get 403, no session 401', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, { id: admin.id }, ['files.upload', 'files.share']);
    const pending = await invite({ email: seed.uniqueEmail('door') });
    for (const c of [o.client, sub.client, t.client()]) {
      const expected = c === o.client || c === sub.client ? 403 : 401;
      expect((await c.post('/api/user/invitations', { email: seed.uniqueEmail() })).status).toBe(expected);
      expect((await c.post('/api/user/accounts', { email: seed.uniqueEmail(), password: 'a fine password' })).status).toBe(expected);
      expect((await c.get('/api/user/invitations')).status).toBe(expected);
      expect((await c.delete(`/api/user/invitations/${pending.id}`)).status).toBe(expected);
    }
    expect((await t.client().post('/api/invitations/view', { token: pending.token })).status).toBe(200);
  });

  test('after seven days the link is refused and no account is made', async () => {
    const email = seed.uniqueEmail('late');
    const { token } = await invite({ email });
    clock.advance(7 * DAY - 1);
    expect((await t.client().post('/api/invitations/view', { token })).status).toBe(200);
    clock.advance(1);
    const late = await t.client().post('/api/invitations/accept', { token, password: 'a fine password' });
    expect(late.status).toBe(410);
    expect((await json(late)).message).toContain('expired');
    expect(t.server.ctx.services.accounts.findByEmail(email)).toBeNull();
    // Expired, it no longer blocks a new invitation to the same address.
    const fresh = await seed.login(t, admin.email, admin.password);
    expect((await fresh.post('/api/user/invitations', { email })).status).toBe(201);
  });

  test('a session signed in over 10 minutes ago adds no account without the admin’s password: a stolen cookie cannot make a login', async () => {
    const session = await seed.login(t, admin.email, admin.password);
    expect((await session.post('/api/user/invitations', { email: seed.uniqueEmail('recent') })).status).toBe(201);
    clock.advance(10 * 60_000 + 1_000);

    const email = seed.uniqueEmail('stale');
    const asked = await session.post('/api/user/invitations', { email });
    expect(asked.status).toBe(400);
    expect(await json(asked)).toMatchObject({
      confirm: 'password',
      message: expect.stringContaining('Enter your password to add an account'),
    });
    const direct = await session.post('/api/user/accounts', { email, password: 'set by admin' });
    expect(direct.status).toBe(400);
    expect((await json(direct)).confirm).toBe('password');
    const wrong = await session.post('/api/user/accounts', { email, password: 'set by admin', currentPassword: 'not the password' });
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).message).toBe('Current password is incorrect');
    expect(t.server.ctx.services.accounts.findByEmail(email)).toBeNull();
    const pending = (await json(await session.get('/api/user/invitations'))).invitations.map((i: { email: string }) => i.email);
    expect(pending).not.toContain(email);

    const invited = await session.post('/api/user/invitations', { email, currentPassword: admin.password });
    expect(invited.status).toBe(201);
    const other = seed.uniqueEmail('confirmed');
    expect(
      (await session.post('/api/user/accounts', { email: other, password: 'set by admin', currentPassword: admin.password })).status,
    ).toBe(201);
    await seed.login(t, other, 'set by admin');
    // A new sign-in is proof again for its first 10 minutes.
    const again = await seed.login(t, admin.email, admin.password);
    expect((await again.post('/api/user/invitations', { email: seed.uniqueEmail('again') })).status).toBe(201);
  });
});

describe('Admin → Users: search and sort', () => {
  test('q finds owners by email or name (or a sub-user’s); sort orders them and pages keep the order', async () => {
    const tag = `zeta${Date.now().toString(36)}`;
    const made: seed.SeededLogin[] = [];
    for (const [i, used] of [
      ['c', 300],
      ['a', 100],
      ['b', 200],
    ] as const) {
      const o = await seed.owner(t, `${tag}-${i}@example.test`);
      t.server.ctx.services.quota.adjust(o.id, used);
      made.push(o);
    }
    const sub = await seed.subUser(t, { id: admin.id }, [], `${tag}-helper@example.test`);
    // The invitation tests moved the clock a week on: the admin signs in again.
    const signedIn = await seed.login(t, admin.email, admin.password);
    const list = async (query: string) => json(await signedIn.get(`/api/user/all?${query}`));
    const emails = (body: { users: Array<{ email: string; parentUserId: string | null }> }) =>
      body.users.filter((u) => !u.parentUserId).map((u) => u.email);

    expect(emails(await list(`q=${tag}&sort=email`))).toEqual(
      [admin.email, `${tag}-a@example.test`, `${tag}-b@example.test`, `${tag}-c@example.test`].sort(),
    );
    expect((await list(`q=${tag.toUpperCase()}`)).users.map((u: { email: string }) => u.email)).toContain(sub.email);
    expect(emails(await list(`q=${tag}-&sort=storage`)).filter((e) => e !== admin.email)).toEqual([
      `${tag}-c@example.test`,
      `${tag}-b@example.test`,
      `${tag}-a@example.test`,
    ]);
    expect(emails(await list('q=100%25_nobody'))).toEqual([]);

    const paged: string[] = [];
    let cursor = '';
    do {
      const page = await list(`q=${tag}&sort=email&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...emails(page));
      cursor = page.nextCursor ?? '';
    } while (cursor);
    expect(paged).toEqual(emails(await list(`q=${tag}&sort=email`)));
    expect((await signedIn.get('/api/user/all?sort=size')).status).toBe(422);
    const wrongCursor = (await list(`sort=email&limit=1`)).nextCursor;
    expect((await signedIn.get(`/api/user/all?sort=storage&cursor=${wrongCursor}`)).status).toBe(400);
  });
});
