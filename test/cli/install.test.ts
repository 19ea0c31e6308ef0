import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/server.ts';

const SCRIPT = path.resolve(import.meta.dir, '../../install.sh');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function fakeBinary(dir: string, version: string): string {
  const file = path.join(dir, `coffer-${version}`);
  fs.writeFileSync(file, `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
  return file;
}

function install(args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync(['sh', SCRIPT, ...args], { stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH!, ...env } });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

describe('install.sh', () => {
  test('installs the executable, a systemd unit and an env file into --root; re-running upgrades and keeps settings', () => {
    const root = tempDir('coffer-install-');
    dirs.push(root);
    const v1 = fakeBinary(root, '0.1.0');
    const first = install(['--root', root, '--binary', v1, '--port', '8080']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('installed coffer 0.1.0');
    const bin = path.join(root, 'usr/local/bin/coffer');
    expect(fs.statSync(bin).mode & 0o777).toBe(0o755);
    const unit = fs.readFileSync(path.join(root, 'etc/systemd/system/coffer.service'), 'utf8');
    expect(unit).toContain('ExecStart=/usr/local/bin/coffer serve');
    expect(unit).toContain('EnvironmentFile=/etc/coffer/coffer.env');
    expect(unit).toContain('ReadWritePaths=/var/lib/coffer');
    expect(unit).toContain('User=coffer');
    const envFile = path.join(root, 'etc/coffer/coffer.env');
    expect(fs.readFileSync(envFile, 'utf8')).toContain('PORT=8080');
    expect(fs.readFileSync(envFile, 'utf8')).toContain('# OIDC_ISSUER_URL=');
    expect(fs.statSync(envFile).mode & 0o077).toBe(0);
    expect(fs.statSync(path.join(root, 'var/lib/coffer')).mode & 0o777).toBe(0o700);

    fs.appendFileSync(envFile, 'COFFER_DEFAULT_STORAGE_LIMIT=5G\n');
    const second = install(['--root', root, '--binary', fakeBinary(root, '0.2.0')]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('kept existing');
    expect(Bun.spawnSync([bin]).stdout.toString().trim()).toBe('0.2.0');
    expect(fs.readFileSync(envFile, 'utf8')).toContain('COFFER_DEFAULT_STORAGE_LIMIT=5G');

    const removed = install(['--root', root, '--uninstall']);
    expect(removed.code).toBe(0);
    expect(fs.existsSync(bin)).toBe(false);
    expect(fs.existsSync(envFile)).toBe(true);
  });

  test('--prefix and --no-systemd install without root; the unit is hardened and systemd-analyze verify accepts it', () => {
    const root = tempDir('coffer-install-');
    dirs.push(root);
    const args = [
      '--no-systemd',
      '--binary',
      fakeBinary(root, '0.3.0'),
      '--prefix',
      path.join(root, 'usr'),
      '--data-dir',
      path.join(root, 'var/lib/coffer'),
      '--config-dir',
      path.join(root, 'etc/coffer'),
      '--unit-dir',
      path.join(root, 'units'),
    ];
    const r = install(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/listens on http:\/\/.+:3000/);
    const unitFile = path.join(root, 'units/coffer.service');
    const unit = fs.readFileSync(unitFile, 'utf8');
    expect(unit).toContain(`ExecStart=${path.join(root, 'usr/bin/coffer')} serve`);
    for (const line of [
      'NoNewPrivileges=true',
      'ProtectSystem=strict',
      'ProtectHome=true',
      'PrivateTmp=true',
      'Restart=on-failure',
      'LimitNOFILE=65536',
    ]) {
      expect(unit).toContain(line);
    }
    expect(unit).toContain(`ReadWritePaths=${path.join(root, 'var/lib/coffer')}`);
    expect(fs.statSync(path.join(root, 'var/lib/coffer')).mode & 0o777).toBe(0o700);
    if (Bun.which('systemd-analyze')) {
      const verify = Bun.spawnSync(['systemd-analyze', 'verify', unitFile], { stdout: 'pipe', stderr: 'pipe' });
      expect(verify.stderr.toString()).toBe('');
      expect(verify.exitCode).toBe(0);
    }

    // --purge removes the data and settings too; without --uninstall it is refused.
    expect(install(['--purge']).stderr).toContain('--purge only goes with --uninstall');
    fs.writeFileSync(path.join(root, 'var/lib/coffer/coffer.db'), 'data');
    const purged = install([...args, '--uninstall', '--purge']);
    expect(purged.code).toBe(0);
    expect(fs.existsSync(path.join(root, 'usr/bin/coffer'))).toBe(false);
    expect(fs.existsSync(unitFile)).toBe(false);
    expect(fs.existsSync(path.join(root, 'var/lib/coffer'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'etc/coffer/coffer.env'))).toBe(false);
  });

  test('DESTDIR stages the install like --root', () => {
    const root = tempDir('coffer-install-');
    dirs.push(root);
    const r = install(['--binary', fakeBinary(root, '0.4.0')], { DESTDIR: root });
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(root, 'usr/local/bin/coffer'))).toBe(true);
    expect(fs.readFileSync(path.join(root, 'etc/systemd/system/coffer.service'), 'utf8')).toContain(
      'ExecStart=/usr/local/bin/coffer serve',
    );
  });

  test('bad options fail with one clear line', () => {
    const root = tempDir('coffer-install-');
    dirs.push(root);
    expect(install(['--root', root, '--binary', '/nonexistent/coffer']).stderr).toContain('executable not found');
    expect(install(['--root', root, '--port', 'http']).stderr).toContain('--port must be a number');
    expect(install(['--root', root, '--data-dir', 'relative']).stderr).toContain('absolute path');
    const unknown = install(['--frobnicate']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown option: --frobnicate');
  });

  test('--help lists every option and environment variable', () => {
    const r = install(['--help']);
    expect(r.code).toBe(0);
    for (const word of [
      '--binary',
      '--prefix',
      '--data-dir',
      '--port',
      '--root',
      '--uninstall',
      '--purge',
      '--no-systemd',
      'DESTDIR',
      'COFFER_BINARY',
      'secrets.json',
    ]) {
      expect(r.stdout).toContain(word);
    }
  });
});
