import { SignJWT, jwtVerify } from 'jose';

export const TOKEN_LIFETIME_MS = 7 * 24 * 3600_000;

export interface TokenClaims {
  /** Login id. */
  sub: string;
  /** Session id. */
  sid: string;
  /** The login's token version when the token was issued. */
  tv: number;
  /** Issued at, epoch seconds. */
  iat: number;
}

// Verified tokens are remembered (signature checks cost ~65 µs each); their expiry is still checked every time.
const VERIFIED_CACHE_SIZE = 10_000;

/** HS256 session tokens (COMPAT: login id, token version, session id; 7-day lifetime). */
export class TokenSigner {
  private readonly verified = new Map<string, TokenClaims & { exp: number }>();
  private readonly verifying = new Map<string, Promise<(TokenClaims & { exp: number }) | null>>();

  constructor(private readonly secret: Uint8Array) {}

  sign(claims: Omit<TokenClaims, 'iat'>, nowMs: number): Promise<string> {
    const iat = Math.floor(nowMs / 1000);
    return new SignJWT({ sid: claims.sid, tv: claims.tv })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuedAt(iat)
      .setExpirationTime(iat + TOKEN_LIFETIME_MS / 1000)
      .sign(this.secret);
  }

  /** The claims of a valid, unexpired token; null for anything else. */
  async verify(token: string, nowMs: number): Promise<TokenClaims | null> {
    const known = this.verified.get(token);
    if (known) return known.exp * 1000 > nowMs ? known : null;
    // Requests that arrive together with one token (a client opening its 20 event streams) share one signature check.
    let pending = this.verifying.get(token);
    if (!pending) {
      pending = this.check(token, nowMs).finally(() => this.verifying.delete(token));
      this.verifying.set(token, pending);
    }
    const claims = await pending;
    return claims && claims.exp * 1000 > nowMs ? claims : null;
  }

  private async check(token: string, nowMs: number): Promise<(TokenClaims & { exp: number }) | null> {
    try {
      const { payload } = await jwtVerify(token, this.secret, { algorithms: ['HS256'], currentDate: new Date(nowMs) });
      const { sub, sid, tv, iat, exp } = payload;
      if (
        typeof sub !== 'string' ||
        typeof sid !== 'string' ||
        typeof tv !== 'number' ||
        typeof iat !== 'number' ||
        typeof exp !== 'number'
      ) {
        return null;
      }
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
      const claims = { sub, sid, tv, iat, exp };
      this.verified.set(token, claims);
      return claims;
    } catch {
      return null;
    }
  }
}
