import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { tempDir } from '../helpers/server.ts';

const MAIN = path.resolve(import.meta.dir, '../../src/main.ts');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function dir(): string {
  const d = tempDir('coffer-cli-');
  dirs.push(d);
  return d;
}

/** Runs `coffer <args>` from source; serve is stopped as soon as it reports listening (or `enough` says so). */
async function coffer(args: string[], env: Record<string, string> = {}, enough = (out: string) => out.includes('"msg":"listening"')) {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    env: { PATH: process.env.PATH!, LOG_LEVEL: 'info', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
  let stdout = '';
  const reader = proc.stdout.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    stdout += new TextDecoder().decode(value);
    if (enough(stdout)) proc.kill('SIGTERM');
  }
  const code = await proc.exited;
  clearTimeout(timer);
  return { code, stdout, stderr: await new Response(proc.stderr).text() };
}

const oneLine = (text: string) => text.trim().split('\n').length === 1;

describe('coffer serve start-up', () => {
  test('first start creates the database and a 0600 secrets file; SIGTERM exits 0', async () => {
    const d = dir();
    const r = await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', d]);
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(d, 'coffer.db'))).toBe(true);
    expect(fs.statSync(path.join(d, 'secrets.json')).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(d, 'coffer.lock'))).toBe(false);
  });

  test('an unwritable data dir: one line on stderr, exit 1', async () => {
    const file = path.join(dir(), 'a-file');
    fs.writeFileSync(file, '');
    const r = await coffer(['serve', '--port', '0', '--data-dir', path.join(file, 'data')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/data directory .* is not writable/);
    expect(oneLine(r.stderr)).toBe(true);
  });

  test('a port in use: one line, exit 1', async () => {
    const blocker = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('x') });
    try {
      const r = await coffer(['serve', '--port', String(blocker.port), '--host', '127.0.0.1', '--data-dir', dir()]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/port \d+ .*already in use/);
      expect(oneLine(r.stderr)).toBe(true);
    } finally {
      blocker.stop(true);
    }
  });

  test('a missing master key beside an existing database: one line, exit 1', async () => {
    const d = dir();
    expect((await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', d])).code).toBe(0);
    fs.rmSync(path.join(d, 'secrets.json'));
    const r = await coffer(['serve', '--port', '0', '--data-dir', d]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/master key missing/);
    expect(oneLine(r.stderr)).toBe(true);
  });

  test('an unreadable key file and a malformed key: one line, exit 1', async () => {
    let r = await coffer(['serve', '--port', '0', '--data-dir', dir()], { COFFER_MASTER_KEY_FILE: '/nonexistent/key' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot read COFFER_MASTER_KEY_FILE/);
    r = await coffer(['serve', '--port', '0', '--data-dir', dir()], { COFFER_MASTER_KEY: 'short' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/invalid master key/);
    expect(oneLine(r.stderr)).toBe(true);
  });

  test('single sign-on half configured, or its secret file unreadable: one line naming what is missing, exit 1', async () => {
    let r = await coffer(['serve', '--port', '0', '--data-dir', dir()], { OIDC_ISSUER_URL: 'https://id.example.com' });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'coffer: single sign-on is half configured: OIDC_ISSUER_URL is set but OIDC_CLIENT_ID and OIDC_CLIENT_SECRET (or OIDC_CLIENT_SECRET_FILE) are missing',
    );
    r = await coffer(['serve', '--port', '0', '--data-dir', dir()], {
      OIDC_ISSUER_URL: 'https://id.example.com',
      OIDC_CLIENT_ID: 'coffer',
      OIDC_CLIENT_SECRET_FILE: '/nonexistent/oidc-secret',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot read OIDC_CLIENT_SECRET_FILE \/nonexistent\/oidc-secret \(ENOENT\)/);
    expect(oneLine(r.stderr)).toBe(true);
  });

  test('a provider that cannot be reached at start-up: a warning, and the server serves', async () => {
    const warned = '"level":"warn","msg":"single sign-on provider discovery failed; retrying later"';
    const r = await coffer(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir()],
      { OIDC_ISSUER_URL: 'http://127.0.0.1:9/unreachable', OIDC_CLIENT_ID: 'coffer', OIDC_CLIENT_SECRET: 'x' },
      (out) => out.includes('"msg":"listening"') && out.includes(warned),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(warned);
    expect(r.stderr).toBe('');
  });

  test('a database written by a newer version is refused', async () => {
    const d = dir();
    expect((await coffer(['migrate', '--data-dir', d])).code).toBe(0);
    const db = new Database(path.join(d, 'coffer.db'));
    db.run("INSERT INTO coffer_migrations (tag, hash, applied_at) VALUES ('9999_from_the_future', 'x', 0)");
    db.close();
    for (const args of [
      ['migrate', '--data-dir', d],
      ['serve', '--port', '0', '--data-dir', d],
    ]) {
      const r = await coffer(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/newer version of Coffer/);
      expect(oneLine(r.stderr)).toBe(true);
    }
  });

  test('a second server on the same data dir is refused', async () => {
    const d = dir();
    const first = Bun.spawn([process.execPath, MAIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', d], {
      env: { PATH: process.env.PATH!, LOG_LEVEL: 'info' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const reader = first.stdout.getReader();
    let out = '';
    while (!out.includes('listening')) out += new TextDecoder().decode((await reader.read()).value);
    try {
      const r = await coffer(['serve', '--port', '0', '--data-dir', d]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/already using/);
    } finally {
      first.kill('SIGTERM');
      await first.exited;
    }
  });

  test('migrate applies the embedded migrations once', async () => {
    const d = dir();
    const first = await coffer(['migrate', '--data-dir', d]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/applied 0000_initial/);
    const second = await coffer(['migrate', '--data-dir', d]);
    expect(second.stdout).toMatch(/up to date/);
  });

  test('--help lists the commands; --version prints the version', async () => {
    const help = await coffer(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('serve');
    expect(help.stdout).toContain('migrate');
    const serveHelp = await coffer(['serve', '--help']);
    expect(serveHelp.stdout).toContain('COFFER_MASTER_KEY');
    for (const name of [
      'OIDC_ISSUER_URL',
      'OIDC_CLIENT_ID',
      'OIDC_CLIENT_SECRET_FILE',
      'OIDC_REDIRECT_URL',
      'OIDC_SCOPES',
      'OIDC_PROVIDER_NAME',
    ])
      expect(serveHelp.stdout).toContain(name);
    for (const name of ['OIDC_AUTO_CREATE', 'OIDC_DISABLE_PASSWORD_LOGIN', 'OIDC_ALLOW_HTTP']) expect(serveHelp.stdout).toContain(name);
    const version = await coffer(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
