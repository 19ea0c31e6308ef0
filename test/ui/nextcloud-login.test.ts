import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generate } from 'otplib';
import { ManualClock } from '../../src/clock.ts';
import type { Browser, Page } from 'playwright-core';
import {
  acquireBrowser,
  expectAccessible,
  openContext,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
  signIn,
} from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import { DavClient } from '../helpers/dav.ts';
import { eventually } from '../helpers/eventually.ts';
import { newPerson, type SsoServer, startSsoServer, startTestProvider, type TestProvider } from '../helpers/oidc.ts';
import * as seed from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const DESKTOP_UA = 'Mozilla/5.0 (Linux) mirall/3.7.3 (Nextcloud, debian-6.1.0-13-amd64 ClientArchitecture: x86_64 OsArchitecture: x86_64)';
// The Android app's sign-in web view names the phone.
const ANDROID_WEB_VIEW_UA = 'Google Pixel 7 (Android)';

let t: TestServer;
let browser: Browser;
let admin: seed.SeededLogin;
// Codes of later time steps without waiting for them (a code is used once).
const clock = new ManualClock();
const totp = (secret: string) => generate({ secret, epoch: Math.floor(clock.now() / 1000) });

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer({ clock }), acquireBrowser()]);
  admin = await seed.admin(t);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

type Flow = { poll: { token: string; endpoint: string }; login: string };

/** Started as the desktop client starts it (at `server`): its User-Agent then names the computer and the platform. */
async function startFlow(server = t.url): Promise<Flow> {
  const headers = { 'user-agent': 'anna-laptop (Desktop Client - Linux)', 'content-length': '0' };
  return json(await fetch(`${server}/index.php/login/v2`, { method: 'POST', headers }));
}

const poll = (flow: Flow) =>
  fetch(flow.poll.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${encodeURIComponent(flow.poll.token)}`,
  });

describe('Nextcloud clients: the browser sign-in', () => {
  test('login flow v2: the browser opened by the desktop client signs in with two-step verification, names the client, and "Grant access" hands it an app password', async () => {
    const o = await seed.owner(t);
    const setup = await json(await o.client.post('/api/mfa/setup'));
    await o.client.post('/api/mfa/verify', { code: await totp(setup.secret) });
    clock.advance(30_000);
    const flow = await startFlow();
    const { context, page, errors } = await openContext(browser, t.url);
    // The desktop client adds the computer's user name to the address it opens.
    await page.goto(`${flow.login}?user=anna`);
    // Not signed in: Coffer's own sign-in first, then back to the question.
    await page.waitForURL((u) => u.pathname === '/login');
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill(o.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Authentication code', { exact: true }).fill(await totp(setup.secret));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Connect an app' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(new URL(flow.login).pathname);
    await page.getByText('Nextcloud desktop on anna-laptop (Linux)', { exact: true }).waitFor();
    await page.getByText(o.email, { exact: true }).waitFor();
    await expectAccessible(page, 'the consent page of a login flow');
    await screenshot(page, 'nextcloud-connect-light-desktop');
    expect((await poll(flow)).status).toBe(404);

    await page.getByRole('button', { name: 'Grant access' }).click();
    await page.getByRole('heading', { name: 'Access granted' }).waitFor();
    await page.getByText('Nextcloud desktop on anna-laptop (Linux) is signed in.', { exact: false }).waitFor();
    await expectAccessible(page, 'a granted login flow');
    const credentials = await json(await poll(flow));
    expect(credentials).toMatchObject({ server: t.url, loginName: o.email });
    expect((await new DavClient(t.url, o.email, credentials.appPassword).propfind('', '0')).status).toBe(207);
    // The same sign-in once more: already signed in, the question comes at once; Cancel gives nothing.
    const second = await startFlow();
    await page.goto(second.login);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('heading', { name: 'Access not granted' }).waitFor();
    expect((await poll(second)).status).toBe(404);
    const names = (await json(await o.client.get('/api/user/app-passwords'))).appPasswords.map((p: { name: string }) => p.name);
    expect(names).toEqual(['Nextcloud desktop on anna-laptop (Linux)']);
    // A used link says so, in words that say what to do.
    await page.goto(flow.login);
    await page.getByRole('heading', { name: 'Sign-in request not found' }).waitFor();
    await page.getByText('Start the sign-in again from the app', { exact: false }).waitFor();
    // Signed in as someone else: "Use another account" signs out and comes back to the question after the sign-in.
    const other = await seed.owner(t);
    const third = await startFlow();
    await page.goto(third.login);
    await page.getByRole('button', { name: 'Use another account' }).click();
    await page.waitForURL((u) => u.pathname === '/login');
    await page.getByLabel('Email').fill(other.email);
    await page.getByLabel('Password').fill(other.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText(other.email, { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Grant access' }).click();
    await page.getByRole('heading', { name: 'Access granted' }).waitFor();
    expect((await json(await poll(third))).loginName).toBe(other.email);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('login flow v1: the mobile app web view ends at the nc://login/ address with a working app password (dark, phone width)', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await openContext(browser, t.url, { viewport: PHONE, dark: true, touch: true });
    await page.setExtraHTTPHeaders({ 'OCS-APIREQUEST': 'true', 'User-Agent': ANDROID_WEB_VIEW_UA });
    await page.goto('/index.php/login/flow');
    await page.setExtraHTTPHeaders({});
    await page.waitForURL((u) => u.pathname === '/login');
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill(o.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Connect an app' }).waitFor();
    await page.getByText('Nextcloud Android on Google Pixel 7', { exact: true }).waitFor();
    await expectAccessible(page, 'the consent page at phone width, dark');
    await screenshot(page, 'nextcloud-connect-dark-phone');
    const granted = page.waitForResponse((r) => r.url().endsWith('/grant'));
    await page.getByRole('button', { name: 'Grant access' }).click();
    const { redirect } = await (await granted).json();
    const m = /^nc:\/\/login\/server:(.+)&user:(.+)&password:(.+)$/.exec(redirect)!;
    expect([m[1], decodeURIComponent(m[2]!)]).toEqual([t.url, o.email]);
    expect((await new DavClient(t.url, o.email, decodeURIComponent(m[3]!)).propfind('', '0')).status).toBe(207);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('signed in long ago: Grant access asks for the password, its field takes the focus, a wrong one is refused and Enter with the right one grants (light, dark at phone width)', async () => {
    for (const opts of [{}, { viewport: PHONE, dark: true, touch: true }]) {
      const o = await seed.owner(t);
      const { context, page, errors } = await signedInContext(browser, t.url, o, opts);
      t.server.ctx.db.$client.query('UPDATE sessions SET created_at = created_at - 3600000 WHERE user_id = ?').run(o.id);
      const flow = await startFlow();
      await page.goto(flow.login);
      await page.getByRole('button', { name: 'Grant access' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('alert').filter({ hasText: 'Enter your password to make an app password' }).waitFor();
      const password = page.getByLabel('Your password', { exact: true });
      await eventually(async () =>
        expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe(await password.getAttribute('id')),
      );
      await expectAccessible(page, 'the consent page asking for the password');
      await screenshot(page, `nextcloud-connect-confirm-${opts.dark ? 'dark-phone' : 'light-desktop'}`);
      await page.keyboard.type('not the password');
      await page.keyboard.press('Enter');
      await page.getByRole('alert').filter({ hasText: 'Current password is incorrect' }).waitFor();
      await password.fill(o.password);
      await password.press('Enter');
      await page.getByRole('heading', { name: 'Access granted' }).waitFor();
      expect((await json(await poll(flow))).loginName).toBe(o.email);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  test('signed in long ago, by keyboard: Grant access pressed with a wrong password keeps the focus while the server answers and after it refuses', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await signedInContext(browser, t.url, o);
    t.server.ctx.db.$client.query('UPDATE sessions SET created_at = created_at - 3600000 WHERE user_id = ?').run(o.id);
    const flow = await startFlow();
    await page.goto(flow.login);
    const grant = page.getByRole('button', { name: 'Grant access' });
    await grant.click();
    await page.getByLabel('Your password', { exact: true }).fill('not the password');
    await grant.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Current password is incorrect' }).waitFor();
    expect(await grant.evaluate((el: any) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('Admin → Clients shows a Nextcloud client with its platform and version', async () => {
    const o = await seed.owner(t);
    const password = (await json(await o.client.post('/api/user/app-passwords', { name: 'laptop' }))).password as string;
    const dav = new DavClient(t.url, o.email, password);
    await fetch(`${t.url}/remote.php/dav/files/${o.id}/`, {
      method: 'PROPFIND',
      headers: { authorization: dav.authorization, depth: '0', 'user-agent': DESKTOP_UA },
    });
    const { context, page, errors } = await signedInContext(browser, t.url, admin);
    await page.goto('/admin/clients');
    const row = page.getByRole('row').filter({ hasText: o.email });
    await eventually(async () => expect(await row.getByRole('cell').allInnerTexts()).toContain('3.7.3'));
    expect(await row.getByRole('cell').allInnerTexts()).toContain('Linux');
    await expectAccessible(page, 'Admin → Clients with a Nextcloud client');
    expect(errors).toEqual([]);
    await context.close();
  });
});

/** The consent page reached after signing in: "Grant access" hands the polling client its app password. */
async function grantAndPoll(page: Page, flow: Flow, email: string): Promise<void> {
  await page.getByRole('heading', { name: 'Connect an app' }).waitFor();
  expect(new URL(page.url()).pathname).toBe(new URL(flow.login).pathname);
  await page.getByRole('button', { name: 'Grant access' }).click();
  await page.getByRole('heading', { name: 'Access granted' }).waitFor();
  const credentials = await json(await poll(flow));
  expect(credentials.loginName).toBe(email);
  const dav = new DavClient(credentials.server, email, credentials.appPassword);
  expect((await dav.propfind('', '0')).status).toBe(207);
}

describe('Nextcloud clients: every way of signing in the web app offers', () => {
  test('a passkey: "Sign in with a passkey" on the sign-in page, then the question', async () => {
    // Browsers refuse an address as a passkey's host: the flow starts at localhost, as the page is opened.
    const origin = `http://localhost:${new URL(t.url).port}`;
    const o = await seed.owner(t);
    const { context, page, errors } = await openContext(browser, origin);
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await signIn(page, o.email, o.password, '/settings/security');
    await page.getByLabel('Passkey name').fill('Laptop');
    await page.getByLabel('Your password', { exact: true }).fill(o.password);
    await page.getByRole('button', { name: 'Add a passkey', exact: true }).click();
    await page.getByRole('listitem', { name: 'Laptop' }).waitFor();
    await context.clearCookies();

    const flow = await startFlow(origin);
    await page.goto(flow.login);
    await page.waitForURL((u) => u.pathname === '/login');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await grantAndPoll(page, flow, o.email);
    expect(errors).toEqual([]);
    await context.close();
  });

  describe('single sign-on', () => {
    let provider: TestProvider;
    let sso: SsoServer;
    beforeAll(async () => {
      provider = await startTestProvider();
      sso = await startSsoServer(provider, { env: { OIDC_PROVIDER_NAME: 'Authentik' } });
    });
    afterAll(async () => {
      await sso.t.stop();
      await provider.stop();
    });

    test('the provider, then back to the question', async () => {
      const person = newPerson(provider);
      const flow = await startFlow(sso.t.url);
      const { context, page, errors } = await openContext(browser, sso.t.url);
      await page.goto(flow.login);
      // A fresh instance: its first account signs up, through the provider here.
      await page.getByRole('link', { name: 'Sign up with Authentik' }).click();
      await page.waitForURL((u) => u.origin === provider.issuer);
      await page.locator('input[name="login"]').fill(person);
      await page.locator('input[name="password"]').fill('any password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await grantAndPoll(page, flow, provider.accounts.get(person)!.email!);
      expect(errors).toEqual([]);
      await context.close();
    });
  });
});
