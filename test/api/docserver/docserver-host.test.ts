import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt } from 'jose';
import { cookieHeader, rawRequest } from '../../helpers/raw-http.ts';
import { DocserverDouble } from '../../helpers/docserver-double.ts';
import { documents } from '../../helpers/documents.ts';
import { upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const PUBLIC = 'http://files.example.test:8080';
let t: TestServer;
let double: DocserverDouble;

beforeAll(async () => {
  double = DocserverDouble.start();
  t = await startTestServer({ startWorker: false, env: { COFFER_PUBLIC_URL: `${PUBLIC}/` } });
  const admin = await seed.admin(t);
  expect((await admin.client.put('/api/user/docserver-config', { url: double.url, jwtSecret: double.secret })).status).toBe(200);
});
afterAll(async () => {
  await t.stop();
  double.stop();
});

describe('the addresses a signed editor config gives the document server', () => {
  test("with COFFER_PUBLIC_URL set, a request's Host header does not choose where the document is fetched from and saved to", async () => {
    const o = await seed.owner(t);
    const file = await upload(o.client, 'report.docx', await documents.docx('text'));
    const res = await rawRequest(
      t.url,
      `GET /api/docserver/config/${file.id} HTTP/1.1\r\nHost: attacker.example:9000\r\nCookie: ${cookieHeader(o.client.cookies)}\r\nConnection: close\r\n\r\n`,
    );
    expect(res.status).toBe(200);
    const { config, token } = JSON.parse(res.body.toString('utf8'));
    // The signed token is what the document server acts on; the plain config mirrors it.
    for (const c of [config, decodeJwt(token) as typeof config]) {
      expect(c.document.url).toStartWith(`${PUBLIC}/api/docserver/file/${file.id}?t=`);
      expect(c.editorConfig.callbackUrl).toBe(`${PUBLIC}/api/docserver/callback`);
    }
  });
});
