import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import {
  acquireBrowser,
  apiSettled,
  DESKTOP,
  eventStreamOpen,
  expectAccessible,
  hasFocus,
  holdRequests,
  openContext,
  PHONE,
  releaseBrowser,
  screenshot,
  signIn,
  signedInContext,
} from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';
import { json } from '../helpers/client.ts';
import * as seed from '../helpers/seed.ts';
import fs from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let browser: Browser;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), acquireBrowser()]);
});
afterAll(async () => {
  await releaseBrowser();
  await t.stop();
});

/** Each text field of the page's form as assistive technology gets it: its accessible name, and the text that describes it. */
async function textFields(page: Page): Promise<Array<{ name: string; description: string }>> {
  const names = [...(await page.locator('form').ariaSnapshot()).matchAll(/^\s*- textbox "(.*)"/gm)].map((m) => m[1]!);
  const descriptions: string[] = [];
  for (const input of await page.locator('form input').all()) {
    const ids = ((await input.getAttribute('aria-describedby')) ?? '').split(' ').filter(Boolean);
    const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()));
    descriptions.push(texts.join(' ').replace(/\s+/g, ' ').trim());
  }
  return names.map((name, i) => ({ name, description: descriptions[i] ?? '' }));
}

describe('sign-in pages', () => {
  test('a fresh instance sends the first visitor to set-up, which says the account becomes the administrator, then back where they asked', async () => {
    const { context, page, errors } = await openContext(browser, t.url);
    await page.goto('/starred');
    await page.waitForURL('**/signup?next=%2Fstarred');
    await page.getByText('it becomes the administrator').waitFor();
    await expectAccessible(page, 'first account set-up');
    await screenshot(page, 'signup-first-light-desktop');
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('Email').fill('ada@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/starred');
    await page.getByRole('heading', { name: 'Starred' }).waitFor();
    expect(t.server.ctx.services.accounts.findByEmail('ada@example.test')!.isAdmin).toBe(true);

    // Signing out returns to the sign-in page; sign-up is now closed and says so.
    await page.getByRole('button', { name: /^Account/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.waitForURL('**/login');
    expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(0);
    await page.goto('/signup');
    await page.getByRole('heading', { name: 'Sign-up is closed' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('sign-in refused by the rate limit says how long to wait, from the Retry-After the server sends', async () => {
    for (const [tag, opts] of [
      ['light-desktop', { viewport: DESKTOP }],
      ['dark-phone', { viewport: PHONE, dark: true, touch: true }],
    ] as const) {
      // Two attempts per window (signing the owner in took one): a server of its own, so no other test's count.
      const limited = await startTestServer({ env: { COFFER_AUTH_RATE_LIMIT: '2' } });
      try {
        const o = await seed.owner(limited);
        const { context, page, errors } = await openContext(browser, limited.url, opts);
        await page.goto('/login');
        await page.getByLabel('Email').fill(o.email);
        await page.getByLabel('Password').fill('not the password');
        const refusal = page.getByRole('alert');
        let wait = 0;
        for (let i = 0; i < 4 && !wait; i++) {
          const answer = page.waitForResponse((r) => r.url().endsWith('/api/login'));
          await page.getByRole('button', { name: 'Sign in', exact: true }).click();
          const res = await answer;
          if (res.status() === 429) wait = Number(res.headers()['retry-after']);
          else await refusal.filter({ hasText: 'Invalid credentials' }).waitFor();
        }
        expect(wait).toBeGreaterThan(0);
        await refusal.filter({ hasText: 'Too many requests' }).waitFor();
        expect(await refusal.textContent()).toBe(
          `Too many requests. Try again in ${wait < 60 ? `${wait} s` : `${Math.round(wait / 60)} min`}.`,
        );
        await screenshot(page, `signin-rate-limited-${tag}`);
        expect(errors).toEqual([]);
        await context.close();
      } finally {
        await limited.stop();
      }
    }
  });

  test("sign-in shows the server's refusal, then returns to the page that was wanted", async () => {
    const o = await seed.owner(t);
    for (const [name, opts] of [
      ['signin-light-desktop', { viewport: DESKTOP }],
      ['signin-dark-desktop', { viewport: DESKTOP, dark: true }],
      ['signin-light-phone', { viewport: PHONE, touch: true }],
      ['signin-dark-phone', { viewport: PHONE, dark: true, touch: true }],
    ] as const) {
      const { context, page } = await openContext(browser, t.url, opts);
      await page.goto('/login');
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await screenshot(page, name);
      await context.close();
    }
    const { context, page, errors } = await openContext(browser, t.url);
    await page.goto('/trash');
    await page.waitForURL('**/login?next=%2Ftrash');
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid credentials' }).waitFor();
    await expectAccessible(page, 'sign-in with an error');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/trash');
    await page.getByRole('heading', { name: 'Trash' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  test('Sign in by keyboard while the server answers: the focus stays on the button and a second Enter signs in only once', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await openContext(browser, t.url);
    await page.goto('/login');
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill(PASSWORD);
    const held = await holdRequests(page, '**/api/login');
    const signInButton = page.getByRole('button', { name: 'Sign in' });
    await signInButton.focus();
    await page.keyboard.press('Enter');
    await eventually(async () => expect(held.count()).toBe(1));
    expect(await hasFocus(signInButton)).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForTimeout(300);
    expect(held.count()).toBe(1);
    held.release();
    await page.waitForURL((u) => !u.pathname.startsWith('/login'));
    expect(errors).toEqual([]);
    await context.close();
  });

  test('`next` leading off this origin, as the browser reads it, lands home instead', async () => {
    const o = await seed.owner(t);
    const { context, page, errors } = await openContext(browser, t.url);
    await page.goto(`/login?next=${encodeURIComponent('/.//evil.example')}`);
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await eventually(() => expect(page.url()).toBe(`${t.url}/`));
    // Signed in, a sign-in page goes straight where `next` says.
    for (const next of ['/\\evil.example', '/%2e//evil.example', '/a/..//evil.example']) {
      await page.goto(`/login?next=${encodeURIComponent(next)}`);
      await eventually(() => expect(page.url()).toBe(`${t.url}/`));
    }
    expect(errors).toEqual([]);
    await context.close();
  });

  test('with two-step verification on, a second step asks for the authentication code; a backup code is accepted', async () => {
    const o = await seed.owner(t);
    const setup = await json(await o.client.post('/api/mfa/setup'));
    const verified = await json(await o.client.post('/api/mfa/verify', { code: await generate({ secret: setup.secret }) }));
    const { context, page } = await openContext(browser, t.url);
    await page.goto('/login');
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const code = page.getByLabel('Authentication code', { exact: true });
    await code.waitFor();
    expect(await textFields(page)).toEqual([{ name: 'Authentication code', description: '' }]);
    await screenshot(page, 'signin-code-light-desktop');
    await code.fill('000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid MFA code' }).waitFor();
    await code.fill(verified.backupCodes[0]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === '/');
    await page.getByRole('link', { name: 'My files' }).waitFor();
    await context.close();
  });

  test('a session that ends under the user sends them to sign in, with a notice, and back where they were', async () => {
    const o = await seed.owner(t);
    const { context, page } = await openContext(browser, t.url);
    // The session must end after the page's first requests, so that the next action is what meets it.
    const settled = Promise.all(
      ['/api/sessions/heartbeat', '/api/files/recent', '/api/user/storage', '/api/files/shared', '/api/files/events'].map((p) =>
        page.waitForResponse((r) => r.url().includes(p)),
      ),
    );
    await signIn(page, o.email, PASSWORD, '/recent');
    await page.getByRole('heading', { name: 'Recent' }).waitFor();
    await settled;
    // The stream's first connect reads the bell again: answered before the session ends, or it would be what meets the end.
    await eventStreamOpen(page);
    await apiSettled(page);
    await o.client.post('/api/logout-all');
    await page.getByRole('link', { name: 'Starred' }).click();
    await page.waitForURL('**/login?next=%2Fstarred');
    await page.getByText('Sign in to continue where you were').waitFor();
    await page.getByLabel('Email').fill(o.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/starred');
    await context.close();
  });

  test('desktop-only access: a browser gets a clear page saying so', async () => {
    const { context, page } = await openContext(browser, t.url);
    t.server.ctx.services.settings.set('desktopOnlyAccess', true);
    try {
      const res = await page.goto('/files');
      expect(res!.status()).toBe(403);
      await page.getByRole('heading', { name: 'Desktop app only' }).waitFor();
      await eventually(async () => expect(await page.textContent('body')).toContain('desktop app'));
    } finally {
      t.server.ctx.services.settings.set('desktopOnlyAccess', false);
    }
    await context.close();
  });
});

describe('a server that does not answer when the page opens', () => {
  test('a proxy error or no network at the first session check shows why and Try again, not a blank page forever', async () => {
    const o = await seed.owner(t);
    for (const [failure, reason] of [
      ['502', '502 Bad Gateway'],
      ['network', 'Coffer cannot be reached'],
    ] as const) {
      const { context, page, errors } = await signedInContext(browser, t.url, o, { viewport: PHONE, dark: true });
      // A reverse proxy's HTML error page, as while the server restarts, or no connection at all.
      await context.route(/\/api\//, (r) =>
        failure === '502'
          ? r.fulfill({ status: 502, contentType: 'text/html', body: '<h1>Bad Gateway</h1>' })
          : r.abort('connectionrefused'),
      );
      await page.goto('/files');
      await page.getByRole('heading', { name: 'Coffer is not answering' }).waitFor();
      expect(await page.getByRole('alert').textContent()).toContain(reason);
      await screenshot(page, `sign-in-unreachable-${failure}-dark-390`);
      await context.unroute(/\/api\//);
      await page.getByRole('button', { name: 'Try again' }).click();
      await page.getByRole('heading', { name: 'My files' }).waitFor();
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});

describe('first visit to a server reachable beyond loopback', () => {
  test('each field of the set-up and sign-in forms is named exactly by its visible label; hints describe it instead', async () => {
    const dataDir = tempDir();
    const lan = await startServer(loadConfig({ port: 0, host: '0.0.0.0', dataDir }, { LOG_LEVEL: 'silent', COFFER_MIN_FREE_BYTES: '16M' }));
    const url = `http://127.0.0.1:${lan.port}`;
    try {
      const { context, page } = await openContext(browser, url, { viewport: PHONE });
      await page.goto('/signup');
      await page.getByLabel('Setup code', { exact: true }).waitFor();
      expect(await textFields(page)).toEqual([
        {
          name: 'Setup code',
          description:
            'To prove you run this server, enter the setup code it printed when it started. Run coffer setup-code on the server to see it again.',
        },
        { name: 'Name', description: '' },
        { name: 'Email', description: '' },
        { name: 'Password', description: 'At least 6 characters.' },
      ]);
      const signup = await fetch(`${url}/api/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'alan@example.test', password: PASSWORD, setupCode: lan.ctx.services.setupCode.current() }),
      });
      expect(signup.status).toBe(200);
      await page.goto('/login');
      await page.getByLabel('Password', { exact: true }).waitFor();
      expect(await textFields(page)).toEqual([
        { name: 'Email', description: '' },
        { name: 'Password', description: '' },
      ]);
      await context.close();
    } finally {
      await lan.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('the set-up page asks for the setup code, refuses a wrong one, and creates the admin with the right one', async () => {
    const dataDir = tempDir();
    const lan = await startServer(loadConfig({ port: 0, host: '0.0.0.0', dataDir }, { LOG_LEVEL: 'silent', COFFER_MIN_FREE_BYTES: '16M' }));
    try {
      const code = lan.ctx.services.setupCode.current()!;
      for (const [name, opts] of [
        ['light-desktop', { viewport: DESKTOP }],
        ['dark-desktop', { viewport: DESKTOP, dark: true }],
        ['light-phone', { viewport: PHONE, touch: true }],
      ] as const) {
        const { context, page } = await openContext(browser, `http://127.0.0.1:${lan.port}`, opts);
        await page.goto('/');
        await page.waitForURL('**/signup');
        await page.getByLabel('Setup code').waitFor();
        await page.getByText('coffer setup-code').waitFor();
        await screenshot(page, `signup-setup-code-${name}`);
        await context.close();
      }
      const { context, page, errors } = await openContext(browser, `http://127.0.0.1:${lan.port}`);
      await page.goto('/signup');
      await page.getByLabel('Setup code').waitFor();
      await expectAccessible(page, 'set-up with a setup code');
      await page.getByLabel('Setup code').fill('WRNG-WRNG-WRNG');
      await page.getByLabel('Name').fill('Grace Hopper');
      await page.getByLabel('Email').fill('grace@example.test');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create account' }).click();
      const refusal = page.getByRole('alert').filter({ hasText: 'setup code is not right' });
      await refusal.waitFor();
      // The server quotes the command between back-ticks: the page shows it as code, without them.
      expect(await refusal.textContent()).toBe('That setup code is not right: check it against coffer setup-code on the server');
      expect(await refusal.locator('code').textContent()).toBe('coffer setup-code');
      await screenshot(page, 'signup-setup-code-wrong-light-desktop');
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.setViewportSize(PHONE);
      await screenshot(page, 'signup-setup-code-wrong-dark-phone');
      expect(lan.ctx.services.accounts.noLoginYet()).toBe(true);
      await page.getByLabel('Setup code').fill(code);
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL((u) => u.pathname === '/');
      expect(lan.ctx.services.accounts.findByEmail('grace@example.test')!.isAdmin).toBe(true);
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await lan.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
