import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDir } from '../../helpers/server.ts';
import { runCli } from '../../helpers/cli.ts';
import * as seed from '../../helpers/seed.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A self-signed certificate for localhost and 127.0.0.1, made with openssl. */
function certificate(): { cert: string; key: string; certPem: string } | null {
  if (!Bun.which('openssl')) return null;
  const dir = tempDir('coffer-tls-');
  dirs.push(dir);
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  const gen = Bun.spawnSync(
    [
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-days',
      '2',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdout: 'ignore', stderr: 'pipe' },
  );
  if (gen.exitCode !== 0) throw new Error(`openssl failed: ${gen.stderr.toString()}`);
  return { cert, key, certPem: fs.readFileSync(cert, 'utf8') };
}

const tls = certificate();
const noTls = skipWithout(
  tls ? null : 'openssl is not installed to make a test certificate (apt-get install openssl)',
  'the built-in TLS tests',
);

describe.skipIf(noTls)('built-in TLS (--tls-cert, --tls-key)', () => {
  test('serves HTTPS with the certificate; sign-in cookies are Secure', async () => {
    const t = await startTestServer({ env: { COFFER_TLS_CERT: tls!.cert, COFFER_TLS_KEY: tls!.key } });
    try {
      expect(t.url).toStartWith('https://');
      const res = await fetch(`${t.url}/health`, { tls: { ca: tls!.certPem } });
      expect(res.status).toBe(200);
      // A client that does not trust the certificate is refused by TLS itself.
      await expect(fetch(`${t.url}/health`)).rejects.toThrow();
      // Plain HTTP on the same port gets no answer from the app.
      await expect(fetch(t.url.replace('https:', 'http:') + '/health').then((r) => r.status)).rejects.toThrow();
      const signup = await fetch(`${t.url}/api/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: seed.uniqueEmail(), password: 'correct horse battery', name: 'TLS' }),
        tls: { ca: tls!.certPem },
      });
      expect(signup.status).toBe(200);
      expect(signup.headers.get('set-cookie')).toMatch(/;\s*Secure/i);
    } finally {
      await t.stop();
    }
  });

  test('coffer users invite beside a server with built-in HTTPS prints an https link that opens on it', async () => {
    const t = await startTestServer({ env: { COFFER_TLS_CERT: tls!.cert, COFFER_TLS_KEY: tls!.key } });
    try {
      const env = { HOST: '127.0.0.1', PORT: String(t.server.port), COFFER_TLS_CERT: tls!.cert, COFFER_TLS_KEY: tls!.key };
      const r = await runCli(['users', 'invite', seed.uniqueEmail('tls-invite'), '--json', '--data-dir', t.dataDir], { env });
      expect(r.code).toBe(0);
      const { url } = JSON.parse(r.stdout);
      expect(url).toStartWith(`${t.url}/invite#`);
      // The page's API at the link's origin knows the invitation: the link leads to this server.
      const { origin, hash } = new URL(url);
      const viewed = await fetch(`${origin}/api/invitations/view`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: hash.slice(1) }),
        tls: { ca: tls!.certPem },
      });
      expect(viewed.status).toBe(200);
    } finally {
      await t.stop();
    }
  });

  test('coffer serve refuses a certificate without its key, and a missing or non-PEM file, with one line naming it', async () => {
    const dir = tempDir('coffer-tls-serve-');
    dirs.push(dir);
    const serve = (args: string[]) =>
      runCli(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', path.join(dir, 'data'), ...args]);
    let r = await serve(['--tls-cert', tls!.cert]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--tls-cert and --tls-key');
    r = await serve(['--tls-cert', path.join(dir, 'nope.pem'), '--tls-key', tls!.key]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot read TLS certificate ${path.join(dir, 'nope.pem')}`);
    fs.writeFileSync(path.join(dir, 'junk.pem'), 'not a certificate');
    r = await serve(['--tls-cert', path.join(dir, 'junk.pem'), '--tls-key', tls!.key]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not a PEM file');
  });
});
