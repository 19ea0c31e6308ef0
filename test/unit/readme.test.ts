import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { CLI_REFERENCE, withCliReference } from '../../cli/reference.ts';
import { ENVIRONMENT_HELP } from '../../src/config.ts';

const ROOT = path.resolve(import.meta.dir, '../..');
const README = path.join(ROOT, 'README.md');
const DOCS = path.join(ROOT, 'docs');
const read = (file: string) => fs.readFileSync(file, 'utf8');
/** README.md and every docs/*.md. */
function documents(): string[] {
  const docs = fs.readdirSync(DOCS).filter((f) => f.endsWith('.md'));
  return [README, ...docs.sort().map((f) => path.join(DOCS, f))];
}
const withoutCode = (text: string) => text.replace(/```[\s\S]*?```/g, '');
/** The source files a clone holds, where comments live: src, cli, web, test, scripts, bench. */
function sources(): string[] {
  return ['src', 'cli', 'web', 'test', 'scripts', 'bench'].flatMap((dir) =>
    fs
      .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(ts|tsx|css)$/.test(f) && !/(^|\/)(node_modules|dist)\//.test(f))
      .map((f) => path.join(ROOT, dir, f)),
  );
}

/** The anchors GitHub gives a document's headings (github-slugger: lower case, punctuation dropped, spaces to dashes, -1, -2... for repeats). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of withoutCode(text).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

describe('README and docs/', () => {
  test('the command-line reference is the current --help of every command (regenerate with npm run docs:cli)', () => {
    const doc = read(CLI_REFERENCE);
    expect(withCliReference(doc)).toBe(doc);
  });

  test('has the operations sections', () => {
    const sections: Record<string, string[]> = {
      'README.md': ['## Install on a server', '## First sign-in', '## Where everything else is'],
      'docs/install.md': ['## Install on a server'],
      'docs/cli.md': ['## Command line'],
      'docs/backup.md': [
        '## Back up and restore',
        '### Rotating the master key',
        '## Scheduled backups',
        '## Encrypted backups',
        '## Upgrading and rolling back',
        '## Leaving Coffer',
      ],
      'docs/monitoring.md': ['## Monitoring', '### Logs'],
    };
    for (const [file, headings] of Object.entries(sections)) {
      const lines = read(path.join(ROOT, file)).split('\n');
      for (const heading of headings) expect({ file, heading, found: lines.includes(heading) }).toEqual({ file, heading, found: true });
    }
  });

  test("the README's table links every docs/*.md, and the README fits on a screen (at most 300 lines)", () => {
    const readme = read(README);
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    const table = readme.slice(readme.indexOf('## Where everything else is'));
    for (const file of documents().slice(1)) {
      const link = `](docs/${path.basename(file)})`;
      expect({ link, inTable: table.includes(link) }).toEqual({ link, inTable: true });
    }
  });

  test('every environment variable is in the configuration table and in the coffer.env that install.sh writes', () => {
    const doc = read(path.join(DOCS, 'configuration.md'));
    const install = read(path.join(ROOT, 'install.sh'));
    const template = install.slice(install.indexOf('<<ENV'), install.indexOf('\nENV\n'));
    const variables = [...ENVIRONMENT_HELP.matchAll(/^ {2}([A-Z][A-Z0-9_]+)\s/gm)].map((m) => m[1]!);
    expect(variables.length).toBeGreaterThan(15);
    const start = doc.indexOf('\n## Configuration\n');
    const end = doc.indexOf('\n## Reverse proxy and HTTPS\n');
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const table = doc.slice(start, end);
    for (const name of [...variables, 'BUN_JSC_forceRAMSize']) {
      expect({ name, inTable: table.includes(`\`${name}\``) }).toEqual({ name, inTable: true });
      // COFFER_CONFIG names the file itself, so it cannot be set inside it.
      if (name === 'COFFER_CONFIG') continue;
      expect({ name, inTemplate: new RegExp(`^#? ?${name}=`, 'm').test(template) }).toEqual({ name, inTemplate: true });
    }
  });

  test('every variable the configuration table names is in `coffer serve --help`', () => {
    const doc = read(path.join(DOCS, 'configuration.md'));
    const table = doc.slice(doc.indexOf('\n## Configuration\n'), doc.indexOf('\n## Reverse proxy and HTTPS\n'));
    // The environment column of each row: `| flag | variable(s) | default | meaning |`.
    const named = [...table.matchAll(/^\|[^|\n]*\|([^|\n]*)\|/gm)].flatMap((m) =>
      [...m[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((v) => v[1]!),
    );
    expect(named.length).toBeGreaterThan(50);
    // The runtime's own variable, not Coffer's.
    const missing = named.filter((name) => name !== 'BUN_JSC_forceRAMSize' && !new RegExp(`\\b${name}\\b`).test(ENVIRONMENT_HELP));
    expect(missing).toEqual([]);
  });

  test('comments cite what a clone holds: no source file names the contract documents kept outside the repository, and every "docs/<page>.md › <Section>" is a heading of that page', () => {
    const files = sources();
    expect(files.length).toBeGreaterThan(100);
    let pointers = 0;
    for (const file of files) {
      // This file spells the two names in its own pattern.
      if (file === import.meta.path) continue;
      const where = path.relative(ROOT, file);
      const text = read(file);
      const cites = text.split('\n').filter((line) => /\b(SPEC|COMPAT)\b/.test(line));
      expect({ where, cites }).toEqual({ where, cites: [] });
      for (const [, page, after] of text.matchAll(/docs\/([\w-]+\.md) › ([^\n]+)/g)) {
        pointers++;
        const doc = path.join(DOCS, page!);
        const headings = fs.existsSync(doc) ? [...withoutCode(read(doc)).matchAll(/^#{1,6} +(.+?) *$/gm)].map((m) => m[1]!) : [];
        const named = headings.some((h) => after!.startsWith(h) && !/^\w/.test(after!.slice(h.length)));
        expect({ where, pointer: `docs/${page} › ${after}`, named }).toEqual({ where, pointer: `docs/${page} › ${after}`, named: true });
      }
    }
    expect(pointers).toBeGreaterThan(50);
    for (const file of documents()) {
      const cites = read(file)
        .split('\n')
        .filter((line) => /\b(SPEC|COMPAT)\b/.test(line));
      expect({ where: path.relative(ROOT, file), cites }).toEqual({ where: path.relative(ROOT, file), cites: [] });
    }
  });

  test('links nowhere outside the repository, every link and anchor leads somewhere; says which Node it needs, as package.json does', () => {
    for (const file of documents()) {
      const text = read(file);
      const where = path.relative(ROOT, file);
      const links = [...text.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
      expect({ where, outside: links.filter((l) => /^[a-z]+:/i.test(l) || l.startsWith('/')) }).toEqual({ where, outside: [] });
      for (const link of links) {
        const [target = '', anchor] = link.split('#');
        const resolved = target ? path.resolve(path.dirname(file), target) : file;
        const inside = !path.relative(ROOT, resolved).startsWith('..');
        expect({ where, link, inside, exists: fs.existsSync(resolved) }).toEqual({ where, link, inside: true, exists: true });
        if (anchor !== undefined)
          expect({ where, link, anchor: anchors(read(resolved)).has(anchor) }).toEqual({ where, link, anchor: true });
      }
      // Outside code (configuration values there are not links), only example addresses: loopback, LAN, example domains.
      const prose = withoutCode(text).replace(/`[^`]*`/g, '');
      const urls = [...prose.matchAll(/https?:\/\/([^/\s`'"):]+)/g)].map((m) => m[1]!);
      const foreign = urls.filter(
        (host) => !/^(localhost|127\.0\.0\.1|<host>|192\.168\.\d+\.\d+|\$.*|([\w-]+\.)*(example(\.[a-z]+)?|lan|home|internal))$/.test(host),
      );
      expect({ where, foreign }).toEqual({ where, foreign: [] });
    }
    const pkg = JSON.parse(read(path.join(ROOT, 'package.json')));
    expect(pkg.engines.node).toBe('>=20.19');
    expect(read(README)).toContain('Node.js 20.19 or later');
  });
});
