import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/server.ts';
import { skipHere } from '../helpers/prerequisites.ts';

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
    const unitFile = path.join(root, 'etc/systemd/system/coffer.service');
    const unit = fs.readFileSync(unitFile, 'utf8');
    // 0644 like every unit, whatever the umask (the env file beside it is 0600).
    expect(fs.statSync(unitFile).mode & 0o777).toBe(0o644);
    expect(unit).toContain('ExecStart=/usr/local/bin/coffer serve');
    expect(unit).toContain('Type=notify');
    expect(unit).toContain('Documentation=file:/usr/local/share/doc/coffer/README.md');
    expect(fs.readFileSync(path.join(root, 'usr/local/share/doc/coffer/README.md'), 'utf8')).toContain('# Coffer');
    // The parts of the documentation the README links to, and their pictures, beside it.
    const docs = path.join(root, 'usr/local/share/doc/coffer/docs');
    expect(fs.readdirSync(docs).sort()).toEqual(fs.readdirSync(path.resolve(import.meta.dir, '../../docs')).sort());
    expect(fs.readFileSync(path.join(docs, 'backup.md'), 'utf8')).toContain('## Back up and restore');
    expect(fs.statSync(path.join(docs, 'web-app.png')).mode & 0o777).toBe(0o644);
    expect(unit).toContain('systemctl edit coffer');
    expect(unit).toContain('PrivateUsers=true');
    expect(unit).not.toContain('CAP_NET_BIND_SERVICE');
    // The default backup directory exists and is private.
    expect(fs.statSync(path.join(root, 'var/backups/coffer')).mode & 0o777).toBe(0o700);
    expect(unit).toContain('EnvironmentFile=/etc/coffer/coffer.env');
    expect(unit).toContain('ReadWritePaths=/var/lib/coffer');
    expect(unit).toContain('User=coffer');
    const envFile = path.join(root, 'etc/coffer/coffer.env');
    expect(fs.readFileSync(envFile, 'utf8')).toContain('PORT=8080');
    expect(first.stdout).toContain('users create you@example.com --admin');
    expect(first.stdout).toContain('backup --full /var/backups/coffer/');
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

  test("re-running keeps the data and backup directories of the kept coffer.env in the unit (ProtectSystem=strict leaves every other path read-only), scheduled backups' too", () => {
    const root = tempDir('coffer-install-');
    dirs.push(root);
    const bin = fakeBinary(root, '0.1.0');
    const first = install(['--root', root, '--binary', bin, '--data-dir', '/srv/coffer', '--backup-dir', '/srv/coffer-backups']);
    expect(first.code).toBe(0);
    const unitFile = path.join(root, 'etc/systemd/system/coffer.service');
    expect(fs.readFileSync(unitFile, 'utf8')).toContain('ReadWritePaths=/srv/coffer -/srv/coffer-backups\n');

    // An upgrade run without the flags, and one that names other directories: coffer.env is kept, so are they.
    for (const args of [[], ['--data-dir', '/var/lib/elsewhere', '--backup-dir', '/var/backups/elsewhere']]) {
      const again = install(['--root', root, '--binary', fakeBinary(root, '0.2.0'), ...args]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('kept existing');
      expect(fs.readFileSync(unitFile, 'utf8')).toContain('ReadWritePaths=/srv/coffer -/srv/coffer-backups\n');
      expect(again.stdout).toContain('--data-dir /srv/coffer\n');
      if (args.length) expect(again.stderr).toContain('--data-dir /var/lib/elsewhere ignored');
    }
    expect(fs.existsSync(path.join(root, 'var/lib'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'var/backups'))).toBe(false);

    fs.writeFileSync(path.join(root, 'srv/coffer/coffer.db'), 'data');
    expect(install(['--root', root, '--uninstall', '--purge']).code).toBe(0);
    expect(fs.existsSync(path.join(root, 'srv/coffer'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'srv/coffer-backups'))).toBe(true);
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
    // Under it the runtime loses its JIT and cannot tell systemd it is ready (test/cli/systemd.test.ts).
    expect(unit).not.toContain('MemoryDenyWriteExecute=true');
    expect(unit).toContain(`ReadWritePaths=${path.join(root, 'var/lib/coffer')}`);
    expect(fs.statSync(path.join(root, 'var/lib/coffer')).mode & 0o777).toBe(0o700);
    if (Bun.which('systemd-analyze')) {
      const verify = Bun.spawnSync(['systemd-analyze', 'verify', unitFile], { stdout: 'pipe', stderr: 'pipe' });
      expect(verify.stderr.toString()).toBe('');
      expect(verify.exitCode).toBe(0);
    } else {
      skipHere('systemd-analyze verify of the unit', 'systemd-analyze is not installed (apt-get install systemd)');
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

  test('directories with spaces (and a %) are each one quoted word in the unit, as systemd splits on blanks: verify reads them whole', () => {
    const root = tempDir('coffer-install-');
    dirs.push(root);
    const data = path.join(root, 'my data 100%');
    const backups = path.join(root, 'my backups');
    const prefix = path.join(root, 'my apps');
    const args = ['--no-systemd', '--binary', fakeBinary(root, '0.3.0'), '--prefix', prefix, '--data-dir', data, '--backup-dir', backups];
    const r = install([...args, '--config-dir', path.join(root, 'etc'), '--unit-dir', path.join(root, 'units')]);
    expect(r.code).toBe(0);
    const unitFile = path.join(root, 'units/coffer.service');
    const unit = fs.readFileSync(unitFile, 'utf8');
    expect(unit).toContain(`ReadWritePaths="${data.replace('%', '%%')}" "-${backups}"\n`);
    expect(unit).toContain(`ExecStart="${path.join(prefix, 'bin/coffer')}" serve\n`);
    expect(unit).toContain(`Documentation=file:${prefix.replace(' ', '%%20')}/share/doc/coffer/README.md\n`);
    expect(fs.statSync(data).isDirectory()).toBe(true);
    if (Bun.which('systemd-analyze')) {
      const verify = Bun.spawnSync(['systemd-analyze', 'verify', unitFile], { stdout: 'pipe', stderr: 'pipe' });
      expect(verify.stderr.toString()).toBe('');
      expect(verify.exitCode).toBe(0);
    } else {
      skipHere('systemd-analyze verify of the unit', 'systemd-analyze is not installed (apt-get install systemd)');
    }
  });

  test('the unit is hardened to an exposure of about 2 (systemd-analyze security) and verifies clean', () => {
    const root = tempDir('coffer-install-');
    dirs.push(root);
    expect(install(['--root', root, '--binary', fakeBinary(root, '0.5.0')]).code).toBe(0);
    const unitFile = path.join(root, 'etc/systemd/system/coffer.service');
    const unit = fs.readFileSync(unitFile, 'utf8');
    for (const line of [
      'CapabilityBoundingSet=\n',
      'SystemCallFilter=@system-service',
      'SystemCallArchitectures=native',
      'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6',
      'ProtectKernelLogs=true',
      'LockPersonality=true',
      'RestrictNamespaces=true',
    ]) {
      expect(unit).toContain(line);
    }
    if (!Bun.which('systemd-analyze')) {
      skipHere('the systemd-analyze security check', 'systemd-analyze is not installed (apt-get install systemd)');
      return;
    }
    const r = Bun.spawnSync(['systemd-analyze', 'security', '--offline=true', unitFile], { stdout: 'pipe', stderr: 'pipe' });
    const exposure = Number(/Overall exposure level for coffer\.service: ([\d.]+)/.exec(r.stdout.toString())?.[1]);
    expect(exposure).toBeLessThanOrEqual(2.5);
  });

  test('--bind-low-ports grants only CAP_NET_BIND_SERVICE; a low port without it is refused', () => {
    const root = tempDir('coffer-install-');
    dirs.push(root);
    const refused = install(['--root', root, '--binary', fakeBinary(root, '0.6.0'), '--port', '443']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--bind-low-ports');
    expect(fs.existsSync(path.join(root, 'usr'))).toBe(false);
    const r = install([
      '--root',
      root,
      '--binary',
      fakeBinary(root, '0.6.0'),
      '--port',
      '443',
      '--bind-low-ports',
      '--email',
      'me@home.test',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('users create me@home.test --admin');
    const unit = fs.readFileSync(path.join(root, 'etc/systemd/system/coffer.service'), 'utf8');
    expect(unit).toContain('CapabilityBoundingSet=CAP_NET_BIND_SERVICE');
    expect(unit).toContain('AmbientCapabilities=CAP_NET_BIND_SERVICE');
    // A private user namespace would void the capability.
    expect(unit).not.toContain('PrivateUsers=true');
  });

  test('without a running systemd it stops before changing anything and says what to do', () => {
    const root = tempDir('coffer-install-');
    dirs.push(root);
    const r = install(['--binary', fakeBinary(root, '0.7.0'), '--prefix', path.join(root, 'usr')], {
      COFFER_SYSTEMD_RUN_DIR: path.join(root, 'no-systemd'),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('systemd is not running');
    expect(r.stderr).toContain('--no-systemd');
    expect(fs.existsSync(path.join(root, 'usr'))).toBe(false);
  });

  test('--uninstall --purge finishes when parts of the install are already gone, and keeps backups', () => {
    const root = tempDir('coffer-install-');
    dirs.push(root);
    expect(install(['--root', root, '--binary', fakeBinary(root, '0.8.0')]).code).toBe(0);
    fs.writeFileSync(path.join(root, 'var/backups/coffer/coffer-2026-01-01.tar'), 'backup');
    fs.mkdirSync(path.join(root, 'etc/systemd/system/coffer.service.d'));
    fs.writeFileSync(path.join(root, 'etc/systemd/system/coffer.service.d/override.conf'), '[Service]\n');
    // Half removed already: no executable, no unit, no env file.
    fs.rmSync(path.join(root, 'usr/local/bin/coffer'));
    fs.rmSync(path.join(root, 'etc/systemd/system/coffer.service'));
    fs.rmSync(path.join(root, 'etc/coffer'), { recursive: true });
    const r = install(['--root', root, '--uninstall', '--purge']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Kept your backups');
    expect(fs.existsSync(path.join(root, 'var/lib/coffer'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'etc/systemd/system/coffer.service.d'))).toBe(false);
    expect(fs.readFileSync(path.join(root, 'var/backups/coffer/coffer-2026-01-01.tar'), 'utf8')).toBe('backup');
    // And once more, with nothing left at all.
    expect(install(['--root', root, '--uninstall', '--purge']).code).toBe(0);
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
      '--bind-low-ports',
      '--backup-dir',
      '--email',
      'systemctl edit coffer',
      'DESTDIR',
      'COFFER_BINARY',
      'secrets.json',
    ]) {
      expect(r.stdout).toContain(word);
    }
  });
});
