import { describe, expect, test } from 'bun:test';
import { SignJWT } from 'jose';
import { TOKEN_LIFETIME_MS, TokenSigner } from '../../src/services/accounts/tokens.ts';

const secret = crypto.getRandomValues(new Uint8Array(32));
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('TokenSigner.verify', () => {
  test('a token it signed gives its claims at once, and expiry is checked on every call, remembered tokens included', async () => {
    const signer = new TokenSigner(secret);
    const now = Date.now();
    const token = await signer.sign({ sub: 'login', sid: 'session', tv: 1 }, now);
    const claims = signer.verify(token, now);
    // Not a promise: a request with a new token is answered in the turn it arrived in.
    expect(claims).not.toBeInstanceOf(Promise);
    expect(claims).toMatchObject({ sub: 'login', sid: 'session', tv: 1, iat: Math.floor(now / 1000) });
    expect(signer.verify(token, now + 1000)).toMatchObject({ sub: 'login' });
    expect(signer.verify(token, now + TOKEN_LIFETIME_MS + 1000)).toBeNull();
    // A signer that has never seen it (a restarted server) refuses it as expired too.
    expect(new TokenSigner(secret).verify(token, now + TOKEN_LIFETIME_MS + 1000)).toBeNull();
  });

  test('a token signed with another secret is refused every time, never remembered as valid', async () => {
    const signer = new TokenSigner(secret);
    const now = Date.now();
    const forged = await new TokenSigner(crypto.getRandomValues(new Uint8Array(32))).sign({ sub: 'login', sid: 's', tv: 1 }, now);
    for (let i = 0; i < 3; i++) expect(signer.verify(forged, now)).toBeNull();
  });

  test('changed claims under the original signature, another algorithm, or a malformed token are refused', async () => {
    const signer = new TokenSigner(secret);
    const now = Date.now();
    const token = await signer.sign({ sub: 'login', sid: 'session', tv: 1 }, now);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const iat = Math.floor(now / 1000);
    // Correctly signed with the right secret, with the header and claims given.
    const signedWith = (protectedHeader: Record<string, unknown>, claimsSet: Record<string, unknown>) =>
      new SignJWT(claimsSet)
        .setProtectedHeader(protectedHeader as { alg: string })
        .setSubject('login')
        .setIssuedAt(iat)
        .setExpirationTime(iat + 3600)
        .sign(secret);

    const refused = [
      // Another login's id, or a newer token version, under the original signature.
      `${header}.${b64url({ ...claims, sub: 'admin' })}.${signature}`,
      `${header}.${b64url({ ...claims, tv: 2 })}.${signature}`,
      // "none", and HS512 with the right secret.
      `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.`,
      `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`,
      await signedWith({ alg: 'HS512', typ: 'JWT' }, { sid: 'session', tv: 1 }),
      // A critical extension this server does not understand.
      await signedWith({ alg: 'HS256', crit: ['b64'], b64: true }, { sid: 'session', tv: 1 }),
      // Claims of the wrong types.
      await signedWith({ alg: 'HS256', typ: 'JWT' }, { sid: 'session', tv: '1' }),
      // Cut, padded, or not a JWT at all.
      `${header}.${payload}.${signature.slice(0, -1)}`,
      `${header}.${payload}.${signature}=`,
      `${header}.${payload}`,
      `${header}.${payload}.${signature}.${signature}`,
      '',
      'not a token',
    ];
    for (const candidate of refused) expect(signer.verify(candidate, now)).toBeNull();
    // The original still stands.
    expect(signer.verify(token, now)).toMatchObject({ sub: 'login', tv: 1 });
  });
});
