import { createHmac, timingSafeEqual } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';

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

// Verified tokens are remembered (a check costs a few µs); their expiry is still checked every time.
const VERIFIED_CACHE_SIZE = 10_000;

// The three base64url parts of a compact JWS; an HS256 signature is 32 bytes, 43 characters.
const COMPACT_HS256 = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/;

/** HS256 session tokens (docs/compatibility.md › Accounts and sign-in: login id, token version, session id; 7-day lifetime). */
export class TokenSigner {
  private readonly verified = new Map<string, TokenClaims & { exp: number }>();

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

  /**
   * The claims of a valid, unexpired token; null for anything else. Synchronous: an HMAC is checked on the
   * calling thread, so a request with a new token is answered in the turn it arrived in (WebCrypto's verify
   * would finish in a later one and cost 60-70 µs a token).
   */
  verify(token: string, nowMs: number): TokenClaims | null {
    const claims = this.verified.get(token) ?? this.check(token);
    return claims && claims.exp * 1000 > nowMs ? claims : null;
  }

  private check(token: string): (TokenClaims & { exp: number }) | null {
    if (!COMPACT_HS256.test(token)) return null;
    const signed = token.lastIndexOf('.');
    const expected = createHmac('sha256', this.secret).update(token.slice(0, signed)).digest();
    const given = Buffer.from(token.slice(signed + 1), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let sub: unknown, sid: unknown, tv: unknown, iat: unknown, exp: unknown;
    try {
      const header = decodeProtectedHeader(token);
      // Only what sign() writes: HS256, and no extension a verifier would have to understand.
      if (header.alg !== 'HS256' || header.crit !== undefined) return null;
      ({ sub, sid, tv, iat, exp } = decodeJwt(token));
    } catch {
      return null;
    }
    if (typeof sub !== 'string' || typeof sid !== 'string' || typeof tv !== 'number' || typeof iat !== 'number' || typeof exp !== 'number')
      return null;
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    const claims = { sub, sid, tv, iat, exp };
    this.verified.set(token, claims);
    return claims;
  }
}
