import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { README, readmeWithReference } from '../../cli/reference.ts';
import { ENVIRONMENT_HELP } from '../../src/config.ts';

describe('README', () => {
  test('the command-line reference is the current --help of every command (regenerate with npm run docs:cli)', () => {
    const readme = fs.readFileSync(README, 'utf8');
    expect(readmeWithReference(readme)).toBe(readme);
  });

  test('has the operations sections', () => {
    const readme = fs.readFileSync(README, 'utf8');
    for (const heading of ['## Install on a server', '## Command line', '## Back up and restore', '## Monitoring'])
      expect(readme).toContain(heading);
  });

  test('every environment variable is in the configuration table and in the coffer.env that install.sh writes', () => {
    const readme = fs.readFileSync(README, 'utf8');
    const install = fs.readFileSync(path.resolve(import.meta.dir, '../../install.sh'), 'utf8');
    const template = install.slice(install.indexOf('<<ENV'), install.indexOf('\nENV\n'));
    const variables = [...ENVIRONMENT_HELP.matchAll(/^ {2}([A-Z][A-Z0-9_]+)\s/gm)].map((m) => m[1]!);
    expect(variables.length).toBeGreaterThan(15);
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Reverse proxy and HTTPS'));
    for (const name of [...variables, 'BUN_JSC_forceRAMSize']) {
      expect({ name, inTable: table.includes(`\`${name}\``) }).toEqual({ name, inTable: true });
      // COFFER_CONFIG names the file itself, so it cannot be set inside it.
      if (name === 'COFFER_CONFIG') continue;
      expect({ name, inTemplate: new RegExp(`^#? ?${name}=`, 'm').test(template) }).toEqual({ name, inTemplate: true });
    }
  });

  test('links nowhere outside the repository; says which Node it needs, as package.json does', () => {
    const readme = fs.readFileSync(README, 'utf8');
    const links = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(links.filter((l) => /^[a-z]+:/i.test(l) || l.startsWith('../') || l.startsWith('/'))).toEqual([]);
    // Outside code (configuration values there are not links), only example addresses: loopback, LAN, example domains.
    const prose = readme.replace(/```[\s\S]*?```/g, '').replace(/`[^`]*`/g, '');
    const urls = [...prose.matchAll(/https?:\/\/([^/\s`'"):]+)/g)].map((m) => m[1]!);
    expect(
      urls.filter(
        (host) => !/^(localhost|127\.0\.0\.1|<host>|192\.168\.\d+\.\d+|\$.*|([\w-]+\.)*(example(\.[a-z]+)?|lan|home|internal))$/.test(host),
      ),
    ).toEqual([]);
    const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dir, '../../package.json'), 'utf8'));
    expect(pkg.engines.node).toBe('>=20.19');
    expect(readme).toContain('Node.js 20.19 or later');
  });
});
