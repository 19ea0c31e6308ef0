import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import {
  acquireBrowser,
  DESKTOP,
  expectAccessible,
  openContext,
  PHONE,
  releaseBrowser,
  screenshot,
  signedInContext,
} from '../helpers/browser.ts';
import { json } from '../helpers/client.ts';
import * as seed from '../helpers/seed.ts';
import { newPerson, type SsoServer, signInWithProvider, startSsoServer, startTestProvider, type TestProvider } from '../helpers/oidc.ts';

let provider: TestProvider;
let browser: Browser;
let c: SsoServer;

beforeAll(async () => {
  [provider, browser] = await Promise.all([startTestProvider(), acquireBrowser()]);
  c = await startSsoServer(provider, { env: { OIDC_PROVIDER_NAME: 'Authentik' } });
});
afterAll(async () => {
  await releaseBrowser();
  await c.t.stop();
  await provider.stop();
});

/** At the provider's own (development) pages: sign in as `subject` and approve Coffer, as a person would. */
async function atProvider(page: Page, subject: string): Promise<void> {
  await page.waitForURL((u) => u.origin === provider.issuer);
  await page.locator('input[name="login"]').fill(subject);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

describe('sign-in page with single sign-on', () => {
  let admin: string;
  let adminSecret: string;

  test('a fresh instance: "Sign up with Authentik" creates the administrator and lands where they asked', async () => {
    admin = newPerson(provider, { name: 'Ada Admin' });
    const { context, page, errors } = await openContext(browser, c.t.url);
    await page.goto('/starred');
    await page.waitForURL('**/signup?next=%2Fstarred');
    const button = page.getByRole('link', { name: 'Sign up with Authentik' });
    await button.waitFor();
    await expectAccessible(page, 'set-up with single sign-on');
    await screenshot(page, 'signup-idp-light-desktop');
    await button.click();
    await atProvider(page, admin);
    await page.waitForURL((u) => u.origin === c.t.url && u.pathname === '/starred');
    await page.getByRole('heading', { name: 'Starred' }).waitFor();
    expect(c.t.server.ctx.services.accounts.findByEmail(provider.accounts.get(admin)!.email!)!.isAdmin).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('an account made through Authentik has no password: Settings says where it lives instead of a form that cannot work; Profile says how it signs in', async () => {
    const api = c.t.client();
    await signInWithProvider(provider, api, admin);
    const { context, page, errors } = await signedInContext(browser, c.t.url, { client: api });
    await page.goto('/settings/security');
    await page.getByText('This account has no Coffer password: you sign in through Authentik').waitFor();
    expect(await page.getByLabel('Current password').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Change password' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Enable two-factor authentication' }).waitFor();
    await expectAccessible(page, 'security settings without a password');
    await screenshot(page, 'settings-security-idp-light-desktop');
    await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: 'Profile' }).click();
    await page.getByText('Authentik (single sign-on)').waitFor();
    expect(await page.getByText('Email and password').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('a password account linked to Authentik by its verified email keeps its password form; Profile names both ways in', async () => {
    const o = await seed.owner(c.t);
    const api = c.t.client();
    expect(await signInWithProvider(provider, api, newPerson(provider, { email: o.email }))).toBe('/');
    const { context, page, errors } = await signedInContext(browser, c.t.url, { client: api });
    await page.goto('/settings/profile');
    await page.getByText('Email and password, or Authentik (single sign-on)').waitFor();
    await page.goto('/settings/security');
    await page.getByLabel('Current password').waitFor();
    expect(await page.getByText('This account has no Coffer password').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  test('"Sign in with Authentik" beside the password form, in light, dark and on a phone', async () => {
    for (const [name, opts] of [
      ['signin-idp-light-desktop', { viewport: DESKTOP }],
      ['signin-idp-dark-desktop', { viewport: DESKTOP, dark: true }],
      ['signin-idp-light-phone', { viewport: PHONE, touch: true }],
      ['signin-idp-dark-phone', { viewport: PHONE, dark: true, touch: true }],
    ] as const) {
      const { context, page } = await openContext(browser, c.t.url, opts);
      await page.goto('/login');
      await page.getByRole('link', { name: 'Sign in with Authentik' }).waitFor();
      await page.getByLabel('Password').waitFor();
      await screenshot(page, name);
      if (name === 'signin-idp-dark-phone') await expectAccessible(page, 'sign-in with single sign-on, dark, phone');
      await context.close();
    }
  });

  test('a refusal comes back as /login?error=…, shown as a sentence that says what to do', async () => {
    const stranger = newPerson(provider);
    const { context, page, errors } = await openContext(browser, c.t.url);
    await page.goto('/login');
    await page.getByRole('link', { name: 'Sign in with Authentik' }).click();
    await atProvider(page, stranger);
    await page.waitForURL('**/login?error=signup_disabled');
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: 'No Coffer account belongs to your Authentik account, and sign-up is closed.' }).waitFor();
    await expectAccessible(page, 'sign-in with a single sign-on error');
    await screenshot(page, 'signin-idp-error-light-desktop');
    // Every code the server sends has its own sentence; an unknown one still says something useful.
    for (const [code, text] of [
      ['email_not_verified', 'Authentik has not verified that address'],
      ['email_unconfirmed', 'its address was not set by the administrator'],
      ['expired', 'took too long'],
      ['invalid_token', "failed Coffer's security checks"],
      ['provider_unavailable', 'Authentik cannot be reached right now'],
      ['something_new', 'Single sign-on did not complete'],
    ]) {
      await page.goto(`/login?error=${code}`);
      await page.getByRole('alert').filter({ hasText: text! }).waitFor();
    }
    expect(errors).toEqual([]);
    await context.close();
  });

  test('with two-step verification on, the provider is followed by the code step (mfa=1), then where they asked', async () => {
    const api = c.t.client();
    await signInWithProvider(provider, api, admin);
    adminSecret = (await json(await api.post('/api/mfa/setup'))).secret;
    // Turned on with the previous 30-second step's code (accepted), so the current step's code is fresh for the sign-in.
    const previous = await generate({ secret: adminSecret, epoch: Math.floor(Date.now() / 1000) - 30 });
    expect((await api.post('/api/mfa/verify', { code: previous })).status).toBe(200);

    const { context, page, errors } = await openContext(browser, c.t.url);
    await page.goto('/trash');
    await page.waitForURL('**/login?next=%2Ftrash');
    await page.getByRole('link', { name: 'Sign in with Authentik' }).click();
    await atProvider(page, admin);
    await page.waitForURL('**/login?mfa=1&next=%2Ftrash');
    const code = page.getByLabel('Authentication code');
    await code.waitFor();
    await page.getByText('Authentik has confirmed who you are.').waitFor();
    await expectAccessible(page, 'single sign-on code step');
    await screenshot(page, 'signin-idp-code-light-desktop');
    await code.fill('000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid MFA code' }).waitFor();
    await code.fill(await generate({ secret: adminSecret }));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/trash');
    await page.getByRole('heading', { name: 'Trash' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('OIDC_DISABLE_PASSWORD_LOGIN', () => {
  test('the sign-in page offers only the provider; Settings says a password is not used here, even for an account that has one', async () => {
    const only = await startSsoServer(provider, { env: { OIDC_PROVIDER_NAME: 'Keycloak', OIDC_DISABLE_PASSWORD_LOGIN: 'true' } });
    try {
      await signInWithProvider(provider, only.t.client(), newPerson(provider));
      const { context, page, errors } = await openContext(browser, only.t.url);
      await page.goto('/login');
      await page.getByRole('link', { name: 'Sign in with Keycloak' }).waitFor();
      await page.getByText('This Coffer signs people in through Keycloak only.').waitFor();
      expect(await page.getByLabel('Password').count()).toBe(0);
      await expectAccessible(page, 'provider-only sign-in');
      await screenshot(page, 'signin-idp-only-light-desktop');
      expect(errors).toEqual([]);
      await context.close();

      // An account the admin made with a password, linked by its verified email, signs in only through Keycloak.
      const email = 'pat@example.test';
      await only.t.server.ctx.services.accounts.createLogin({ email, password: 'a local password', name: 'Pat', emailTrusted: true });
      const api = only.t.client();
      expect(await signInWithProvider(provider, api, newPerson(provider, { email }))).toBe('/');
      const signedIn = await signedInContext(browser, only.t.url, { client: api });
      await signedIn.page.goto('/settings/security');
      await signedIn.page.getByText('This Coffer signs people in through Keycloak only').waitFor();
      expect(await signedIn.page.getByLabel('Current password').count()).toBe(0);
      await signedIn.page.goto('/settings/profile');
      await signedIn.page.getByText('Keycloak (single sign-on)').waitFor();
      expect(await signedIn.page.getByText('Email and password').count()).toBe(0);
      expect(signedIn.errors).toEqual([]);
      await signedIn.context.close();
    } finally {
      await only.t.stop();
    }
  });
});
