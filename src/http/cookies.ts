import { TOKEN_LIFETIME_MS } from '../services/tokens.ts';

const TOKEN_COOKIE = 'token';

/** `token` cookie: HttpOnly, SameSite=Lax, Path=/, 7 days, Secure over HTTPS (COMPAT "Accounts and sign-in"). */
export function tokenCookie(token: string, secure: boolean): string {
  return `${TOKEN_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${TOKEN_LIFETIME_MS / 1000}${secure ? '; Secure' : ''}`;
}

export function clearedTokenCookie(secure: boolean): string {
  return `${TOKEN_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT${secure ? '; Secure' : ''}`;
}

function readCookie(request: Request, name: string): string | null {
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
