import { afterEach, describe, expect, spyOn, test } from 'bun:test';
import { TOKEN_LIFETIME_MS, TokenSigner } from '../../src/services/accounts/tokens.ts';

const secret = crypto.getRandomValues(new Uint8Array(32));

describe('TokenSigner.verify', () => {
  const checks = spyOn(crypto.subtle, 'verify');
  afterEach(() => checks.mockClear());

  test('requests arriving together with one token share one signature check; each still gets the claims', async () => {
    const signer = new TokenSigner(secret);
    const now = Date.now();
    const token = await signer.sign({ sub: 'login', sid: 'session', tv: 1 }, now);
    const all = await Promise.all(Array.from({ length: 20 }, () => signer.verify(token, now)));
    expect(checks).toHaveBeenCalledTimes(1);
    for (const claims of all) expect(claims).toMatchObject({ sub: 'login', sid: 'session', tv: 1 });
    // Expiry is still checked for every caller, the cached ones included.
    expect(await signer.verify(token, now + TOKEN_LIFETIME_MS + 1000)).toBeNull();
  });

  test('a forged token arriving many times at once is refused to every request and never remembered', async () => {
    const signer = new TokenSigner(secret);
    const now = Date.now();
    const forged = await new TokenSigner(crypto.getRandomValues(new Uint8Array(32))).sign({ sub: 'login', sid: 's', tv: 1 }, now);
    expect(await Promise.all(Array.from({ length: 5 }, () => signer.verify(forged, now)))).toEqual(Array(5).fill(null));
    expect(checks).toHaveBeenCalledTimes(1);
    // Refused, not cached: the next request checks it again.
    expect(await signer.verify(forged, now)).toBeNull();
    expect(checks).toHaveBeenCalledTimes(2);
  });
});
