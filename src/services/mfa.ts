import { createHash, randomInt } from 'node:crypto';
import type { Database } from 'bun:sqlite';
import { generate, generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import type { CoreContext } from '../context.ts';
import { AppError, badRequest, Messages, unauthorized } from '../errors.ts';
import { AuditActions, type Actor, type AuditService, actorFields } from './audit.ts';
import type { Principal } from './principal.ts';

const BACKUP_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const BACKUP_CODE_COUNT = 10;
const REGENERATE_COOLDOWN_MS = 5 * 60_000;
const PERIOD_S = 30;

interface MfaRow {
  email: string;
  mfa_enabled: number;
  mfa_secret: string | null;
  mfa_pending_secret: string | null;
  mfa_last_step: number | null;
  backup_codes_regenerated_at: number | null;
}

function normalizeBackupCode(code: string): string {
  return code.replace(/-/g, '').trim().toUpperCase();
}

function hashBackupCode(userId: string, code: string): string {
  return createHash('sha256')
    .update(`${userId}:${normalizeBackupCode(code)}`)
    .digest('hex');
}

function newBackupCode(): string {
  let s = '';
  for (let i = 0; i < 8; i++) s += BACKUP_ALPHABET[randomInt(BACKUP_ALPHABET.length)];
  return `${s.slice(0, 4)}-${s.slice(4)}`;
}

export function isTotpShape(code: string): boolean {
  return /^\d{6}$/.test(code);
}

export function isBackupCodeShape(code: string): boolean {
  return /^[A-Za-z0-9]{4}-?[A-Za-z0-9]{4}$/.test(code.trim());
}

/** TOTP (RFC 6238, 30 s, 6 digits, current and previous step, no replay) and single-use backup codes. */
export class MfaService {
  private readonly sqlite: Database;

  constructor(
    private readonly ctx: CoreContext,
    private readonly audit: AuditService,
  ) {
    this.sqlite = ctx.db.$client;
  }

  private row(userId: string): MfaRow {
    const row = this.sqlite
      .query<MfaRow, [string]>(
        'SELECT email, mfa_enabled, mfa_secret, mfa_pending_secret, mfa_last_step, backup_codes_regenerated_at FROM users WHERE id = ?',
      )
      .get(userId);
    if (!row) throw unauthorized(Messages.sessionRevoked);
    return row;
  }

  status(principal: Principal): { enabled: boolean } {
    return { enabled: Boolean(this.row(principal.loginId).mfa_enabled) };
  }

  async setup(principal: Principal): Promise<{ secret: string; qrCode: string }> {
    const row = this.row(principal.loginId);
    if (row.mfa_enabled) throw badRequest(Messages.mfaAlreadyEnabled);
    const secret = generateSecret({ length: 20 });
    this.sqlite
      .query('UPDATE users SET mfa_pending_secret = ?, updated_at = ? WHERE id = ?')
      .run(this.ctx.keyring.sealSecret(secret), this.ctx.clock.now(), principal.loginId);
    const uri = generateURI({ issuer: 'Coffer', label: row.email, secret });
    return { secret, qrCode: await QRCode.toDataURL(uri, { type: 'image/png', margin: 1, width: 240 }) };
  }

  /** Checks the setup code, enables MFA and issues the first backup codes. */
  async enable(principal: Principal, code: string): Promise<{ message: string; backupCodes: string[]; shouldPromptSessions: boolean }> {
    const row = this.row(principal.loginId);
    if (row.mfa_enabled) throw badRequest(Messages.mfaAlreadyEnabled);
    if (!row.mfa_pending_secret) throw badRequest(Messages.mfaSetupFirst);
    const secret = this.ctx.keyring.openSecret(row.mfa_pending_secret);
    if (!(await this.acceptTotp(principal.loginId, secret, code, row.mfa_last_step))) {
      this.audit.record({
        action: AuditActions.mfaEnable,
        status: 'failure',
        principal,
        targetType: 'user',
        targetId: principal.loginId,
        details: { reason: 'invalid_code' },
      });
      throw badRequest(Messages.invalidMfaCode);
    }
    const backupCodes = this.sqlite.transaction(() => {
      this.sqlite
        .query('UPDATE users SET mfa_enabled = 1, mfa_secret = mfa_pending_secret, mfa_pending_secret = NULL, updated_at = ? WHERE id = ?')
        .run(this.ctx.clock.now(), principal.loginId);
      return this.replaceBackupCodes(principal.loginId);
    })();
    this.audit.record({ action: AuditActions.mfaEnable, principal, targetType: 'user', targetId: principal.loginId });
    return { message: 'Two-factor authentication enabled', backupCodes, shouldPromptSessions: this.hasOtherSessions(principal) };
  }

  async disable(principal: Principal, code: string): Promise<{ message: string; shouldPromptSessions: boolean }> {
    const row = this.row(principal.loginId);
    if (!row.mfa_enabled) throw badRequest(Messages.mfaNotEnabled);
    if (!(await this.checkCode(principal.loginId, code))) {
      this.audit.record({
        action: AuditActions.mfaDisable,
        status: 'failure',
        principal,
        targetType: 'user',
        targetId: principal.loginId,
        details: { reason: 'invalid_code' },
      });
      throw badRequest(Messages.invalidMfaCode);
    }
    this.reset(principal.loginId);
    this.audit.record({ action: AuditActions.mfaDisable, principal, targetType: 'user', targetId: principal.loginId });
    return { message: 'Two-factor authentication disabled', shouldPromptSessions: this.hasOtherSessions(principal) };
  }

  regenerateBackupCodes(principal: Principal): { backupCodes: string[] } {
    const row = this.row(principal.loginId);
    if (!row.mfa_enabled) throw badRequest(Messages.mfaNotEnabled);
    const now = this.ctx.clock.now();
    const wait = (row.backup_codes_regenerated_at ?? -Infinity) + REGENERATE_COOLDOWN_MS - now;
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new AppError(
        429,
        `Please wait ${Math.floor(seconds / 60)} minute(s) and ${seconds % 60} second(s) before regenerating backup codes again`,
        { retryAfterMs: Math.ceil(wait) },
      );
    }
    const backupCodes = this.sqlite.transaction(() => {
      this.sqlite.query('UPDATE users SET backup_codes_regenerated_at = ? WHERE id = ?').run(now, principal.loginId);
      return this.replaceBackupCodes(principal.loginId);
    })();
    this.audit.record({ action: AuditActions.mfaBackupCodesRegenerate, principal, targetType: 'user', targetId: principal.loginId });
    return { backupCodes };
  }

  backupCodeCount(principal: Principal): { count: number } {
    if (!this.row(principal.loginId).mfa_enabled) throw badRequest(Messages.mfaNotEnabled);
    const r = this.sqlite
      .query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM mfa_backup_codes WHERE user_id = ? AND used_at IS NULL')
      .get(principal.loginId);
    return { count: r!.n };
  }

  /** Sign-in's second factor: a TOTP code or an unused backup code (which is then spent). */
  async checkCode(userId: string, code: string): Promise<boolean> {
    const row = this.row(userId);
    if (!row.mfa_enabled || !row.mfa_secret) return false;
    const trimmed = code.trim();
    if (isTotpShape(trimmed)) return this.acceptTotp(userId, this.ctx.keyring.openSecret(row.mfa_secret), trimmed, row.mfa_last_step);
    if (isBackupCodeShape(trimmed)) {
      return (
        this.sqlite
          .query('UPDATE mfa_backup_codes SET used_at = ? WHERE user_id = ? AND code_hash = ? AND used_at IS NULL')
          .run(this.ctx.clock.now(), userId, hashBackupCode(userId, trimmed)).changes === 1
      );
    }
    return false;
  }

  /** Turns MFA off for a login (disable, or an admin's reset from the CLI, which `by` audits). */
  reset(userId: string, by?: Actor): void {
    this.sqlite.transaction(() => {
      this.sqlite
        .query(
          'UPDATE users SET mfa_enabled = 0, mfa_secret = NULL, mfa_pending_secret = NULL, mfa_last_step = NULL, backup_codes_regenerated_at = NULL, updated_at = ? WHERE id = ?',
        )
        .run(this.ctx.clock.now(), userId);
      this.sqlite.query('DELETE FROM mfa_backup_codes WHERE user_id = ?').run(userId);
    })();
    if (by) this.audit.record({ action: AuditActions.mfaReset, ...actorFields(by), targetType: 'user', targetId: userId });
  }

  /** The code an authenticator shows now; for tests and the CLI's self-check. */
  currentCode(secret: string): Promise<string> {
    return generate({ secret, epoch: Math.floor(this.ctx.clock.now() / 1000) });
  }

  private async acceptTotp(userId: string, secret: string, code: string, lastStep: number | null): Promise<boolean> {
    if (!isTotpShape(code)) return false;
    const result = await verify({
      secret,
      token: code,
      epoch: Math.floor(this.ctx.clock.now() / 1000),
      epochTolerance: [PERIOD_S, 0],
      ...(lastStep !== null ? { afterTimeStep: lastStep } : {}),
    });
    if (!result.valid) return false;
    // Compare-and-set, so two requests racing with one code cannot both succeed.
    return (
      this.sqlite
        .query('UPDATE users SET mfa_last_step = ?1 WHERE id = ?2 AND (mfa_last_step IS NULL OR mfa_last_step < ?1)')
        .run((result as { timeStep: number }).timeStep, userId).changes === 1
    );
  }

  private replaceBackupCodes(userId: string): string[] {
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
    this.sqlite.query('DELETE FROM mfa_backup_codes WHERE user_id = ?').run(userId);
    const insert = this.sqlite.query('INSERT OR IGNORE INTO mfa_backup_codes (user_id, code_hash) VALUES (?, ?)');
    for (const c of codes) insert.run(userId, hashBackupCode(userId, c));
    return codes;
  }

  private hasOtherSessions(principal: Principal): boolean {
    return (
      this.sqlite
        .query<{ n: number }, [string, string]>('SELECT COUNT(*) AS n FROM sessions WHERE user_id = ? AND id != ?')
        .get(principal.loginId, principal.sessionId)!.n > 0
    );
  }
}
