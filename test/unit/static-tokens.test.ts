import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { readStaticTokens, resolveStaticTokens } from '../../src/web/static-tokens.ts';

const TOKENS_CSS = `:root {
  --accent: light-dark(#2563d9, #7aa7ff);
}

/* static:begin — written in place by the build */
:root {
  /* Spacing */
  --s1: 2px;
  --s2: 4px;
  --t1: 0.72rem;
}
/* static:end */

:root[data-theme="dark"] {
  color-scheme: dark;
}
`;
const tokens = readStaticTokens(TOKENS_CSS);

describe('static design tokens', () => {
  test('reads the declarations of the marked block only', () => {
    expect([...tokens]).toEqual([
      ['--s1', '2px'],
      ['--s2', '4px'],
      ['--t1', '0.72rem'],
    ]);
    expect(readStaticTokens(':root { --s1: 2px; }').size).toBe(0);
  });

  test('drops the marked block from the stylesheet that declares it and keeps the themed tokens', () => {
    const out = resolveStaticTokens(TOKENS_CSS, tokens);
    expect(out).toContain('--accent: light-dark(#2563d9, #7aa7ff);');
    expect(out).toContain('color-scheme: dark;');
    expect(out).not.toContain('--s1');
    expect(out).not.toContain('static:');
  });

  test('writes a known token as its value, with or without a fallback, and inside other functions', () => {
    expect(resolveStaticTokens('.a { padding: var(--s1) var(--s2); gap: var( --s2 ); }', tokens)).toBe(
      '.a { padding: 2px 4px; gap: 4px; }',
    );
    expect(resolveStaticTokens('.a { margin: var(--s2, 4px) var(--s1,calc(1px + 1px)); }', tokens)).toBe('.a { margin: 4px 2px; }');
    expect(resolveStaticTokens('.a { padding: calc(var(--s2) + env(safe-area-inset-bottom)); font: var(--t1) var(--mono); }', tokens)).toBe(
      '.a { padding: calc(4px + env(safe-area-inset-bottom)); font: 0.72rem var(--mono); }',
    );
  });

  test('leaves an unknown var, but writes a known one in its fallback', () => {
    expect(resolveStaticTokens('.a { color: var(--accent); gap: var(--s12); }', tokens)).toBe(
      '.a { color: var(--accent); gap: var(--s12); }',
    );
    expect(resolveStaticTokens('.a { gap: var(--gap, var(--s2)); }', tokens)).toBe('.a { gap: var(--gap, 4px); }');
    expect(resolveStaticTokens('.a { gap: var(--s1x); margin: my-var(--s1); }', tokens)).toBe(
      '.a { gap: var(--s1x); margin: my-var(--s1); }',
    );
  });

  test('copies comments and strings as they are', () => {
    const css = '/* gap: var(--s1) */ .a::after { content: "var(--s2)"; quotes: \'var(--s1)\' "\\"var(--s1)"; gap: var(--s1); }';
    expect(resolveStaticTokens(css, tokens)).toBe(
      '/* gap: var(--s1) */ .a::after { content: "var(--s2)"; quotes: \'var(--s1)\' "\\"var(--s1)"; gap: 2px; }',
    );
  });

  test('refuses a static token made of another var, an unclosed block or more than 100 tokens', () => {
    expect(() => readStaticTokens('/* static:begin */ :root { --s3: var(--s1); } /* static:end */')).toThrow('--s3 must be a plain value');
    expect(() => readStaticTokens('/* static:begin */ :root { --s1: 2px; }')).toThrow('static:end');
    const many = Array.from({ length: 101 }, (_, n) => `--s${n}: ${n}px;`).join(' ');
    expect(() => readStaticTokens(`/* static:begin */ :root { ${many} } /* static:end */`)).toThrow('more than 100');
  });

  test('web/ui/tokens.css keeps the colours themed and makes spacing, radii and the type scale static', () => {
    const declared = readStaticTokens(fs.readFileSync(path.resolve(import.meta.dir, '../../web/ui/tokens.css'), 'utf8'));
    expect(declared.get('--s1')).toBe('2px');
    expect(declared.get('--r5')).toBe('6px');
    expect(declared.get('--t11')).toBe('1rem');
    expect([...declared.keys()].filter((name) => !/^--[srt]\d+$/.test(name))).toEqual([]);
  });
});
