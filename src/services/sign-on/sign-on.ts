import { createHmac, randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type * as Oidc from 'openid-client';
import type { Clock } from '../../clock.ts';
import { secretText, type IdpConfig } from '../../config.ts';
import { EMAIL } from '../../contract/accounts.ts';
import type { IdpRepo } from '../../db/repos/sign-on.ts';
import type { User } from '../../db/repos/users.ts';
import { AppError, forbidden, Messages, notFound, unauthorized } from '../../errors.ts';
import { localPath } from '../../contract/local-path.ts';
import { personName } from '../files/names.ts';
import { DISPLAY_NAME_MAX } from '../../contract/limits.ts';
import type { Logger } from '../../log.ts';
import type { PublicUser } from '../../contract/accounts.ts';
import { type AccountService, toPublicUser } from '../accounts/accounts.ts';
import { AuditActions, type AuditService, loginFields } from '../admin/audit.ts';
import type { MfaService } from '../accounts/mfa.ts';
import type { RequestInfo } from '../accounts/sessions.ts';
import type { SetupCodeService } from '../accounts/setup-code.ts';
import type { GroupService } from '../sharing/groups.ts';

export const STATE_TTL_S = 10 * 60;
export const PENDING_MFA_TTL_S = 5 * 60;
const STATE_AUDIENCE = 'coffer/idp-state';
const DISCOVERY_TIMEOUT_S = 10;
// Discovery retries after a failure: 10 s, doubling, at most every 5 minutes (the provider may boot after Coffer).
const RETRY_FIRST_MS = 10_000;
const RETRY_MAX_MS = 5 * 60_000;
const MAX_PENDING = 10_000;
// A longer `next` would take the state cookie past the 4 KiB browsers keep, and every sign-in would fail as expired.
const MAX_NEXT = 2048;

/**
 * Why a sign-in through the provider failed. The code goes into `/login?error=<code>`, where the web app
 * turns it into a sentence; the reason goes only into the log and the audit trail.
 */
export type IdpErrorCode =
  | 'not_configured'
  | 'provider_unavailable'
  | 'expired'
  | 'state_mismatch'
  | 'access_denied'
  | 'provider_error'
  | 'invalid_token'
  | 'email_missing'
  | 'email_not_verified'
  | 'email_unconfirmed'
  | 'account_linked'
  | 'signup_disabled'
  | 'setup_code_required'
  | 'account_disabled';

export class IdpFailure extends Error {
  constructor(
    readonly code: IdpErrorCode,
    readonly reason: string,
  ) {
    super(`${code}: ${reason}`);
    this.name = 'IdpFailure';
  }
}

/** What the callback leads to: a session, or (the account has MFA) a pending second step. */
export type IdpOutcome = { kind: 'session'; token: string; next: string } | { kind: 'mfa'; pendingId: string; next: string };

/** The sign-in state a browser carries between /api/idp/login and the callback (signed, 10 minutes). */
interface SignInState {
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
  next: string;
}

interface PendingMfa {
  loginId: string;
  /** The provider's groups for the account, set once the second factor is passed; null leaves them as they are. */
  groups: string[] | null;
  expiresAt: number;
}

// Loaded at the first discovery: a server without single sign-on never holds openid-client.
let loaded: typeof Oidc | null = null;
const openidClient = async (): Promise<typeof Oidc> => (loaded ??= await import('openid-client'));

/** The error and its causes in one line, for the log (openid-client wraps the precise check in `cause`). */
function explain(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error && parts.length < 4; e = e.cause) {
    const extra =
      loaded && (e instanceof loaded.ResponseBodyError || e instanceof loaded.AuthorizationResponseError)
        ? ` (${e.error}: ${e.error_description ?? ''})`
        : '';
    parts.push(`${e.message}${extra}`);
  }
  return parts.length ? parts.join(' <- ') : String(err);
}

/** Maps what openid-client threw during the code exchange and the ID token checks to a failure code. */
function classify(err: unknown, oidc: typeof Oidc): IdpFailure {
  const reason = explain(err);
  if (err instanceof oidc.AuthorizationResponseError)
    return new IdpFailure(err.error === 'access_denied' ? 'access_denied' : 'provider_error', reason);
  // An expired, used or foreign code: the provider refuses it at the token endpoint.
  if (err instanceof oidc.ResponseBodyError) return new IdpFailure(err.error === 'invalid_grant' ? 'expired' : 'provider_error', reason);
  if (err instanceof TypeError || (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))) {
    return new IdpFailure('provider_unavailable', reason);
  }
  const code = (err as { code?: string }).code;
  if (code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || code === 'OAUTH_RESPONSE_IS_NOT_JSON') return new IdpFailure('provider_error', reason);
  // Issuer, audience, nonce, signature, expiry: the ID token failed a check.
  return new IdpFailure('invalid_token', reason);
}

const isTrue = (v: unknown) => v === true || v === 'true';

/** Zitadel names a person's project roles as the keys of an object, each role's value an object of organisations. */
function rolesObject(value: unknown): string[] | null {
  if (typeof value !== 'object' || value === null) return null;
  const entries = Object.entries(value);
  return entries.every(([, v]) => typeof v === 'object' && v !== null && !Array.isArray(v)) ? entries.map(([k]) => k) : null;
}

/**
 * The group names of a groups claim: a list of names, one name, or Zitadel's roles object; absent, none. Any
 * other value is unreadable (null): memberships are then left as they are rather than all taken away.
 */
function groupNames(value: unknown): string[] | null {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : typeof value === 'string' ? [value] : rolesObject(value);
  // Keycloak names groups by path ("/Design") when its mapper's "Full group path" is on.
  return list && list.filter((v): v is string => typeof v === 'string').map((v) => v.replace(/^\//, ''));
}

export interface IdpDeps {
  config: IdpConfig | null;
  clock: Clock;
  log: Logger;
  jwtSecret: Uint8Array;
  identities: IdpRepo;
  accounts: AccountService;
  mfa: MfaService;
  audit: AuditService;
  setupCode: SetupCodeService;
  groups: Pick<GroupService, 'syncFromIdp'>;
}

/**
 * Sign-in through any OpenID Connect provider: discovery (retried until the provider answers), the
 * authorization code flow with PKCE, state and nonce (openid-client validates the ID token), the account
 * rules (link by issuer + subject; by email only when the provider verified it and the admin chose the
 * account's address; create when sign-up is open or OIDC_AUTO_CREATE), and the second factor for accounts
 * with MFA.
 */
export class IdpService {
  private client: Oidc.Configuration | null = null;
  private discovering: Promise<Oidc.Configuration> | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private retryDelay = RETRY_FIRST_MS;
  private secret: string | null = null;
  private readonly pending = new Map<string, PendingMfa>();
  private readonly stateKey: Uint8Array;

  constructor(private readonly d: IdpDeps) {
    // Its own key: a session token can never pass as sign-in state, nor the other way round.
    this.stateKey = createHmac('sha256', d.jwtSecret).update(STATE_AUDIENCE).digest();
  }

  get enabled(): boolean {
    return this.d.config !== null;
  }

  /** What a sign-in page shows before anyone is signed in. */
  info(): { enabled: boolean; name: string | null } {
    return { enabled: this.enabled, name: this.d.config?.providerName ?? null };
  }

  /** Server start: reads the client secret (a StartupError if it cannot) and starts discovery without waiting for it. */
  start(): void {
    const config = this.d.config;
    if (!config) return;
    this.secret = secretText(config.clientSecret, 'OIDC_CLIENT_SECRET_FILE');
    this.discover().catch(() => {});
  }

  stop(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  /** The discovered provider; one attempt at a time, and a failed one schedules the next. */
  private discover(): Promise<Oidc.Configuration> {
    if (this.client) return Promise.resolve(this.client);
    this.discovering ??= this.fetchConfiguration().then(
      (client) => {
        this.client = client;
        this.discovering = null;
        this.stop();
        this.d.log.info('single sign-on provider discovered', { issuer: client.serverMetadata().issuer });
        return client;
      },
      (err: unknown) => {
        this.discovering = null;
        this.d.log.warn('single sign-on provider discovery failed; retrying later', {
          issuer: this.d.config!.issuerUrl,
          reason: explain(err),
          retryInSeconds: this.retryDelay / 1000,
        });
        if (!this.retryTimer) {
          this.retryTimer = setTimeout(() => {
            this.retryTimer = null;
            this.discover().catch(() => {});
          }, this.retryDelay);
          this.retryTimer.unref?.();
          this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MAX_MS);
        }
        throw err;
      },
    );
    return this.discovering;
  }

  private async fetchConfiguration(): Promise<Oidc.Configuration> {
    const config = this.d.config!;
    const secret = this.secret ?? secretText(config.clientSecret, 'OIDC_CLIENT_SECRET_FILE');
    const oidc = await openidClient();
    const insecure = new URL(config.issuerUrl).protocol === 'http:';
    const found = await oidc.discovery(new URL(config.issuerUrl), config.clientId, secret, undefined, {
      timeout: DISCOVERY_TIMEOUT_S,
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    const metadata = found.serverMetadata();
    // client_secret_basic is OpenID Connect's default; some providers (Authelia) accept only what the client registered.
    const methods = metadata.token_endpoint_auth_methods_supported;
    const auth =
      methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')
        ? oidc.ClientSecretPost(secret)
        : oidc.ClientSecretBasic(secret);
    const client = new oidc.Configuration(metadata, config.clientId, secret, auth);
    if (insecure) oidc.allowInsecureRequests(client);
    client.timeout = DISCOVERY_TIMEOUT_S;
    return client;
  }

  private async ready(): Promise<Oidc.Configuration> {
    if (!this.d.config) throw new IdpFailure('not_configured', 'single sign-on is not configured (OIDC_ISSUER_URL is not set)');
    try {
      return await this.discover();
    } catch (err) {
      throw new IdpFailure('provider_unavailable', `discovery of ${this.d.config.issuerUrl} failed: ${explain(err)}`);
    }
  }

  /**
   * Starts a sign-in: the provider's authorization URL (code flow, PKCE S256, state, nonce) and the signed
   * state the browser keeps in a cookie until the callback. `origin` builds the default redirect URL.
   */
  async begin(input: { origin: string; next: string | null }): Promise<{ url: string; state: string }> {
    try {
      const client = await this.ready();
      const oidc = await openidClient();
      const config = this.d.config!;
      const s: SignInState = {
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        verifier: oidc.randomPKCECodeVerifier(),
        redirectUri: config.redirectUrl ?? `${input.origin}/api/idp/callback`,
        next: localPath(input.next),
      };
      if (s.next.length > MAX_NEXT) s.next = '/';
      const url = oidc.buildAuthorizationUrl(client, {
        redirect_uri: s.redirectUri,
        scope: config.scopes,
        state: s.state,
        nonce: s.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(s.verifier),
        code_challenge_method: 'S256',
      });
      const now = Math.floor(this.d.clock.now() / 1000);
      const state = await new SignJWT({ ...s })
        .setProtectedHeader({ alg: 'HS256' })
        .setAudience(STATE_AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(now + STATE_TTL_S)
        .sign(this.stateKey);
      return { url: url.href, state };
    } catch (err) {
      throw this.failed(err instanceof IdpFailure ? err : new IdpFailure('provider_error', explain(err)), null);
    }
  }

  /**
   * The provider's redirect back: checks the state against the browser's cookie, exchanges the code
   * (openid-client checks PKCE and the ID token's issuer, audience, nonce, signature and expiry), then
   * finds, links or creates the account. Every failure is an IdpFailure, logged and audited here.
   */
  async complete(input: { state: string | null; params: URLSearchParams; info: RequestInfo }): Promise<IdpOutcome> {
    try {
      return await this.completeChecked(input);
    } catch (err) {
      throw this.failed(err instanceof IdpFailure ? err : new IdpFailure('provider_error', explain(err)), input.info);
    }
  }

  private async completeChecked(input: { state: string | null; params: URLSearchParams; info: RequestInfo }): Promise<IdpOutcome> {
    const s = await this.readState(input.state);
    const { params } = input;
    if (params.get('state') !== s.state)
      throw new IdpFailure('state_mismatch', 'the state parameter differs from the one this browser started with');
    const error = params.get('error');
    if (error) {
      const reason = `the provider answered error=${error}${params.get('error_description') ? ` (${params.get('error_description')})` : ''}`;
      throw new IdpFailure(error === 'access_denied' ? 'access_denied' : 'provider_error', reason);
    }
    const client = await this.ready();
    const oidc = await openidClient();
    const current = new URL(s.redirectUri);
    for (const [k, v] of params) current.searchParams.append(k, v);
    let tokens: Awaited<ReturnType<typeof Oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(client, current, {
        pkceCodeVerifier: s.verifier,
        expectedState: s.state,
        expectedNonce: s.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw classify(err, oidc);
    }
    const claims = tokens.claims()!;
    let profile: Record<string, unknown> = claims;
    // Providers that follow the spec strictly (oidc-provider, Authelia) put email, name and groups only in userinfo.
    const groupsClaim = this.d.config!.groupsClaim;
    const wantsUserinfo = typeof claims.email !== 'string' || (groupsClaim !== null && !(groupsClaim in claims));
    if (wantsUserinfo && client.serverMetadata().userinfo_endpoint) {
      try {
        profile = { ...claims, ...(await oidc.fetchUserInfo(client, tokens.access_token, claims.sub)) };
      } catch (err) {
        throw classify(err, oidc);
      }
    }
    const issuer = client.serverMetadata().issuer;
    const user = await this.accountFor(issuer, claims.sub, profile, input.info.ip);
    const row = this.d.accounts.findById(user.id)!;
    if (row.disabledAt !== null) throw new IdpFailure('account_disabled', `the account ${row.email} is disabled`);
    // Groups are of owner accounts: a sub-user's claim says nothing about its owner's.
    let groups: string[] | null = null;
    if (groupsClaim !== null && row.parentUserId === null) {
      groups = groupNames(profile[groupsClaim]);
      if (!groups)
        this.d.log.warn('single sign-on groups claim is not a list of names; memberships left as they are', {
          claim: groupsClaim,
          email: row.email,
        });
    }
    if (row.mfaEnabled) {
      // The memberships wait for the second factor: the provider alone does not change what the account reaches.
      const pendingId = this.addPending({ loginId: row.id, groups, expiresAt: this.d.clock.now() + PENDING_MFA_TTL_S * 1000 });
      return { kind: 'mfa', pendingId, next: s.next };
    }
    this.syncGroups(row, groups, input.info.ip);
    return { kind: 'session', token: await this.d.accounts.startSession(row, input.info, 'idp'), next: s.next };
  }

  private async readState(token: string | null): Promise<SignInState> {
    if (!token)
      throw new IdpFailure('expired', 'no sign-in state cookie: it expired (10 minutes) or the sign-in started in another browser');
    try {
      const { payload } = await jwtVerify(token, this.stateKey, {
        audience: STATE_AUDIENCE,
        algorithms: ['HS256'],
        currentDate: new Date(this.d.clock.now()),
      });
      return payload as unknown as SignInState;
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_JWT_EXPIRED')
        throw new IdpFailure('expired', 'the sign-in state cookie expired (10 minutes)');
      throw new IdpFailure('state_mismatch', `the sign-in state cookie is not valid: ${explain(err)}`);
    }
  }

  /**
   * Link by issuer + subject; else by email when the provider verified it and the admin chose the account's
   * address; else a new account when allowed.
   */
  private async accountFor(issuer: string, subject: string, claims: Record<string, unknown>, ip: string): Promise<User> {
    const linked = this.d.identities.userOf(issuer, subject);
    if (linked) {
      this.d.identities.touch(issuer, subject, this.d.clock.now());
      return this.d.accounts.findById(linked)!;
    }
    const email = typeof claims.email === 'string' ? claims.email.trim() : '';
    if (!EMAIL.safeParse(email).success) {
      throw new IdpFailure('email_missing', `subject ${subject} has no usable email claim (${email ? 'not an email address' : 'none'})`);
    }
    const existing = this.d.accounts.findByEmail(email);
    if (existing) {
      if (!isTrue(claims.email_verified)) {
        throw new IdpFailure(
          'email_not_verified',
          `subject ${subject} claims ${email}, which an account has, but the provider has not verified it`,
        );
      }
      // Whoever signs up, or an owner naming a sub-user, can type anyone's address: only one the admin chose is trusted.
      if (!existing.emailTrusted) {
        throw new IdpFailure(
          'email_unconfirmed',
          `subject ${subject} claims ${email}, which an account has, but that account's address was chosen at sign-up or by its owner, not by the admin`,
        );
      }
      if (this.d.identities.hasIssuer(existing.id, issuer)) {
        throw new IdpFailure('account_linked', `the account of ${email} is already linked to another identity at ${issuer}`);
      }
      // Refused before the link: a disabled account gains no new way in while it is disabled.
      if (existing.disabledAt !== null) throw new IdpFailure('account_disabled', `the account ${email} is disabled`);
      this.d.identities.link({ issuer, subject, userId: existing.id, createdAt: this.d.clock.now() });
      this.d.audit.record({
        action: AuditActions.idpLink,
        ...loginFields(existing),
        targetType: 'user',
        targetId: existing.id,
        details: { issuer, subject },
      });
      return existing;
    }
    // The first account of a server reachable beyond loopback is made with the setup code, never through the provider.
    if (this.d.setupCode.required(ip)) {
      throw new IdpFailure('setup_code_required', 'no account exists yet: the first one is made on the set-up page with the setup code');
    }
    if (!this.d.accounts.signupOpen() && !this.d.config!.autoCreate) {
      throw new IdpFailure('signup_disabled', `no account is linked to subject ${subject} or has ${email}, and sign-up is closed`);
    }
    // Cut between whole characters (slicing could keep half an emoji, stored as U+FFFD); a claim with nothing visible is skipped.
    const name =
      [claims.name, claims.preferred_username]
        .map((v) => (typeof v === 'string' ? personName(v, DISPLAY_NAME_MAX) : ''))
        .find((v) => v !== '') ?? '';
    let row: User;
    try {
      row = await this.d.accounts.createLogin({
        email,
        password: null,
        name,
        identity: { issuer, subject },
        emailTrusted: isTrue(claims.email_verified),
      });
    } catch (err) {
      // Two callbacks of one person racing: the other one created the account, which now has the link.
      const now = this.d.identities.userOf(issuer, subject);
      if (err instanceof AppError && err.status === 409 && now) return this.d.accounts.findById(now)!;
      throw err;
    }
    this.d.audit.record({
      action: AuditActions.signup,
      loginId: row.id,
      accountId: row.id,
      email: row.email,
      actor: 'login',
      targetType: 'user',
      targetId: row.id,
      details: { method: 'idp', admin: row.isAdmin, issuer },
    });
    return row;
  }

  private syncGroups(row: User, names: string[] | null, ip: string): void {
    if (!names) return;
    this.d.groups.syncFromIdp({ loginId: row.id, accountId: row.id, email: row.email, ip }, names, this.d.config!.groupsCreate);
  }

  private addPending(entry: PendingMfa): string {
    const now = this.d.clock.now();
    for (const [id, p] of this.pending) if (p.expiresAt <= now) this.pending.delete(id);
    // Oldest first: a flood of half-finished sign-ins cannot grow this without bound.
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    this.pending.set(id, entry);
    return id;
  }

  private livePending(pendingId: string | null): PendingMfa | null {
    const p = pendingId ? this.pending.get(pendingId) : undefined;
    if (!p) return null;
    if (p.expiresAt <= this.d.clock.now()) {
      this.pending.delete(pendingId!);
      return null;
    }
    return p;
  }

  /** The email of the login a pending second step belongs to: its attempts count with that account's password sign-in. */
  pendingEmail(pendingId: string | null): string | null {
    const p = this.livePending(pendingId);
    return p ? (this.d.accounts.findById(p.loginId)?.email ?? null) : null;
  }

  /**
   * The second step after the provider: a TOTP or backup code (the same checks and replay rules as
   * password sign-in). A wrong code may be retried until the pending step expires; the first right one
   * consumes it and starts the session.
   */
  async verifyMfa(pendingId: string | null, code: string, info: RequestInfo): Promise<{ user: PublicUser; token: string }> {
    if (!this.d.config) throw notFound(Messages.idpNotConfigured);
    const p = this.livePending(pendingId);
    if (!p) throw unauthorized(Messages.idpPendingExpired);
    const row = this.d.accounts.findById(p.loginId);
    if (!row) throw unauthorized(Messages.idpPendingExpired);
    if (row.disabledAt !== null) throw forbidden(Messages.accountDisabled);
    if (!(await this.d.mfa.checkCode(row.id, code))) {
      this.d.audit.record({
        action: AuditActions.signIn,
        status: 'failure',
        ...loginFields(row),
        ip: info.ip,
        details: { method: 'idp', reason: 'invalid_mfa_code' },
      });
      throw unauthorized(Messages.invalidMfaCode);
    }
    // Two right codes racing: only the one that removes the pending step signs in.
    if (!this.pending.delete(pendingId!)) throw unauthorized(Messages.idpPendingExpired);
    this.syncGroups(row, p.groups, info.ip);
    return { user: toPublicUser(row), token: await this.d.accounts.startSession(row, info, 'idp') };
  }

  /** Logs and audits a failed sign-in with its reason; the caller sends the browser to /login?error=<code>. */
  private failed(failure: IdpFailure, info: RequestInfo | null): IdpFailure {
    this.d.log.warn('single sign-on failed', { code: failure.code, reason: failure.reason });
    this.d.audit.record({
      action: AuditActions.signIn,
      status: 'failure',
      ip: info?.ip ?? null,
      details: { method: 'idp', reason: failure.code },
    });
    return failure;
  }
}
