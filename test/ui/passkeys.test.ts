import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generate } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { acquireBrowser, DESKTOP, expectAccessible, openContext, PHONE, releaseBrowser, screenshot, signIn } from '../helpers/browser.ts';
import { json, TestClient } from '../helpers/client.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { createPasskey } from '../helpers/webauthn.ts';

let t: TestServer;
let browser: Browser;
// Browsers refuse an address as a passkey's relying party: the page opens the server as localhost.
let origin: string;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
  origin = `http://localhost:${new URL(t.url).port}`;
  await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

/** A page whose browser has a platform authenticator (Chromium's virtual one, through the DevTools protocol). */
async function withAuthenticator(opts: { dark?: boolean; viewport?: { width: number; height: number } } = {}) {
  const opened = await openContext(browser, origin, opts);
  const cdp = await opened.context.newCDPSession(opened.page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
  const credentials = async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
  return { ...opened, credentials };
}

async function signOut(page: Page) {
  await page.getByRole('button', { name: /^Account/ }).click();
  await page.getByRole('menuitem', { name: 'Sign out' }).click();
  await page.waitForURL('**/login');
}

async function enableMfa(login: seed.SeededLogin) {
  const c = new TestClient(origin);
  await c.post('/api/login', { email: login.email, password: login.password });
  const { secret } = await json(await c.post('/api/mfa/setup'));
  const res = await c.post('/api/mfa/verify', { code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) }) });
  expect(res.status).toBe(200);
}

describe('passkeys in the browser', () => {
  let context: BrowserContext;
  afterAll(() => context?.close());

  test('register in Settings → Security, sign in without an email, as the second step, a replayed answer refused, then removed', async () => {
    const o = await seed.owner(t);
    const opened = await withAuthenticator();
    const { page, errors, credentials } = opened;
    context = opened.context;
    await signIn(page, o.email, o.password, '/settings/security');
    await page.getByText('No passkeys yet.').waitFor();
    await page.getByLabel('Passkey name').fill('Work laptop');
    // A session alone cannot add one: the password is asked again.
    await button(page, 'Add a passkey').click();
    await page.getByRole('alert').filter({ hasText: 'Enter your password to add a passkey' }).waitFor();
    expect(await credentials()).toHaveLength(0);
    await page.getByLabel('Your password', { exact: true }).fill(o.password);
    await button(page, 'Add a passkey').click();
    const row = page.getByRole('listitem', { name: 'Work laptop' });
    await row.waitFor();
    await row.filter({ hasText: 'never used' }).waitFor();
    expect(await credentials()).toHaveLength(1);
    await expectAccessible(page, 'Settings → Security with a passkey');
    await screenshot(page, 'passkeys-settings-light');

    // Sign-in with no email: the authenticator offers its passkey for this host.
    await signOut(page);
    await screenshot(page, 'passkeys-sign-in-light');
    const answers: string[] = [];
    page.on('request', (r) => r.url().endsWith('/api/passkeys/sign-in') && answers.push(r.postData() ?? ''));
    await button(page, 'Sign in with a passkey').click();
    await page.waitForURL((u) => u.pathname !== '/login');
    expect(answers).toHaveLength(1);
    // The answer the browser sent, posted again: its challenge is spent.
    const replay = await new TestClient(origin).send('POST', '/api/passkeys/sign-in', JSON.parse(answers[0]!));
    expect(replay.status).toBe(400);
    expect((await json(replay)).message).toBe('This passkey request has expired or was already used. Start again.');

    // Two-factor on: after the password, the code step offers the passkey instead of the code.
    await enableMfa(o);
    await signOut(page);
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill(o.password);
    await button(page, 'Sign in').click();
    await page.getByLabel('Authentication code').waitFor();
    await screenshot(page, 'passkeys-code-step-light');
    await button(page, 'Use a passkey instead').click();
    await page.waitForURL((u) => u.pathname !== '/login');

    await page.goto('/settings/security');
    await row.filter({ hasText: 'last used' }).waitFor();
    await row.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await page.getByText('No passkeys yet.').waitFor();
    await signOut(page);
    await button(page, 'Sign in with a passkey').click();
    await page.getByRole('alert').filter({ hasText: 'This passkey is not registered on this Coffer' }).waitFor();
    expect(errors).toEqual([]);
  });

  test("another account's passkey is refused as the second step", async () => {
    const a = await seed.owner(t);
    const b = await seed.owner(t);
    // B has a passkey (elsewhere) and two-factor on; this browser holds only A's.
    const bc = new TestClient(origin);
    await bc.post('/api/login', { email: b.email, password: b.password });
    const { response } = await createPasskey(await json(await bc.post('/api/passkeys/register/options', { password: b.password })), origin);
    expect((await bc.post('/api/passkeys', { response })).status).toBe(201);
    await enableMfa(b);

    const { page, context: ctx, errors } = await withAuthenticator();
    try {
      await signIn(page, a.email, a.password, '/settings/security');
      await page.getByLabel('Your password', { exact: true }).fill(a.password);
      await button(page, 'Add a passkey').click();
      await page.getByRole('listitem', { name: 'Passkey 1' }).waitFor();
      await signOut(page);
      await page.getByLabel('Email').fill(b.email);
      await page.getByLabel('Password').fill(b.password);
      await button(page, 'Sign in').click();
      await button(page, 'Use a passkey instead').click();
      await page.getByRole('alert').filter({ hasText: 'This passkey belongs to another account.' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/login');
      expect(errors).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  test('changing the password lists the passkeys, which would keep signing in, and removes them when asked', async () => {
    const o = await seed.owner(t);
    const { page, context: ctx, errors } = await withAuthenticator();
    try {
      await signIn(page, o.email, o.password, '/settings/security');
      await page.getByLabel('Passkey name').fill('Phone');
      await page.getByLabel('Your password', { exact: true }).fill(o.password);
      await button(page, 'Add a passkey').click();
      await page.getByRole('listitem', { name: 'Phone' }).waitFor();
      await page
        .getByRole('list', { name: /keep working after the change/ })
        .getByText('Phone')
        .waitFor();
      await page.getByLabel('Current password').fill(o.password);
      await page.getByLabel('New password', { exact: true }).fill('brand new secret');
      await page.getByLabel('Repeat new password').fill('brand new secret');
      await page.getByLabel('Also remove this passkey').check();
      await button(page, 'Change password').click();
      await page.getByText('Your passkeys were removed.').waitFor();
      await button(page, 'Sign in with a passkey').click();
      await page.getByRole('alert').filter({ hasText: 'This passkey is not registered on this Coffer' }).waitFor();
      expect(errors).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  test('screens in dark and at phone width; at an address instead of localhost the page says why passkeys are unavailable', async () => {
    const o = await seed.owner(t);
    for (const [n, [name, opts]] of (
      [
        ['dark', { dark: true, viewport: DESKTOP }],
        ['phone-dark', { dark: true, viewport: PHONE }],
        ['phone-light', { viewport: PHONE }],
      ] as const
    ).entries()) {
      const { page, context: ctx } = await withAuthenticator(opts);
      try {
        await page.goto('/login');
        await button(page, 'Sign in with a passkey').waitFor();
        await screenshot(page, `passkeys-sign-in-${name}`);
        if (name === 'phone-dark') await expectAccessible(page, 'sign-in with passkeys, dark, phone');
        await signIn(page, o.email, o.password, '/settings/security');
        await page.getByLabel('Your password', { exact: true }).fill(o.password);
        await button(page, 'Add a passkey').click();
        // This round's own passkey: the earlier rounds' are listed at once.
        await page.getByRole('listitem', { name: `Passkey ${n + 1}` }).waitFor();
        await page.getByRole('heading', { name: 'Passkeys' }).scrollIntoViewIfNeeded();
        await screenshot(page, `passkeys-settings-${name}`);
        if (name === 'phone-dark') await expectAccessible(page, 'Settings → Security, dark, phone');
      } finally {
        await ctx.close();
      }
    }
    // http://127.0.0.1 is not a secure context: no passkey button, and Settings says what passkeys need.
    const { page, context: ctx } = await openContext(browser, t.url);
    try {
      await page.goto('/login');
      await page.getByLabel('Email').waitFor();
      expect(await button(page, 'Sign in with a passkey').count()).toBe(0);
      await signIn(page, o.email, o.password, '/settings/security');
      const note = page.getByRole('note').filter({ hasText: 'Passkeys need HTTPS with a host name' });
      await note.scrollIntoViewIfNeeded();
      await screenshot(page, 'passkeys-settings-unavailable');
      await page.getByRole('listitem', { name: 'Passkey 3' }).waitFor();
    } finally {
      await ctx.close();
    }
  });
});
