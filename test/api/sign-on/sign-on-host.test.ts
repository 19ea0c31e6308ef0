import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startSsoServer, startTestProvider, type TestProvider } from '../../helpers/oidc.ts';
import { rawRequest } from '../../helpers/raw-http.ts';
import type { TestServer } from '../../helpers/server.ts';

const PUBLIC = 'https://files.example.test';
let provider: TestProvider;
let t: TestServer;

beforeAll(async () => {
  provider = await startTestProvider();
  ({ t } = await startSsoServer(provider, { env: { COFFER_PUBLIC_URL: PUBLIC } }));
});
afterAll(async () => {
  await t.stop();
  await provider.stop();
});

describe('the redirect URL single sign-on asks the provider for', () => {
  test("with COFFER_PUBLIC_URL set and no OIDC_REDIRECT_URL, it is the public URL's callback whatever Host the request names", async () => {
    for (const host of ['attacker.example:9000', new URL(t.url).host]) {
      const res = await rawRequest(t.url, `GET /api/idp/login HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.location!);
      expect(location.origin).toBe(new URL(provider.issuer).origin);
      expect(location.searchParams.get('redirect_uri')).toBe(`${PUBLIC}/api/idp/callback`);
    }
  });
});
