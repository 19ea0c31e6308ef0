import type { Confirmation, ConfirmationPurpose, IdentityCheck } from './identity-check.ts';
import type { PasswordTries } from './password-tries.ts';
import type { AppPassword } from '../../contract/accounts.ts';
import { createHash, randomInt } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { AppPassword as AppPasswordRow, AppPasswordsRepo } from '../../db/repos/app-passwords.ts';
import type { DatabaseRepo } from '../../db/repos/database.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { User, UsersRepo } from '../../db/repos/users.ts';
import { AppError, forbidden, Messages, notFound, validationFailed } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { emailKey } from './email.ts';
import { AuditActions, type AuditService, loginFields } from '../admin/audit.ts';
import { recordUnlessDiskRefuses } from '../files/disk-space.ts';
import { PageCache } from '../files/page-cache.ts';
import type { DavLockService } from '../dav/dav-locks.ts';
import { verifyAgainstDummy, verifyPassword } from '../identity/passwords.ts';
import { parsePermissions, type Principal } from '../identity/principal.ts';
import type { SettingsService } from '../admin/settings.ts';

const MAX_PER_LOGIN = 50;
const MAX_NAME = 100;
const tooMany = () => new AppError(409, `You have ${MAX_PER_LOGIN} app passwords; revoke one you no longer use first`);
// Lower-case letters and digits without 0, 1, l and o: typed on a phone, read aloud, never confused.
const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
const GROUPS = 5;
const GROUP_LENGTH = 5;
const TOUCH_INTERVAL_MS = 60_000;
// An account password checked once is trusted this long (argon2 on every WebDAV request would cost 60-90 ms each).
const ACCOUNT_PASSWORD_CACHE_MS = 5 * 60_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** 25 characters from a 32-letter alphabet in five groups: 125 random bits. */
function newSecret(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i++) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return groups.join('-');
}

const DAV_REALM = 'Coffer WebDAV';

/** The session id of a WebDAV request signed in with an app password: what its locks are taken with. */
const APP_PASSWORD_SESSION = 'app-password:';
const credentialOf = (id: string) => `${APP_PASSWORD_SESSION}${id}`;
/** A long-lived connection's credential when it signed in with the account password: that, at the login's token version. */
const ACCOUNT_PASSWORD = 'account-password@';

/** WebDAV's refusal of an email and secret that do not sign in (an unknown email, a wrong or revoked secret alike). */
export const WRONG_DAV_SECRET = 'Wrong email or app password. Make an app password in Settings → App passwords.';

/** 401 for WebDAV, with the challenge that makes a client ask for a password. */
export function davUnauthorized(message: string): AppError {
  return new AppError(401, message, undefined, { 'WWW-Authenticate': `Basic realm="${DAV_REALM}", charset="UTF-8"` });
}

export interface AppPasswordDeps {
  clock: Clock;
  transactions: Transactions;
  repo: AppPasswordsRepo;
  users: UsersRepo;
  settings: SettingsService;
  audit: AuditService;
  davLocks: DavLockService;
  database: Pick<DatabaseRepo, 'authVersion'>;
  identity: IdentityCheck;
  passwordTries: PasswordTries;
}

const CONFIRM_APP_PASSWORD: ConfirmationPurpose = {
  action: AuditActions.appPasswordCreate,
  recentSignIn: true,
  passwordNeeded:
    'Enter your password to make an app password: it signs in to your files for as long as it exists, so Coffer checks it is you first.',
  codeNeeded:
    'Enter a code from your authenticator app, or a backup code, to make an app password: it signs in to your files for as long as it exists, so Coffer checks it is you first.',
  noProof: 'Sign out and sign in again, then make the app password within 10 minutes: Coffer checks it is you first.',
};

/** An app password and the login it belongs to, as one sign-in read them. */
interface AppSignIn {
  login: User | null;
  app: AppPasswordRow | null;
}

/** Only a sign-in that succeeds is kept: an enabled login and its own app password. */
const usable = ({ login, app }: AppSignIn) => login !== null && app?.userId === login.id && login.disabledAt === null;

/**
 * Per-device passwords for WebDAV: made, listed and revoked by their login, and checked on every
 * WebDAV request (HTTP Basic: the login's email and the password). Usable for WebDAV only, never as
 * an API token. The account's own password works too only when the admin allows it
 * (`davAccountPasswords`) and the login has no two-step verification.
 */
export class AppPasswordService {
  private readonly verified = new Map<string, number>();
  /** Sign-ins with a usable app password by email key and secret hash, while the auth generation stands. */
  private readonly signedIn: PageCache<AppSignIn>;
  /** Whether a login still has an app password, while the auth generation stands (a revocation moves it). */
  private readonly kept: PageCache<boolean>;

  constructor(private readonly d: AppPasswordDeps) {
    // The generation is read at every request: a revocation by any service or process reaches the next one.
    this.signedIn = new PageCache(d.database.authVersion, () => 1, usable);
    this.kept = new PageCache(d.database.authVersion, () => 1);
  }

  /**
   * A new app password, once the login has shown it is itself: a session signed in within the last minutes, or the
   * password (a code of the second factor without one) again, so a stolen session cookie cannot mint a lasting password.
   */
  async create(principal: Principal, input: { name: string } & NonNullable<Confirmation>): Promise<AppPassword & { password: string }> {
    const name = input.name.normalize('NFC').trim();
    if (name.length === 0 || name.length > MAX_NAME)
      throw validationFailed([{ field: 'name', message: `Name the device in 1 to ${MAX_NAME} characters` }]);
    if (this.d.repo.count(principal.loginId) >= MAX_PER_LOGIN) throw tooMany();
    await this.d.identity.confirm(principal, input, CONFIRM_APP_PASSWORD);
    const password = newSecret();
    const row = {
      id: newId(),
      userId: principal.loginId,
      name,
      secretHash: sha256(password),
      createdAt: this.d.clock.now(),
      lastUsedAt: null,
      lastIp: null,
    };
    // The owner may delete this sub-user while the password was checked, and other requests may add theirs meanwhile.
    const added = this.d.repo.insert(row, MAX_PER_LOGIN);
    if (added === 'gone') throw notFound(Messages.loginGone);
    if (added === 'full') throw tooMany();
    this.d.audit.record({
      action: AuditActions.appPasswordCreate,
      principal,
      targetType: 'app_password',
      targetId: row.id,
      details: { name },
    });
    return { ...this.view(row), password };
  }

  list(principal: Principal): { appPasswords: AppPassword[] } {
    return { appPasswords: this.d.repo.list(principal.loginId).map((r) => this.view(r)) };
  }

  revoke(principal: Principal, id: string): { message: string } {
    if (!this.d.repo.delete(principal.loginId, id)) throw notFound('App password not found');
    this.d.davLocks.forgetCredential(principal.accountId, credentialOf(id));
    this.d.audit.record({ action: AuditActions.appPasswordRevoke, principal, targetType: 'app_password', targetId: id });
    return { message: 'App password revoked' };
  }

  /** The app password this request signed in with, revoked by its own client (the Nextcloud apps' sign-out). */
  revokeCurrent(principal: Principal): { message: string } {
    if (!principal.sessionId.startsWith(APP_PASSWORD_SESSION)) throw forbidden('This request is not signed in with an app password');
    return this.revoke(principal, principal.sessionId.slice(APP_PASSWORD_SESSION.length));
  }

  /**
   * What a long-lived connection (a notify_push socket) signed in with, for stillSignedIn: its app password,
   * or the account password at the login's token version, which a password change or signing out everywhere moves.
   */
  credentialOf(principal: Principal): string {
    if (principal.sessionId.startsWith(APP_PASSWORD_SESSION)) return principal.sessionId;
    return `${ACCOUNT_PASSWORD}${this.d.users.byId(principal.loginId)?.tokenVersion ?? 0}`;
  }

  /**
   * Whether that credential still signs the login in, as a WebDAV request with it would be: the login neither
   * removed nor disabled, and its app password not revoked, or the account password still allowed and unchanged.
   */
  stillSignedIn(loginId: string, credential: string): boolean {
    if (credential.startsWith(APP_PASSWORD_SESSION)) {
      const id = credential.slice(APP_PASSWORD_SESSION.length);
      return this.kept.get(`${loginId}\n${id}`, () =>
        this.d.transactions.read(() => {
          const login = this.d.users.byId(loginId);
          return login !== null && login.disabledAt === null && this.d.repo.has(loginId, id);
        }),
      );
    }
    if (!this.d.settings.get('davAccountPasswords')) return false;
    const login = this.d.users.byId(loginId);
    return login !== null && login.disabledAt === null && !login.mfaEnabled && credential === `${ACCOUNT_PASSWORD}${login.tokenVersion}`;
  }

  /** Password change or logout-all with `revokeAppPasswords`: every app password of the login goes, and every lock it took. */
  revokeAll(principal: Principal): number {
    const count = this.d.repo.deleteAll(principal.loginId);
    this.verified.clear();
    this.d.davLocks.forgetLogin(principal.loginId);
    if (count > 0)
      this.d.audit.record({ action: AuditActions.appPasswordRevoke, principal, targetType: 'app_password', details: { count } });
    return count;
  }

  /**
   * HTTP Basic credentials of a WebDAV request to the acting principal, else a 401 (audited). An unknown
   * email, a wrong password and an account that must use an app password get the same answer at the same
   * cost: the app-password lookup, then (only while account passwords are allowed) one argon2 check, against
   * the account's hash or a dummy. `beforeHash` runs before that check and may refuse it.
   */
  async authenticate(email: string, password: string, ip: string, beforeHash: () => void): Promise<Principal> {
    const now = this.d.clock.now();
    const secretHash = sha256(password);
    const { login, app } = this.lookup(emailKey(email), secretHash);
    let via: string | null = null;
    let sessionId = '';
    if (login && app?.userId === login.id) {
      via = 'app_password';
      sessionId = credentialOf(app.id);
      if (app.lastUsedAt === null || now - app.lastUsedAt > TOUCH_INTERVAL_MS || app.lastIp !== ip) {
        recordUnlessDiskRefuses(() => this.d.repo.touch(app.id, now, ip));
        app.lastUsedAt = now;
        app.lastIp = ip;
      }
    } else if (this.d.settings.get('davAccountPasswords')) {
      // No usable hash (an unknown email, two-step verification on): the dummy check costs the same.
      const hash = login && !login.mfaEnabled ? login.passwordHash : null;
      const key = login && hash ? sha256(`${login.id}\n${login.tokenVersion}\n${hash}\n${password}`) : '';
      const at = this.verified.get(key);
      if (at !== undefined && now - at < ACCOUNT_PASSWORD_CACHE_MS) via = 'account_password';
      else {
        beforeHash();
        if (await this.d.passwordTries.check(email, () => (hash ? verifyPassword(password, hash) : verifyAgainstDummy(password)))) {
          this.verified.set(key, now);
          via = 'account_password';
        }
      }
      if (via) sessionId = 'webdav';
    }
    // A disabled account's app passwords stop with it (and work again when it is enabled).
    const disabled = login !== null && via !== null && login.disabledAt !== null;
    if (!login || !via || disabled) {
      this.d.audit.record({
        action: AuditActions.signIn,
        status: 'failure',
        ...loginFields(login, email),
        ip,
        details: { reason: disabled ? 'account_disabled' : 'invalid_credentials', via: 'webdav' },
      });
      if (disabled) throw davUnauthorized(Messages.accountDisabled);
      throw davUnauthorized(WRONG_DAV_SECRET);
    }
    const isOwner = login.parentUserId === null;
    return {
      loginId: login.id,
      accountId: login.parentUserId ?? login.id,
      sessionId,
      ip,
      email: login.email,
      name: login.name,
      isOwner,
      isAdmin: login.isAdmin,
      permissions: isOwner ? new Set() : parsePermissions(login.permissions),
    };
  }

  /**
   * The login by email key and the app password by its hash: from the cache while the auth generation stands
   * (it moves on any write to a login's row that signing in reads, and on any app password removed or changed),
   * else both read under one WAL read lock, the same snapshot.
   */
  private lookup(key: string, secretHash: string): AppSignIn {
    return this.signedIn.get(`${key}\n${secretHash}`, () =>
      this.d.transactions.read(() => ({ login: this.d.users.byEmailKey(key), app: this.d.repo.bySecretHash(secretHash) })),
    );
  }

  private view(r: { id: string; name: string; createdAt: number; lastUsedAt: number | null; lastIp: string | null }): AppPassword {
    return { id: r.id, name: r.name, createdAt: iso(r.createdAt)!, lastUsedAt: iso(r.lastUsedAt), lastIp: r.lastIp };
  }
}
