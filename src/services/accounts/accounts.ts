import type { Profile, PublicUser, SignInMethod } from '../../contract/accounts.ts';
import type { PageCache } from '../files/page-cache.ts';
import type { Clock } from '../../clock.ts';
import type { IdpConfig } from '../../config.ts';
import type { IdpRepo } from '../../db/repos/sign-on.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { User, UsersRepo } from '../../db/repos/users.ts';
import {
  AppError,
  badRequest,
  conflict,
  forbidden,
  Messages,
  passwordLoginDisabled,
  unauthorized,
  validationFailed,
} from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { type Actor, AuditActions, type AuditService, actorFields, loginFields } from '../admin/audit.ts';
import { emailKey } from './email.ts';
import type { PasswordTries } from './password-tries.ts';
import type { MfaService } from './mfa.ts';
import type { PasskeyResponse, PasskeyService } from './passkeys.ts';
import type { AppPasswordService } from './app-passwords.ts';
import { hashPassword, verifyAgainstDummy, verifyPassword } from '../identity/passwords.ts';
import { DISPLAY_NAME_MAX, PASSWORD } from '../../contract/limits.ts';
import { ALL_PERMISSIONS } from '../../contract/permissions.ts';
import type { Principal } from '../identity/principal.ts';
import type { RequestInfo, SessionService } from './sessions.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { SetupCodeService } from './setup-code.ts';
import { personName } from '../files/names.ts';

export function toPublicUser(row: Pick<User, 'id' | 'email' | 'name' | 'mfaEnabled' | 'createdAt'>): PublicUser {
  return { id: row.id, email: row.email, name: row.name, createdAt: new Date(row.createdAt).toISOString(), mfaEnabled: row.mfaEnabled };
}

/** The part of a profile its login's rows hold (the permissions come from the request's principal). */
export interface StoredProfile {
  user: PublicUser;
  signInMethods: SignInMethod[];
  /** The last answer built from it, given again while the permissions match: the same object, so HTTP encodes it once. */
  answer?: Profile;
}

function samePermissions(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((p, i) => p === b[i]);
}

const MAX_PASSWORD = PASSWORD.max;
/** docs/api.md › Limits: passwords are 6 to 128 characters; a sub-user's first one (set by its owner) 8 to 128. */
const minPassword = (subUser: boolean) => (subUser ? PASSWORD.subUserMin : PASSWORD.min);

/** The password rule, for every way a password is set: signup, change, sub-users, the CLI. 422 naming `field`. */
function checkPassword(password: string, opts: { subUser: boolean; field?: string }): void {
  const min = minPassword(opts.subUser);
  if (password.length < min || password.length > MAX_PASSWORD) {
    throw validationFailed([{ field: opts.field ?? 'password', message: `Password must be ${min} to ${MAX_PASSWORD} characters` }]);
  }
}

const MAX_NAME = DISPLAY_NAME_MAX;

/**
 * A login's display name, by the one rule for a person's name (`personName`, as sign-on uses): only invisible characters
 * is no name. At most 100 characters (sub-users must have one). 422 naming `name`.
 */
export function displayName(name: string, opts: { required?: boolean } = {}): string {
  const trimmed = personName(name, Number.MAX_SAFE_INTEGER);
  if (opts.required && trimmed === '') throw validationFailed([{ field: 'name', message: 'Name is required' }]);
  if (trimmed.length > MAX_NAME) throw validationFailed([{ field: 'name', message: `Name must be at most ${MAX_NAME} characters` }]);
  return trimmed;
}

export interface NewLogin {
  email: string;
  password: string | null;
  name: string;
  /** Set for a sub-user: its owner's id and granted permission keys. */
  owner?: { id: string; permissions: string[] };
  /** CLI `users create --admin`: only allowed while no admin exists. */
  admin?: boolean;
  /** Single sign-on: the provider identity linked in the same transaction. */
  identity?: { issuer: string; subject: string };
  /**
   * The address was chosen by the admin (the CLI, Add user, an invitation) or verified by the provider: single
   * sign-on may then link an identity to the login by email. Not for a public sign-up or a sub-user (whoever
   * signs up, or the owner, can type anyone's address). The first login (the admin) always is.
   */
  emailTrusted?: boolean;
  /** Runs in the insert's transaction (an invitation claimed with the login); throwing undoes the insert. */
  alongside?: (row: User) => void;
}

export interface AccountDeps {
  clock: Clock;
  transactions: Transactions;
  users: UsersRepo;
  identities: IdpRepo;
  settings: SettingsService;
  sessions: SessionService;
  mfa: MfaService;
  passkeys: PasskeyService;
  audit: AuditService;
  setupCode: SetupCodeService;
  appPasswords: AppPasswordService;
  passwordTries: PasswordTries;
  /** The profiles' own rows by login id, kept until anything is committed (DatabaseRepo.changeVersion). */
  profiles: PageCache<StoredProfile | null>;
  /** Single sign-on settings: with `disablePasswordLogin`, password sign-in and sign-up are refused. */
  idp: IdpConfig | null;
}

/** Sign-up, sign-in and the signed-in login's own password and profile. */
export class AccountService {
  private readonly signInListeners: Array<(signIn: { login: User; method: SignInMethod }) => void> = [];
  constructor(private readonly d: AccountDeps) {}

  /** `listener` runs at each sign-in, whichever way it was made, in the session's transaction (what it writes goes with the session). */
  onSignIn(listener: (signIn: { login: User; method: SignInMethod }) => void): void {
    this.signInListeners.push(listener);
  }

  findByEmail(email: string): User | null {
    return this.d.users.byEmailKey(emailKey(email));
  }

  findById(id: string): User | null {
    return this.d.users.byId(id);
  }

  /**
   * Inserts a login. The very first login becomes the admin and closes public signup, decided inside
   * one immediate transaction so two racing sign-ups cannot both become admin. `by` (the CLI) is audited.
   */
  async createLogin(input: NewLogin, by?: Actor): Promise<User> {
    const name = displayName(input.name, { required: Boolean(input.owner) });
    if (input.password !== null) checkPassword(input.password, { subUser: Boolean(input.owner) });
    const passwordHash = input.password === null ? null : await hashPassword(input.password);
    const now = this.d.clock.now();
    const row = this.d.transactions.immediate(() => {
      if (this.findByEmail(input.email)) throw conflict(Messages.emailInUse);
      // Disabled or deleted while the password was hashed: its sessions ended, and a sub-user made now would still sign in.
      const owner = input.owner ? this.findById(input.owner.id) : null;
      if (input.owner && (!owner || owner.disabledAt !== null)) throw unauthorized(Messages.sessionRevoked);
      const first = !this.d.users.hasAny();
      if (input.admin && !first && this.d.users.hasAdmin())
        throw conflict('An admin already exists; the admin is the first account created');
      const row = this.d.users.insert({
        id: newId(),
        email: input.email.trim(),
        emailKey: emailKey(input.email),
        emailTrusted: !input.owner && (first || Boolean(input.emailTrusted)),
        name,
        passwordHash,
        isAdmin: !input.owner && (first || Boolean(input.admin)),
        parentUserId: input.owner?.id ?? null,
        permissions: input.owner ? JSON.stringify(input.owner.permissions) : null,
        createdAt: now,
      });
      if (input.identity) this.d.identities.link({ ...input.identity, userId: row.id, createdAt: now });
      input.alongside?.(row);
      if (first) this.d.settings.set('signupEnabled', false);
      return row;
    });
    if (by) {
      this.d.audit.record({
        action: AuditActions.userCreate,
        ...actorFields(by),
        targetType: 'user',
        targetId: row.id,
        details: { email: row.email, admin: row.isAdmin },
      });
    }
    return row;
  }

  /** Public signup is open while no account exists, then as the admin sets it. */
  signupOpen(): boolean {
    return this.noLoginYet() || this.d.settings.get('signupEnabled');
  }

  /** A fresh instance: the next sign-up creates the admin. */
  noLoginYet(): boolean {
    return !this.d.users.hasAny();
  }

  /** False under OIDC_DISABLE_PASSWORD_LOGIN: only the provider signs people in. */
  passwordLoginEnabled(): boolean {
    return !this.d.idp?.disablePasswordLogin;
  }

  refuseWhenPasswordLoginDisabled(): void {
    if (this.d.idp?.disablePasswordLogin) throw forbidden(passwordLoginDisabled(this.d.idp.providerName));
  }

  async signup(input: { email: string; password: string; name?: string; setupCode?: string }, info: RequestInfo) {
    this.refuseWhenPasswordLoginDisabled();
    displayName(input.name ?? '');
    checkPassword(input.password, { subUser: false });
    if (!this.signupOpen()) throw forbidden(Messages.signupDisabled);
    this.d.setupCode.check(input.setupCode, info.ip);
    const row = await this.createLogin({ email: input.email, password: input.password, name: input.name ?? '' });
    const { token, sessionId } = await this.d.sessions.start(row.id, info);
    this.d.audit.record({
      action: AuditActions.signup,
      loginId: row.id,
      accountId: row.id,
      email: row.email,
      ip: info.ip,
      requestId: info.requestId,
      actor: 'login',
      targetType: 'session',
      targetId: sessionId,
      details: { admin: row.isAdmin },
    });
    return { user: toPublicUser(row), token };
  }

  /** `passkey`: for a login with two-factor on, an assertion of one of its passkeys in place of the code. */
  async login(input: { email: string; password: string; mfaCode?: string; passkey?: PasskeyResponse }, info: RequestInfo) {
    this.refuseWhenPasswordLoginDisabled();
    if (input.password.length === 0 || input.password.length > MAX_PASSWORD) {
      throw validationFailed([
        { field: 'password', message: input.password ? `Password must be at most ${MAX_PASSWORD} characters` : 'Enter your password' },
      ]);
    }
    const row = this.findByEmail(input.email);
    const ok = await this.d.passwordTries.check(input.email, () =>
      row?.passwordHash ? verifyPassword(input.password, row.passwordHash) : verifyAgainstDummy(input.password),
    );
    const failed = (reason: string) =>
      this.d.audit.record({
        action: AuditActions.signIn,
        status: 'failure',
        ...loginFields(row, input.email),
        ip: info.ip,
        requestId: info.requestId,
        details: { reason },
      });
    if (!row || !ok) {
      failed('invalid_credentials');
      throw unauthorized(Messages.invalidCredentials);
    }
    if (row.disabledAt !== null) {
      failed('account_disabled');
      throw forbidden(Messages.accountDisabled);
    }
    if (row.mfaEnabled && input.passkey) {
      await this.d.passkeys.verifySignIn(input.passkey, info, row);
    } else if (row.mfaEnabled) {
      // A widening for logins with a passkey only (`passkey: true`): the code step may offer it instead.
      if (!input.mfaCode) throw badRequest(Messages.mfaCodeRequired, this.d.passkeys.has(row.id) ? { passkey: true } : undefined);
      if (!(await this.d.mfa.checkCode(row.id, input.mfaCode))) {
        failed('invalid_mfa_code');
        throw unauthorized(Messages.invalidMfaCode);
      }
    }
    return { user: toPublicUser(row), token: await this.startSession(row, info, 'password') };
  }

  /** Sign-in with a passkey alone: no email, and no code even with two-factor on (the passkey verified its user). */
  async signInWithPasskey(response: PasskeyResponse, info: RequestInfo) {
    this.refuseWhenPasswordLoginDisabled();
    const row = await this.d.passkeys.verifySignIn(response, info);
    return { user: toPublicUser(row), token: await this.startSession(row, info, 'passkey') };
  }

  /** A signed-in login's session and its `auth.sign_in` event, the same whichever way it signed in. */
  async startSession(row: User, info: RequestInfo, method: SignInMethod): Promise<string> {
    // At the version `row` was read at, before its credentials were checked: a password changed meanwhile ends the sign-in.
    const { token, sessionId } = await this.d.sessions.start(
      row.id,
      info,
      () => {
        for (const listener of this.signInListeners) listener({ login: row, method });
      },
      row.tokenVersion,
    );
    this.d.audit.record({
      action: AuditActions.signIn,
      ...loginFields(row),
      ip: info.ip,
      requestId: info.requestId,
      actor: 'login',
      targetType: 'session',
      targetId: sessionId,
      details: { method, mfa: row.mfaEnabled },
    });
    return token;
  }

  logout(principal: Principal): { message: string } {
    this.d.sessions.end(principal.loginId, principal.sessionId);
    this.d.audit.record({ action: AuditActions.signOut, principal, targetType: 'session', targetId: principal.sessionId });
    return { message: 'Logged out' };
  }

  /** Signs out every session; app passwords (WebDAV devices) go too only when asked. */
  logoutAll(principal: Principal, opts: { revokeAppPasswords?: boolean } = {}): { message: string; sessionsInvalidated: boolean } {
    const sessions = this.d.sessions.invalidateAll(principal.loginId);
    if (opts.revokeAppPasswords) this.d.appPasswords.revokeAll(principal);
    this.d.audit.record({
      action: AuditActions.signOutAll,
      principal,
      targetType: 'user',
      targetId: principal.loginId,
      details: { sessions },
    });
    return { message: 'Logged out of all sessions', sessionsInvalidated: true };
  }

  async changePassword(
    principal: Principal,
    input: { oldPassword: string; newPassword: string; revokeAppPasswords?: boolean; removePasskeys?: boolean },
  ): Promise<{ message: string }> {
    checkPassword(input.newPassword, { subUser: false, field: 'newPassword' });
    if (input.oldPassword === input.newPassword) {
      throw validationFailed([{ field: 'newPassword', message: 'The new password must differ from the current one' }]);
    }
    const record = (status: 'success' | 'failure' | 'denied', reason?: string) =>
      this.d.audit.record({
        action: AuditActions.passwordChange,
        status,
        principal,
        targetType: 'user',
        targetId: principal.loginId,
        ...(reason ? { details: { reason } } : {}),
      });
    if (!this.d.settings.get('allowPasswordChange')) {
      record('denied', 'disabled_by_admin');
      throw forbidden(Messages.passwordChangeDisabled);
    }
    const row = this.findById(principal.loginId);
    if (!row) throw unauthorized(Messages.sessionRevoked);
    if (!row.passwordHash) throw badRequest(Messages.noLocalPassword);
    if (!(await this.d.passwordTries.check(row.email, () => verifyPassword(input.oldPassword, row.passwordHash!)))) {
      record('failure', 'wrong_current_password');
      throw badRequest(Messages.wrongCurrentPassword);
    }
    await this.storePassword(row.id, input.newPassword, () => {
      // Signed out, or the password changed by another request, while this one's was checked and hashed: that change stands.
      if (!this.d.sessions.isSignedIn(principal.loginId, principal.sessionId) || this.d.users.tokenVersion(row.id) !== row.tokenVersion)
        throw unauthorized(Messages.sessionRevoked);
    });
    if (input.revokeAppPasswords) this.d.appPasswords.revokeAll(principal);
    if (input.removePasskeys) this.d.passkeys.removeAll(row.id, principal);
    record('success');
    return { message: 'Password changed. Please log in again.' };
  }

  /** The CLI's reset: the rule a login of its kind was created with, then the new password; `by` is audited. */
  async setPassword(loginId: string, password: string, by: Actor): Promise<void> {
    const row = this.findById(loginId);
    if (!row) throw new AppError(404, Messages.userNotFound);
    checkPassword(password, { subUser: row.parentUserId !== null });
    await this.storePassword(loginId, password);
    this.d.audit.record({ action: AuditActions.userPasswordReset, ...actorFields(by), targetType: 'user', targetId: loginId });
  }

  /** A new password hash, and every session of the login signed out; `check` may refuse it (it throws) in the write's transaction. */
  private async storePassword(loginId: string, password: string, check?: () => void): Promise<void> {
    const hash = await hashPassword(password);
    this.d.transactions.immediate(() => {
      check?.();
      this.d.users.setPasswordHash(loginId, hash, this.d.clock.now());
    });
    this.d.sessions.invalidateAll(loginId);
  }

  /**
   * The signed-in login, with its permissions (null for an owner, who holds all) so clients show only what
   * it may do, and how it signs in (an account created through the provider has no password).
   */
  profile(principal: Principal): Profile {
    const stored = this.storedProfile(principal);
    if (!stored) throw new AppError(401, Messages.sessionRevoked);
    // From the principal, which the guard checked at this request: a cached profile never answers for it.
    const permissions = principal.isOwner ? null : ALL_PERMISSIONS.filter((p) => principal.permissions.has(p));
    if (stored.answer && samePermissions(stored.answer.permissions, permissions)) return stored.answer;
    stored.answer = { ...stored.user, permissions, signInMethods: stored.signInMethods };
    return stored.answer;
  }

  /** What the login's rows hold, kept until anything is committed (`profiles`); null when the login is gone. */
  private storedProfile(principal: Principal): StoredProfile | null {
    return this.d.profiles.get(principal.loginId, () => {
      const row = this.d.users.profile(principal.loginId);
      if (!row) return null;
      const signInMethods: SignInMethod[] = [];
      if (row.hasPassword) signInMethods.push('password');
      if (row.idpLinked) signInMethods.push('idp');
      if (row.hasPasskey) signInMethods.push('passkey');
      return { user: toPublicUser(row), signInMethods };
    });
  }
}
