import type { Clock } from '../../clock.ts';
import { RateLimitedError } from '../../errors.ts';
import { FixedWindowLimiter, rateLimitHeaders } from '../../lib/rate-limit.ts';
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

  /**
   * Runs `check` (whether the password given for `email` is right) with one try spent, counted before it so concurrent
   * guesses cannot all pass; past the limit every password, the right one too, is 429 until the window ends, and the
   * audit log records it once. A right password gives its try back.
   */
  async check(email: string, check: () => Promise<boolean>): Promise<boolean> {
    const key = emailKey(email);
    const counted = this.limiter.hit(key);
    if (!counted.allowed) throw new RateLimitedError(rateLimitHeaders(counted, this.d.clock.now()));
    const ok = await check();
    if (ok) this.limiter.release(key, counted);
    else if (counted.remaining === 0) {
      this.d.audit.record({
        action: AuditActions.passwordsLocked,
        status: 'failure',
        email,
        targetType: 'user',
        details: { wrongPasswords: WRONG_PASSWORDS_PER_EMAIL, until: new Date(counted.resetAt).toISOString() },
      });
    }
    return ok;
  }
}
