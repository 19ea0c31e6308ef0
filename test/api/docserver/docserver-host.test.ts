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

describe('the addresses a signed editor config gives the document server in a default install', () => {
  let plain: TestServer;
  let admin: seed.SeededLogin;
  const configOver = async (host: string, client: seed.SeededLogin['client'], id: string) => {
    const res = await rawRequest(
      plain.url,
      `GET /api/docserver/config/${id} HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookieHeader(client.cookies)}\r\nConnection: close\r\n\r\n`,
    );
    expect(res.status).toBe(200);
    const { token } = JSON.parse(res.body.toString('utf8'));
    return decodeJwt(token) as { document: { url: string }; editorConfig: { callbackUrl: string } };
  };
  /** The admin using Coffer at `host`, as its browser would there. */
  const adminAt = (host: string) =>
    rawRequest(
      plain.url,
      `GET /api/profile HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookieHeader(admin.client.cookies)}\r\nConnection: close\r\n\r\n`,
    );
  beforeAll(async () => {
    plain = await startTestServer({ startWorker: false });
    admin = await seed.admin(plain);
    expect((await admin.client.put('/api/user/docserver-config', { url: double.url, jwtSecret: double.secret })).status).toBe(200);
  });
  afterAll(() => plain.stop());

  test("a forged Host header gets the address the admin uses Coffer at, not the forged host's", async () => {
    const o = await seed.owner(plain);
    const file = await upload(o.client, 'report.docx', await documents.docx('text'));
    const signed = await configOver('attacker.example:9000', o.client, file.id);
    const origin = new URL(plain.url).origin;
    expect(signed.document.url).toStartWith(`${origin}/api/docserver/file/${file.id}?t=`);
    expect(signed.editorConfig.callbackUrl).toBe(`${origin}/api/docserver/callback`);
  });

  test('each name the admin has reached the box by (LAN address and a name) is given back to people who use it', async () => {
    const byName = `localhost:${new URL(plain.url).port}`;
    expect((await adminAt(byName)).status).toBe(200);
    const o = await seed.owner(plain);
    const file = await upload(o.client, 'plan.docx', await documents.docx('text'));
    expect((await configOver(byName, o.client, file.id)).document.url).toStartWith(`http://${byName}/api/docserver/file/`);
    expect((await configOver(new URL(plain.url).host, o.client, file.id)).document.url).toStartWith(
      `${plain.url.replace(/\/$/, '')}/api/docserver/file/`,
    );
  });
  test('an unknown Host gets the address the admin last started using that other machines can reach, not a localhost the admin used on the box', async () => {
    const port = new URL(plain.url).port;
    expect((await adminAt(`192.168.1.10:${port}`)).status).toBe(200);
    expect((await adminAt(`[::1]:${port}`)).status).toBe(200);
    const o = await seed.owner(plain);
    const file = await upload(o.client, 'lan.docx', await documents.docx('text'));
    expect((await configOver('attacker.example:9000', o.client, file.id)).document.url).toStartWith(
      `http://192.168.1.10:${port}/api/docserver/file/`,
    );
  });
});
