import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Provider, { type Adapter } from 'oidc-provider';
import type { Clock } from '../../src/clock.ts';
import type { TestClient } from './client.ts';
import { type LogLine, memoryLogger } from './logs.ts';
import { uniqueEmail } from './seed.ts';
import { startTestServer, tempDir, type TestServer } from './server.ts';

/** What the provider says about one of its accounts (the subject is the map key). */
export interface ProviderAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
  preferred_username?: string;
  /** The `groups` claim (scope `groups`). */
  groups?: string[];
  /** Zitadel's project roles claim (scope `groups` here): role name → { organisation id: its domain }. */
  'urn:zitadel:iam:org:project:roles'?: Record<string, Record<string, string>>;
}

type TokenBody = Record<string, unknown>;

export interface TestProvider {
  issuer: string;
  /** The provider's accounts by subject; its dev login form signs in whichever subject is typed. */
  accounts: Map<string, ProviderAccount>;
  /** Registers a confidential client (code flow, PKCE) with its redirect URLs. */
  registerClient(clientId: string, secret: string, redirectUris: string[]): Promise<void>;
  /** Seconds an authorization code lives (60 by default; a test shortens it to see one expire). */
  codeTtlSeconds: number;
  /** When set, rewrites the token endpoint's next answers (a test swaps in another client's ID token). */
  rewriteTokenResponse: ((body: TokenBody) => TokenBody) | null;
  /** While true, every request gets 503, as from a provider still booting. */
  down: boolean;
  stop(): Promise<void>;
}

const TTL = { AccessToken: 600, IdToken: 600, Grant: 600, Interaction: 600, Session: 600 };

/**
 * A real OpenID Connect provider (npm `oidc-provider`) on a random loopback port, with its development
 * login and consent pages, which tests drive over HTTP as a browser would (`authorize`).
 */
export async function startTestProvider(): Promise<TestProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, ProviderAccount>();
  const state: Pick<TestProvider, 'codeTtlSeconds' | 'rewriteTokenResponse' | 'down'> = {
    codeTtlSeconds: 60,
    rewriteTokenResponse: null,
    down: false,
  };
  const provider = new Provider(issuer, {
    findAccount: (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ sub, ...account }) } : undefined;
    },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups', 'urn:zitadel:iam:org:project:roles'],
    },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    ttl: { ...TTL, AuthorizationCode: () => state.codeTtlSeconds },
  });
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path === '/token' && state.rewriteTokenResponse && ctx.status === 200)
      ctx.body = state.rewriteTokenResponse(ctx.body as TokenBody);
  });
  const handle = provider.callback();
  server.on('request', (req, res) => {
    if (!state.down) return handle(req, res);
    res.writeHead(503, { 'content-type': 'text/plain' });
    res.end('starting');
  });
  const result: TestProvider = {
    issuer,
    accounts,
    get codeTtlSeconds() {
      return state.codeTtlSeconds;
    },
    set codeTtlSeconds(v) {
      state.codeTtlSeconds = v;
    },
    get down() {
      return state.down;
    },
    set down(v) {
      state.down = v;
    },
    get rewriteTokenResponse() {
      return state.rewriteTokenResponse;
    },
    set rewriteTokenResponse(fn) {
      state.rewriteTokenResponse = fn;
    },
    async registerClient(clientId, secret, redirectUris) {
      // The provider looks clients up through its adapter (not in its published types), so one stored there is registered.
      const { adapter } = provider.Client as unknown as { adapter: Adapter };
      await adapter.upsert(
        clientId,
        {
          client_id: clientId,
          client_secret: secret,
          redirect_uris: redirectUris,
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
        3600,
      );
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return result;
}

export interface SsoServer {
  t: TestServer;
  /** What the server logged (single sign-on failures name their reason here). */
  logs: LogLine[];
}

/** A Coffer with single sign-on through `provider`: a client registered for it, its secret in env or in a file. */
export async function startSsoServer(
  provider: TestProvider,
  opts: { env?: Record<string, string>; clock?: Clock; secretInFile?: boolean; host?: string } = {},
): Promise<SsoServer> {
  const clientId = `coffer-${randomBytes(4).toString('hex')}`;
  const secret = randomBytes(16).toString('hex');
  // The secret file beside the data directory (Coffer refuses a new data directory holding files not its own); both go with the server.
  const root = tempDir();
  const dataDir = path.join(root, 'data');
  const secretEnv: Record<string, string> = {};
  if (opts.secretInFile) {
    const file = path.join(root, 'oidc-client-secret');
    fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
    secretEnv.OIDC_CLIENT_SECRET_FILE = file;
  } else secretEnv.OIDC_CLIENT_SECRET = secret;
  const logger = memoryLogger();
  const t = await startTestServer({
    clock: opts.clock,
    host: opts.host,
    logger,
    dataDir,
    env: { OIDC_ISSUER_URL: provider.issuer, OIDC_CLIENT_ID: clientId, ...secretEnv, ...opts.env },
  });
  const stop = t.stop;
  t.stop = async () => {
    await stop();
    fs.rmSync(root, { recursive: true, force: true });
  };
  await provider.registerClient(clientId, secret, [`${t.url}/api/idp/callback`]);
  return { t, logs: logger.lines };
}

/** A new account at the provider (a fresh subject, a verified unique email unless `claims` says otherwise). */
export function newPerson(provider: TestProvider, claims: Partial<ProviderAccount> = {}): string {
  const sub = `sub-${randomBytes(4).toString('hex')}`;
  provider.accounts.set(sub, { email: uniqueEmail('idp'), email_verified: true, name: 'Ida Provider', ...claims });
  return sub;
}

/** One browser's cookies at the provider (a fresh one has no provider session: login and consent again). */
class Jar {
  private readonly cookies = new Map<string, string>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return res;
  }
}

/**
 * Plays the browser at the provider: opens the authorization URL, follows its redirects, fills the
 * development login form with `subject` and approves the consent form, and returns the redirect back
 * to the client (code, state, iss) without following it.
 */
export async function authorize(
  provider: TestProvider,
  authorizationUrl: string,
  subject: string,
  opts: { cancel?: boolean } = {},
): Promise<URL> {
  const jar = new Jar();
  let res = await jar.fetch(authorizationUrl);
  for (let step = 0; step < 12; step++) {
    if (res.status >= 300 && res.status < 400) {
      const location = new URL(res.headers.get('location')!, provider.issuer);
      if (location.origin !== provider.issuer) return location;
      res = await jar.fetch(location.href);
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`provider answered ${res.status}: ${html.slice(0, 500)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`no login or consent form in the provider's page: ${html.slice(0, 500)}`);
    if (opts.cancel) {
      // The person presses the provider's Cancel link instead of signing in.
      const abort = /<a[^>]*href="([^"]*abort[^"]*)"/.exec(html)?.[1];
      if (!abort) throw new Error('no cancel link on the provider page');
      res = await jar.fetch(new URL(abort, provider.issuer).href);
      continue;
    }
    const form = new URLSearchParams({ prompt });
    if (prompt === 'login') form.set('login', subject), form.set('password', 'any');
    res = await jar.fetch(new URL(action, provider.issuer).href, {
      method: 'POST',
      body: form,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  }
  throw new Error('the provider did not redirect back within 12 steps');
}

/** Coffer's /api/idp/login for this browser: the provider URL it redirects to (its state cookie is kept). */
export async function startSignIn(coffer: TestClient, next?: string): Promise<URL> {
  const res = await coffer.get(`/api/idp/login${next ? `?next=${encodeURIComponent(next)}` : ''}`);
  if (res.status !== 302) throw new Error(`/api/idp/login answered ${res.status}: ${await res.text()}`);
  return new URL(res.headers.get('location')!, coffer.baseUrl);
}

/** Hands the provider's redirect to Coffer's callback, as the browser would; returns Coffer's answer. */
export function finishSignIn(coffer: TestClient, callback: URL): Promise<Response> {
  return coffer.get(`${callback.pathname}${callback.search}`);
}

/** The whole sign-in through the provider as `subject`; returns where Coffer sends the browser. */
export async function signInWithProvider(provider: TestProvider, coffer: TestClient, subject: string, next?: string): Promise<string> {
  const callback = await authorize(provider, (await startSignIn(coffer, next)).href, subject);
  const res = await finishSignIn(coffer, callback);
  if (res.status !== 302) throw new Error(`callback answered ${res.status}: ${await res.text()}`);
  return res.headers.get('location')!;
}
