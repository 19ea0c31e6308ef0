import type { Clock } from '../../clock.ts';
import { FixedWindowLimiter } from '../../lib/rate-limit.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';
import { emailKey } from './email.ts';

/**
 * Wrong passwords one email may take per window from every address together: the sign-in limit per address and
 * email lets someone with many addresses guess on; a window, so the owner is kept out a quarter of an hour at most
 * (a passkey, and WebDAV with app passwords, still work meanwhile).
 */
const WRONG_PASSWORDS_PER_EMAIL = 100;
const WINDOW_MS = 15 * 60_000;

/** The account password checks of every door (sign-in, WebDAV, a password asked again), counted per email. */
export class PasswordTries {
  private readonly limiter: FixedWindowLimiter;

  constructor(private readonly d: { clock: Clock; audit: AuditService }) {
    this.limiter = new FixedWindowLimiter(WRONG_PASSWORDS_PER_EMAIL, WINDOW_MS, d.clock);
  }

  /** Runs `check` (whether the password given for `email` is right) as one try of the email's (FixedWindowLimiter.attempt); the audit log records a lock-out once. */
  async check(email: string, check: () => Promise<boolean>): Promise<boolean> {
    return this.limiter.attempt(emailKey(email), check, (counted) =>
      this.d.audit.record({
        action: AuditActions.passwordsLocked,
        status: 'failure',
        email,
        targetType: 'user',
        details: { wrongPasswords: WRONG_PASSWORDS_PER_EMAIL, until: new Date(counted.resetAt).toISOString() },
      }),
    );
  }
}
