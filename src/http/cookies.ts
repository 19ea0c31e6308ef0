import { TOKEN_LIFETIME_MS } from '../services/accounts/tokens.ts';

const TOKEN_COOKIE = 'token';

/** `token` cookie: HttpOnly, SameSite=Lax, Path=/, 7 days, Secure over HTTPS (docs/compatibility.md › Accounts and sign-in). */
export function tokenCookie(token: string, secure: boolean): string {
  return `${TOKEN_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${TOKEN_LIFETIME_MS / 1000}${secure ? '; Secure' : ''}`;
}

export function clearedTokenCookie(secure: boolean): string {
  return clearedCookie(TOKEN_COOKIE, '/', secure);
}

function clearedCookie(name: string, path: string, secure: boolean): string {
  return `${name}=; Path=${path}; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT${secure ? '; Secure' : ''}`;
}

/**
 * Single sign-on's short-lived cookies, sent only to /api/idp: the signed sign-in state between
 * /api/idp/login and the callback, and the pending second step of an account with MFA. SameSite=Lax,
 * so the provider's redirect back (a top-level GET) carries them and no other site's POST does.
 */
export const IDP_STATE_COOKIE = 'coffer_idp_state';
export const IDP_PENDING_COOKIE = 'coffer_idp_mfa';
const IDP_PATH = '/api/idp';

export function idpCookie(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${name}=${value}; Path=${IDP_PATH}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

export function clearedIdpCookie(name: string, secure: boolean): string {
  return clearedCookie(name, IDP_PATH, secure);
}

export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get('cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return value === '' ? null : value;
    }
  }
  return null;
}

/** The session token of a request: the `token` cookie, else `Authorization: Bearer`. */
export function credentialsOf(request: Request): { token: string; fromCookie: boolean } | null {
  const cookie = readCookie(request, TOKEN_COOKIE);
  if (cookie) return { token: cookie, fromCookie: true };
  const auth = request.headers.get('authorization');
  const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  return m ? { token: m[1]!, fromCookie: false } : null;
}
