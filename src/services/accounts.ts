import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { AppError, badRequest, conflict, forbidden, Messages, unauthorized } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { actorFields, AuditActions, type Actor, type AuditService } from './audit.ts';
import type { MfaService } from './mfa.ts';
import { hashPassword, verifyAgainstDummy, verifyPassword } from './passwords.ts';
import type { Principal } from './principal.ts';
import type { RequestInfo, SessionService } from './sessions.ts';
import type { SettingsService } from './settings.ts';

export interface PublicUser {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  mfaEnabled: boolean;
}

export interface LoginRow {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  is_admin: number;
  parent_user_id: string | null;
  mfa_enabled: number;
  created_at: number;
}

export function toPublicUser(row: Pick<LoginRow, 'id' | 'email' | 'name' | 'mfa_enabled' | 'created_at'>): PublicUser {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    createdAt: new Date(row.created_at).toISOString(),
    mfaEnabled: Boolean(row.mfa_enabled),
  };
}

export const emailKey = (email: string) => email.trim().toLowerCase();

export interface NewLogin {
  email: string;
  password: string | null;
  name: string;
  /** Set for a sub-user: its owner's id and granted permission keys. */
  owner?: { id: string; permissions: string[] };
  /** CLI `users create --admin`: only allowed while no admin exists. */
  admin?: boolean;
}

/** Sign-up, sign-in and the signed-in login's own password and profile. */
export class AccountService {
  private readonly sqlite: Database;

  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: SettingsService,
    private readonly sessions: SessionService,
    private readonly mfa: MfaService,
    private readonly audit: AuditService,
  ) {
    this.sqlite = ctx.db.$client;
  }

  findByEmail(email: string): LoginRow | null {
    return this.sqlite.query<LoginRow, [string]>('SELECT * FROM users WHERE email_key = ?').get(emailKey(email)) ?? null;
  }

  findById(id: string): LoginRow | null {
    return this.sqlite.query<LoginRow, [string]>('SELECT * FROM users WHERE id = ?').get(id) ?? null;
  }

  /**
   * Inserts a login. The very first login becomes the admin and closes public signup, decided inside
   * one immediate transaction so two racing sign-ups cannot both become admin. `by` (the CLI) is audited.
   */
  async createLogin(input: NewLogin, by?: Actor): Promise<LoginRow> {
    const passwordHash = input.password === null ? null : await hashPassword(input.password);
    const now = this.ctx.clock.now();
    const id = newId();
    const row = this.sqlite
      .transaction(() => {
        if (this.findByEmail(input.email)) throw conflict(Messages.emailInUse);
        const first = this.sqlite.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM users').get()!.n === 0;
        if (input.admin && !first && this.sqlite.query('SELECT 1 FROM users WHERE is_admin = 1').get()) {
          throw conflict('An admin already exists; the admin is the first account created');
        }
        const isAdmin = !input.owner && (first || Boolean(input.admin));
        this.sqlite
          .query(
            `INSERT INTO users (id, email, email_key, name, password_hash, is_admin, parent_user_id, permissions, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            id,
            input.email.trim(),
            emailKey(input.email),
            input.name.trim(),
            passwordHash,
            isAdmin ? 1 : 0,
            input.owner?.id ?? null,
            input.owner ? JSON.stringify(input.owner.permissions) : null,
            now,
            now,
          );
        if (first) this.settings.set('signupEnabled', false);
        return this.findById(id)!;
      })
      .immediate();
    if (by) {
      this.audit.record({
        action: AuditActions.userCreate,
        ...actorFields(by),
        targetType: 'user',
        targetId: row.id,
        details: { email: row.email, admin: Boolean(row.is_admin) },
      });
    }
    return row;
  }

  /** Public signup is open while no account exists, then as the admin sets it. */
  signupOpen(): boolean {
    return !this.sqlite.query('SELECT 1 FROM users LIMIT 1').get() || this.settings.get('signupEnabled');
  }

  async signup(input: { email: string; password: string; name?: string }, info: RequestInfo) {
    if (!this.signupOpen()) throw forbidden(Messages.signupDisabled);
    const row = await this.createLogin({ email: input.email, password: input.password, name: input.name ?? '' });
    const { token, sessionId } = await this.sessions.start(row.id, info);
    this.audit.record({
      action: AuditActions.signup,
      loginId: row.id,
      accountId: row.id,
      email: row.email,
      ip: info.ip,
      actor: 'login',
      targetType: 'session',
      targetId: sessionId,
      details: { admin: Boolean(row.is_admin) },
    });
    return { user: toPublicUser(row), token };
  }

  async login(input: { email: string; password: string; mfaCode?: string }, info: RequestInfo) {
    const row = this.findByEmail(input.email);
    const ok = row?.password_hash ? await verifyPassword(input.password, row.password_hash) : await verifyAgainstDummy(input.password);
    const failed = (reason: string) =>
      this.audit.record({
        action: AuditActions.signIn,
        status: 'failure',
        loginId: row?.id ?? null,
        accountId: row ? (row.parent_user_id ?? row.id) : null,
        email: row?.email ?? input.email,
        ip: info.ip,
        details: { reason },
      });
    if (!row || !ok) {
      failed('invalid_credentials');
      throw unauthorized(Messages.invalidCredentials);
    }
    if (row.mfa_enabled) {
      if (!input.mfaCode) throw badRequest(Messages.mfaCodeRequired);
      if (!(await this.mfa.checkCode(row.id, input.mfaCode))) {
        failed('invalid_mfa_code');
        throw unauthorized(Messages.invalidMfaCode);
      }
    }
    const { token, sessionId } = await this.sessions.start(row.id, info);
    this.audit.record({
      action: AuditActions.signIn,
      loginId: row.id,
      accountId: row.parent_user_id ?? row.id,
      email: row.email,
      ip: info.ip,
      actor: 'login',
      targetType: 'session',
      targetId: sessionId,
      details: { mfa: Boolean(row.mfa_enabled) },
    });
    return { user: toPublicUser(row), token };
  }

  logout(principal: Principal): { message: string } {
    this.sessions.end(principal.loginId, principal.sessionId);
    this.audit.record({ action: AuditActions.signOut, principal, targetType: 'session', targetId: principal.sessionId });
    return { message: 'Logged out' };
  }

  logoutAll(principal: Principal): { message: string; sessionsInvalidated: boolean } {
    const sessions = this.sessions.invalidateAll(principal.loginId);
    this.audit.record({
      action: AuditActions.signOutAll,
      principal,
      targetType: 'user',
      targetId: principal.loginId,
      details: { sessions },
    });
    return { message: 'Logged out of all sessions', sessionsInvalidated: true };
  }

  async changePassword(principal: Principal, input: { oldPassword: string; newPassword: string }): Promise<{ message: string }> {
    const record = (status: 'success' | 'failure' | 'denied', reason?: string) =>
      this.audit.record({
        action: AuditActions.passwordChange,
        status,
        principal,
        targetType: 'user',
        targetId: principal.loginId,
        ...(reason ? { details: { reason } } : {}),
      });
    if (!this.settings.get('allowPasswordChange')) {
      record('denied', 'disabled_by_admin');
      throw forbidden(Messages.passwordChangeDisabled);
    }
    const row = this.findById(principal.loginId);
    if (!row) throw unauthorized(Messages.sessionRevoked);
    if (!row.password_hash) throw badRequest(Messages.noLocalPassword);
    if (!(await verifyPassword(input.oldPassword, row.password_hash))) {
      record('failure', 'wrong_current_password');
      throw badRequest(Messages.wrongCurrentPassword);
    }
    await this.setPassword(row.id, input.newPassword);
    record('success');
    return { message: 'Password changed. Please log in again.' };
  }

  /** Sets a new password and signs the login out everywhere (change-password; the CLI's reset, which `by` audits). */
  async setPassword(loginId: string, password: string, by?: Actor): Promise<void> {
    const hash = await hashPassword(password);
    this.sqlite.query('UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?').run(hash, this.ctx.clock.now(), loginId);
    this.sessions.invalidateAll(loginId);
    if (by) this.audit.record({ action: AuditActions.userPasswordReset, ...actorFields(by), targetType: 'user', targetId: loginId });
  }

  profile(principal: Principal): PublicUser {
    const row = this.findById(principal.loginId);
    if (!row) throw new AppError(401, Messages.sessionRevoked);
    return toPublicUser(row);
  }
}
