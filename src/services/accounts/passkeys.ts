import type { PasskeyEntry } from '../../contract/passkeys.ts';
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { Clock } from '../../clock.ts';
import type { PasskeysRepo, Passkey } from '../../db/repos/passkeys.ts';
import type { User, UsersRepo } from '../../db/repos/users.ts';
import { AppError, badRequest, Messages, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { limitAddress } from '../../lib/ip.ts';
import { type Actor, AuditActions, type AuditService, actorFields, loginFields } from '../admin/audit.ts';
import type { Confirmation, IdentityCheck } from './identity-check.ts';
import type { MfaService } from './mfa.ts';

// Loaded at the first passkey ceremony: most servers never hold a passkey, and the library weighs on idle memory.
const webauthn = () => import('@simplewebauthn/server');
import type { Principal } from '../identity/principal.ts';
import type { RequestInfo } from './sessions.ts';

/** A sign-in assertion as the browser sends it (`navigator.credentials.get`, JSON-encoded). */
export type PasskeyResponse = AuthenticationResponseJSON;

/** Where passkeys are bound: the host name browsers check (RP ID) and the origin they report. */
export interface RelyingParty {
  id: string;
  origin: string;
}

const view = (row: Passkey): PasskeyEntry => ({
  id: row.id,
  name: row.name,
  createdAt: new Date(row.createdAt).toISOString(),
  lastUsedAt: row.lastUsedAt === null ? null : new Date(row.lastUsedAt).toISOString(),
  backedUp: row.backedUp,
});

const CEREMONY_TIMEOUT_MS = 5 * 60_000;
/** Ceremonies in flight at once, whoever started them: the map of challenges never grows past it. */
const MAX_PENDING = 10_000;
/** Ceremonies in flight from one client address (or for one login): past it, that client's own oldest goes. */
const MAX_PENDING_PER_CLIENT = 64;
const MAX_PASSKEYS = 50;
const MAX_CREDENTIAL_ID_BYTES = 1023;

const PasskeyMessages = {
  expired: 'This passkey request has expired or was already used. Start again.',
  unknown: 'This passkey is not registered on this Coffer (it may have been removed). Sign in with your password instead.',
  otherLogin: 'This passkey belongs to another account. Use a passkey of the account you are signing in to, or your code.',
  userMismatch:
    'This passkey answer names another account than the one the passkey was added to. Remove the passkey from your device and add it again, or sign in another way.',
  notVerified: 'The passkey could not be verified. Try again, or sign in another way.',
  noUserVerification:
    'This passkey did not confirm it is you (no fingerprint, face or PIN), so it cannot sign in on its own. Sign in with your password and use it as the second step.',
  replayed:
    "This passkey's signature counter did not move forward: the answer was replayed, or the key was copied. Sign in another way, and remove the passkey if you do not recognise this.",
  tooMany: `A login can hold at most ${MAX_PASSKEYS} passkeys. Remove one first.`,
  busy: 'Too many passkey sign-ins are under way on this Coffer. Try again in a few minutes, or sign in with your password.',
  alreadyAdded: 'This passkey is already registered.',
  passwordNeeded: 'Enter your password to add a passkey: a passkey signs in on its own, so Coffer checks it is you first.',
  codeNeeded:
    'Enter a code from your authenticator app, or a backup code, to add a passkey: a passkey signs in on its own, so Coffer checks it is you first.',
  noProof:
    'This account has no Coffer password and no two-factor authentication, so Coffer cannot check it is you before adding a passkey. Turn on two-factor authentication first.',
  insecureOrigin: (origin: string) =>
    `Passkeys need HTTPS, or http://localhost: browsers refuse them at ${origin}. Open Coffer at its https:// address (see docs/accounts.md, "Passkeys").`,
} as const;

type Ceremony = { kind: 'register'; loginId: string } | { kind: 'sign-in' };
type Pending = Ceremony & { challenge: string; rp: RelyingParty; expiresAt: number; client: string };

/** An IPv4 or IPv6 address: browsers refuse an address as a relying party id. */
const isAddress = (host: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');

/**
 * The relying party of an origin: its host name, when browsers accept passkeys there (https, or
 * http://localhost); else 400 saying what to do.
 */
export function relyingPartyOf(origin: string): RelyingParty {
  const url = URL.canParse(origin) ? new URL(origin) : null;
  const host = url?.hostname.replace(/^\[|\]$/g, '') ?? '';
  const local = host === 'localhost' || host.endsWith('.localhost');
  if (!url || isAddress(host) || (url.protocol !== 'https:' && !local)) throw badRequest(PasskeyMessages.insecureOrigin(origin));
  return { id: host, origin: url.origin };
}

export interface PasskeyDeps {
  clock: Clock;
  repo: PasskeysRepo;
  users: UsersRepo;
  mfa: MfaService;
  identity: IdentityCheck;
  audit: AuditService;
}

/**
 * Passkeys (WebAuthn): adding and removing a login's own, and checking a sign-in assertion, on its own
 * (discoverable, so no email) or as the second step after a password. Challenges live in memory for
 * five minutes and are spent by the first answer that names them, so an answer is never accepted twice.
 */
export class PasskeyService {
  private readonly pending = new Map<string, Pending>();
  /** Each client's challenges in `pending`, oldest first: a flood from one address only ever evicts its own. */
  private readonly byClient = new Map<string, string[]>();

  constructor(private readonly d: PasskeyDeps) {}

  list(principal: Principal): PasskeyEntry[] {
    return this.d.repo.list(principal.loginId).map(view);
  }

  /** Whether the login can use a passkey as its second step. */
  has(loginId: string): boolean {
    return this.d.repo.count(loginId) > 0;
  }

  /** The email of the login a credential belongs to (sign-in attempts with it share that login's limit). */
  emailOf(credentialId: string): string | null {
    const row = this.d.repo.byCredentialId(credentialId);
    return row ? (this.d.users.byId(row.userId)?.email ?? null) : null;
  }

  /** Starts adding a passkey, once the login has confirmed it is itself: a session alone is not enough. */
  async registrationOptions(principal: Principal, rp: RelyingParty, proof: Confirmation): Promise<PublicKeyCredentialCreationOptionsJSON> {
    await this.d.identity.confirm(principal, proof, {
      action: AuditActions.passkeyAdd,
      recentSignIn: false,
      passwordNeeded: PasskeyMessages.passwordNeeded,
      codeNeeded: PasskeyMessages.codeNeeded,
      noProof: PasskeyMessages.noProof,
    });
    const existing = this.d.repo.list(principal.loginId);
    if (existing.length >= MAX_PASSKEYS) throw badRequest(PasskeyMessages.tooMany);
    const { generateRegistrationOptions } = await webauthn();
    const options = await generateRegistrationOptions({
      rpName: 'Coffer',
      rpID: rp.id,
      userID: new TextEncoder().encode(principal.loginId),
      userName: principal.email,
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: transportsOf(p) })),
      // Discoverable, so the sign-in page needs no email.
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      timeout: CEREMONY_TIMEOUT_MS,
    });
    this.hold(options.challenge, rp, { kind: 'register', loginId: principal.loginId }, `login:${principal.loginId}`);
    return options;
  }

  async register(principal: Principal, input: { name?: string; response: RegistrationResponseJSON }): Promise<PasskeyEntry> {
    const pending = this.take(input.response.response.clientDataJSON);
    if (pending?.kind !== 'register' || pending.loginId !== principal.loginId) throw badRequest(PasskeyMessages.expired);
    let info: Awaited<ReturnType<typeof verifyRegistrationResponse>>['registrationInfo'];
    try {
      const { verifyRegistrationResponse } = await webauthn();
      const result = await verifyRegistrationResponse({
        response: input.response,
        expectedChallenge: pending.challenge,
        expectedOrigin: pending.rp.origin,
        expectedRPID: pending.rp.id,
        requireUserVerification: false,
      });
      info = result.verified ? result.registrationInfo : undefined;
    } catch {
      info = undefined;
    }
    // The id the answer names must be the one the authenticator attested, of at most WebAuthn's 1,023 bytes (§ 7.1):
    // else a sign-in could never name it, and it would ride, however long, in every later options answer.
    const id = info?.credential.id;
    if (!info || id !== input.response.id || Buffer.byteLength(id, 'base64url') > MAX_CREDENTIAL_ID_BYTES)
      throw badRequest(PasskeyMessages.notVerified);
    if (this.d.repo.byCredentialId(info.credential.id)) throw badRequest(PasskeyMessages.alreadyAdded);
    const count = this.d.repo.count(principal.loginId);
    const row: Passkey = {
      id: newId(),
      userId: principal.loginId,
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: JSON.stringify(input.response.response.transports ?? []),
      name: input.name?.trim() || `Passkey ${count + 1}`,
      backedUp: info.credentialBackedUp,
      createdAt: this.d.clock.now(),
      lastUsedAt: null,
    };
    // The owner may delete this sub-user while its answer was verified, and other ceremonies begun together may finish first.
    const added = this.d.repo.insert(row, MAX_PASSKEYS);
    if (added === 'gone') throw notFound(Messages.loginGone);
    if (added === 'full') throw badRequest(PasskeyMessages.tooMany);
    this.d.audit.record({
      action: AuditActions.passkeyAdd,
      principal,
      targetType: 'passkey',
      targetId: row.id,
      details: { name: row.name, backedUp: row.backedUp },
    });
    return view(row);
  }

  remove(principal: Principal, id: string): { message: string } {
    const row = this.d.repo.delete(principal.loginId, id);
    // Another login's passkey is as absent as one that never existed.
    if (!row) throw notFound('Passkey not found');
    this.d.audit.record({
      action: AuditActions.passkeyRemove,
      principal,
      targetType: 'passkey',
      targetId: row.id,
      details: { name: row.name },
    });
    return { message: 'Passkey removed' };
  }

  /** Removes every passkey of a login (the CLI's `users reset-mfa`, for a lost device); `by` is audited. */
  removeAll(loginId: string, by: Actor): number {
    const removed = this.d.repo.deleteAll(loginId);
    if (removed > 0)
      this.d.audit.record({
        action: AuditActions.passkeyRemove,
        ...actorFields(by),
        targetType: 'user',
        targetId: loginId,
        details: { removed },
      });
    return removed;
  }

  /**
   * Options for a sign-in from client address `ip`: no allowed list, so the browser offers every passkey it
   * holds for this host. 503 while the instance already holds as many ceremonies as it keeps.
   */
  async signInOptions(rp: RelyingParty, ip: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const { generateAuthenticationOptions } = await webauthn();
    const options = await generateAuthenticationOptions({ rpID: rp.id, userVerification: 'preferred', timeout: CEREMONY_TIMEOUT_MS });
    this.hold(options.challenge, rp, { kind: 'sign-in' }, `ip:${limitAddress(ip)}`);
    return options;
  }

  /**
   * Checks a sign-in assertion and records the use; the login it signs in. Alone (`forLogin` unset) the
   * passkey must have verified its user (fingerprint, face or PIN): it stands for both factors. After a
   * password (`forLogin`), it must be one of that login's. Failures are audited and 401.
   */
  async verifySignIn(response: AuthenticationResponseJSON, info: RequestInfo, forLogin?: User): Promise<User> {
    const pending = this.take(response.response.clientDataJSON);
    const row = this.d.repo.byCredentialId(response.id);
    const login = row ? this.d.users.byId(row.userId) : null;
    const fail = (reason: string, message: string, status = 401): never => {
      const who = forLogin ?? login;
      this.d.audit.record({
        action: AuditActions.passkeyUse,
        status: status === 403 ? 'denied' : 'failure',
        ...loginFields(who),
        ip: info.ip,
        requestId: info.requestId,
        targetType: 'passkey',
        targetId: row?.id ?? null,
        details: { reason, secondFactor: Boolean(forLogin) },
      });
      throw new AppError(status, message);
    };
    if (pending?.kind !== 'sign-in') return fail('expired_challenge', PasskeyMessages.expired, 400);
    if (!row || !login) return fail('unknown_passkey', PasskeyMessages.unknown);
    // WebAuthn § 7.2: the user handle the authenticator returns must be the login the credential was added for.
    const handle = response.response.userHandle;
    if (handle && Buffer.from(handle, 'base64url').toString('utf8') !== row.userId)
      return fail('user_handle_mismatch', PasskeyMessages.userMismatch);
    if (forLogin && row.userId !== forLogin.id) return fail('other_login', PasskeyMessages.otherLogin);
    let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
    try {
      const { verifyAuthenticationResponse } = await webauthn();
      result = await verifyAuthenticationResponse({
        response,
        expectedChallenge: pending.challenge,
        expectedOrigin: pending.rp.origin,
        expectedRPID: pending.rp.id,
        credential: {
          id: row.credentialId,
          publicKey: Buffer.from(row.publicKey, 'base64url'),
          counter: row.counter,
          transports: transportsOf(row),
        },
        requireUserVerification: false,
      });
    } catch (err) {
      if (/counter value/i.test((err as Error).message)) return fail('counter_not_increased', PasskeyMessages.replayed);
      return fail('invalid_assertion', PasskeyMessages.notVerified);
    }
    if (!result.verified) return fail('invalid_assertion', PasskeyMessages.notVerified);
    if (!forLogin && !result.authenticationInfo.userVerified) return fail('no_user_verification', PasskeyMessages.noUserVerification);
    if (login.disabledAt !== null) return fail('account_disabled', Messages.accountDisabled, 403);
    // Compare-and-set on the counter: of two racing uses of one answer, one wins.
    if (!this.d.repo.recordUse(row.id, row.counter, result.authenticationInfo.newCounter, this.d.clock.now())) {
      return fail('counter_not_increased', PasskeyMessages.replayed);
    }
    this.d.audit.record({
      action: AuditActions.passkeyUse,
      ...loginFields(login),
      ip: info.ip,
      requestId: info.requestId,
      actor: 'login',
      targetType: 'passkey',
      targetId: row.id,
      details: { name: row.name, secondFactor: Boolean(forLogin) },
    });
    return login;
  }

  private hold(challenge: string, rp: RelyingParty, ceremony: Ceremony, client: string): void {
    const now = this.d.clock.now();
    const mine = this.byClient.get(client) ?? [];
    if (mine.length >= MAX_PENDING_PER_CLIENT) this.drop(mine[0]!);
    if (this.pending.size >= MAX_PENDING) {
      for (const [key, value] of this.pending) if (value.expiresAt <= now) this.drop(key);
      // Still full: refused rather than evicting ceremonies other clients have started.
      if (this.pending.size >= MAX_PENDING) throw new AppError(503, PasskeyMessages.busy);
    }
    this.pending.set(challenge, { ...ceremony, challenge, rp, client, expiresAt: now + CEREMONY_TIMEOUT_MS });
    this.byClient.set(client, [...(this.byClient.get(client) ?? []), challenge]);
  }

  /** Forgets a ceremony, in both maps. */
  private drop(challenge: string): void {
    const entry = this.pending.get(challenge);
    if (!entry) return;
    this.pending.delete(challenge);
    const rest = (this.byClient.get(entry.client) ?? []).filter((c) => c !== challenge);
    if (rest.length > 0) this.byClient.set(entry.client, rest);
    else this.byClient.delete(entry.client);
  }

  /** The ceremony an answer's clientDataJSON names, spent whatever happens next; null when unknown or expired. */
  private take(clientDataJSON: string): Pending | null {
    let challenge: unknown;
    try {
      challenge = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))?.challenge;
    } catch {
      return null;
    }
    if (typeof challenge !== 'string') return null;
    const entry = this.pending.get(challenge);
    if (!entry) return null;
    this.drop(challenge);
    return entry.expiresAt > this.d.clock.now() ? entry : null;
  }
}

function transportsOf(row: Passkey): AuthenticatorTransport[] {
  try {
    const parsed: unknown = JSON.parse(row.transports);
    return Array.isArray(parsed) ? (parsed as AuthenticatorTransport[]) : [];
  } catch {
    return [];
  }
}
