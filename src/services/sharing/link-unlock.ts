import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, Messages } from '../../errors.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';
import { verifyPassword } from '../identity/passwords.ts';

/** How long a password-protected link stays open in a browser after its password was given. */
export const UNLOCK_TTL_MS = 24 * 3600_000;

/** What an unlock cookie is signed over: a link's token and password hash (a new salt on every change ends old cookies). */
interface LockedLink {
  token: string;
  passwordHash: string | null;
}

function signature(key: Uint8Array, link: LockedLink, expires: number): string {
  return createHmac('sha256', key).update(`${link.token}\n${link.passwordHash}\n${expires}`).digest('base64url');
}

/** The cookie value that keeps `link` unlocked for UNLOCK_TTL_MS from `now`; file links and album links alike. */
export function unlockCookie(key: Uint8Array, link: LockedLink, now: number): string {
  const expires = now + UNLOCK_TTL_MS;
  return `${expires}.${signature(key, link, expires)}`;
}

/** Whether `cookie` unlocks `link` at `now` (a link without a password is always open). */
export function isUnlocked(key: Uint8Array, link: LockedLink, cookie: string | null, now: number): boolean {
  if (link.passwordHash === null) return true;
  const m = cookie ? /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(cookie) : null;
  if (!m) return false;
  const expires = Number(m[1]);
  if (expires <= now || expires > now + UNLOCK_TTL_MS) return false;
  return timingSafeEqual(Buffer.from(m[2]!), Buffer.from(signature(key, link, expires)));
}

/** Checks the password given for a locked link, audited either way (file links and album links alike); 401 when wrong. */
export async function checkLinkPassword(
  audit: AuditService,
  passwordHash: string,
  password: string,
  about: { ip: string; accountId: string; targetType: 'share' | 'album'; targetId: string },
): Promise<void> {
  const ok = await verifyPassword(password, passwordHash).catch(() => false);
  audit.record({
    action: ok ? AuditActions.shareUnlock : AuditActions.shareUnlockFailed,
    status: ok ? 'success' : 'failure',
    ...about,
  });
  if (!ok) throw new AppError(401, Messages.sharePasswordWrong);
}

/** An unlock refused before its password was checked (the link's attempts are used up), in the audit log as a denied one. */
export function recordUnlockRefused(
  audit: AuditService,
  about: { ip: string; accountId: string; targetType: 'share' | 'album'; targetId: string },
): void {
  audit.record({ action: AuditActions.shareUnlockFailed, status: 'denied', ...about });
}
