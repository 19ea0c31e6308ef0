import { createHash, randomInt } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { MfaRepo, MfaState } from '../../db/repos/mfa.ts';
import type { Keyring } from '../../storage/keyring.ts';
import { AppError, badRequest, Messages, unauthorized } from '../../errors.ts';
import { FixedWindowLimiter, rateLimitHeaders } from '../../lib/rate-limit.ts';
import { AuditActions, type Actor, type AuditService, actorFields } from '../admin/audit.ts';
import type { Principal } from '../identity/principal.ts';
import type { SessionService } from './sessions.ts';

const BACKUP_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const BACKUP_CODE_COUNT = 10;
const REGENERATE_COOLDOWN_MS = 5 * 60_000;
const PERIOD_S = 30;
/**
 * Codes one login may try per window, from every address together: the per-address limits alone let someone
 * holding the password and many addresses work through the million codes. A window, so the owner is locked out
 * for a quarter of an hour at most.
 */
const CODE_TRIES_PER_LOGIN = 10;
const CODE_TRIES_WINDOW_MS = 15 * 60_000;
// Loaded at the first two-factor setup or code: a server without two-factor logins never holds it.
const otp = () => import('otplib');

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

function isTotpShape(code: string): boolean {
  return /^\d{6}$/.test(code);
}

function isBackupCodeShape(code: string): boolean {
  return /^[A-Za-z0-9]{4}-?[A-Za-z0-9]{4}$/.test(code.trim());
}

/** TOTP (RFC 6238, 30 s, 6 digits, current and previous step, no replay) and single-use backup codes. */
export class MfaService {
  private readonly codeTries: FixedWindowLimiter;

  constructor(
    private readonly repo: MfaRepo,
    private readonly keyring: Keyring,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly sessions: SessionService,
  ) {
    this.codeTries = new FixedWindowLimiter(CODE_TRIES_PER_LOGIN, CODE_TRIES_WINDOW_MS, clock);
  }

  private row(userId: string): MfaState {
    const row = this.repo.state(userId);
    if (!row) throw unauthorized(Messages.sessionRevoked);
    return row;
  }

  status(principal: Principal): { enabled: boolean } {
    return { enabled: Boolean(this.row(principal.loginId).mfaEnabled) };
  }

  async setup(principal: Principal): Promise<{ secret: string; qrCode: string }> {
    const row = this.row(principal.loginId);
    if (row.mfaEnabled) throw badRequest(Messages.mfaAlreadyEnabled);
    const { generateSecret, generateURI } = await otp();
    const secret = generateSecret({ length: 20 });
    this.repo.setPendingSecret(principal.loginId, this.keyring.sealSecret(secret), this.clock.now());
    const uri = generateURI({ issuer: 'Coffer', label: row.email, secret });
    const { default: QRCode } = await import('qrcode');
    return { secret, qrCode: await QRCode.toDataURL(uri, { type: 'image/png', margin: 1, width: 240 }) };
  }

  /** Checks the setup code, enables MFA and issues the first backup codes. */
  async enable(principal: Principal, code: string): Promise<{ message: string; backupCodes: string[]; shouldPromptSessions: boolean }> {
    const row = this.row(principal.loginId);
    if (row.mfaEnabled) throw badRequest(Messages.mfaAlreadyEnabled);
    if (!row.mfaPendingSecret) throw badRequest(Messages.mfaSetupFirst);
    const secret = this.keyring.openSecret(row.mfaPendingSecret);
    if (!(await this.acceptTotp(principal.loginId, secret, code, row.mfaLastStep))) {
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
    const backupCodes = this.newBackupCodes();
    this.repo.enable(
      principal.loginId,
      backupCodes.map((c) => hashBackupCode(principal.loginId, c)),
      this.clock.now(),
    );
    this.audit.record({ action: AuditActions.mfaEnable, principal, targetType: 'user', targetId: principal.loginId });
    return { message: 'Two-factor authentication enabled', backupCodes, shouldPromptSessions: this.hasOtherSessions(principal) };
  }

  async disable(principal: Principal, code: string): Promise<{ message: string; shouldPromptSessions: boolean }> {
    const row = this.row(principal.loginId);
    if (!row.mfaEnabled) throw badRequest(Messages.mfaNotEnabled);
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
    if (!row.mfaEnabled) throw badRequest(Messages.mfaNotEnabled);
    const now = this.clock.now();
    const wait = (row.backupCodesRegeneratedAt ?? -Infinity) + REGENERATE_COOLDOWN_MS - now;
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new AppError(
        429,
        `Please wait ${Math.floor(seconds / 60)} minute(s) and ${seconds % 60} second(s) before regenerating backup codes again`,
        { retryAfterMs: Math.ceil(wait) },
        // The headers every 429 carries (docs/api.md › Limits), so clients that wait on Retry-After wait here too.
        rateLimitHeaders({ allowed: false, limit: 1, remaining: 0, resetAt: now + wait }, now),
      );
    }
    const backupCodes = this.newBackupCodes();
    this.repo.regenerateCodes(
      principal.loginId,
      backupCodes.map((c) => hashBackupCode(principal.loginId, c)),
      now,
    );
    this.audit.record({ action: AuditActions.mfaBackupCodesRegenerate, principal, targetType: 'user', targetId: principal.loginId });
    return { backupCodes };
  }

  backupCodeCount(principal: Principal): { count: number } {
    if (!this.row(principal.loginId).mfaEnabled) throw badRequest(Messages.mfaNotEnabled);
    return { count: this.repo.unusedCodeCount(principal.loginId) };
  }

  /**
   * Sign-in's second factor: a TOTP code or an unused backup code (which is then spent). Past CODE_TRIES_PER_LOGIN
   * wrong codes in a window, every code is refused with 429 until the window ends, and the login's audit log says so.
   */
  async checkCode(userId: string, code: string): Promise<boolean> {
    const row = this.row(userId);
    if (!row.mfaEnabled || !row.mfaSecret) return false;
    return this.codeTries.attempt(
      userId,
      () => this.matches(userId, row, code.trim()),
      (counted) =>
        this.audit.record({
          action: AuditActions.mfaCodesLocked,
          status: 'failure',
          loginId: userId,
          targetType: 'user',
          targetId: userId,
          details: { wrongCodes: CODE_TRIES_PER_LOGIN, until: new Date(counted.resetAt).toISOString() },
        }),
    );
  }

  /**
   * When the factor behind a code came to be: the secret's confirmation for an app's code, the latest issue for a backup
   * code (0 for a factor turned on before Coffer recorded it). A session that made it (a stolen one, say) is older.
   */
  issuedAt(userId: string, code: string): number {
    const row = this.row(userId);
    const enabledAt = row.mfaEnabledAt ?? 0;
    return isTotpShape(code.trim()) ? enabledAt : Math.max(enabledAt, row.backupCodesRegeneratedAt ?? 0);
  }

  private matches(userId: string, row: MfaState, code: string): Promise<boolean> | boolean {
    if (isTotpShape(code)) return this.acceptTotp(userId, this.keyring.openSecret(row.mfaSecret!), code, row.mfaLastStep);
    if (isBackupCodeShape(code)) return this.repo.spendCode(userId, hashBackupCode(userId, code), this.clock.now());
    return false;
  }

  /** Turns MFA off for a login (disable, or an admin's reset from the CLI, which `by` audits). */
  reset(userId: string, by?: Actor): void {
    this.repo.reset(userId, this.clock.now());
    if (by) this.audit.record({ action: AuditActions.mfaReset, ...actorFields(by), targetType: 'user', targetId: userId });
  }

  /** The code an authenticator shows now; for tests and the CLI's self-check. */
  async currentCode(secret: string): Promise<string> {
    const { generate } = await otp();
    return generate({ secret, epoch: Math.floor(this.clock.now() / 1000) });
  }

  private async acceptTotp(userId: string, secret: string, code: string, lastStep: number | null): Promise<boolean> {
    if (!isTotpShape(code)) return false;
    const { verify } = await otp();
    const result = await verify({
      secret,
      token: code,
      epoch: Math.floor(this.clock.now() / 1000),
      epochTolerance: [PERIOD_S, 0],
      ...(lastStep !== null ? { afterTimeStep: lastStep } : {}),
    });
    if (!result.valid) return false;
    // Compare-and-set, so two requests racing with one code cannot both succeed.
    return this.repo.acceptStep(userId, (result as { timeStep: number }).timeStep);
  }

  private newBackupCodes(): string[] {
    return Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  }

  private hasOtherSessions(principal: Principal): boolean {
    return this.sessions.othersCount(principal) > 0;
  }
}
