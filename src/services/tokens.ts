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

/** HS256 session tokens (COMPAT: login id, token version, session id; 7-day lifetime). */
export class TokenSigner {
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
    try {
      const { payload } = await jwtVerify(token, this.secret, { algorithms: ['HS256'], currentDate: new Date(nowMs) });
      if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.tv !== 'number' || typeof payload.iat !== 'number') {
        return null;
      }
      return { sub: payload.sub, sid: payload.sid, tv: payload.tv, iat: payload.iat };
    } catch {
      return null;
    }
  }
}
