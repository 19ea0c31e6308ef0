import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { buildWebBundle } from '../../src/web/app-bundle.ts';
import { readStaticTokens } from '../../src/web/static-tokens.ts';

const WEB = path.resolve(import.meta.dir, '../../web');
/**
 * Bytes of the stylesheet the page loads, minified: 47,808 when the styles were one file (web/styles.css),
 * 47,671 once split beside their screens, 47,752 with the radii and type scale as tokens, 46,910 once the build
 * wrote the static tokens (spacing, radii, type scale) in place, 47,917 with a deep path's breadcrumb folded into its
 * "…" menu, 47,983 with the phone's upload panel leaving the New button its room, 47,988 with the breadcrumb's row
 * leaving room inside its clip for a focus ring, 48,014 with a phone's current tab scrolled clear of the row's fade, 48,061
 * with a sub-user's Confirm email as wide as its label. It may shrink; growing it past this takes a reason and a new figure.
 */
const CSS_BUDGET = 48_061;

const files = (ext: RegExp) =>
  fs
    .readdirSync(WEB, { recursive: true, encoding: 'utf8' })
    .filter((f) => ext.test(f))
    .map((f) => path.join(WEB, f));

/** The CSS files a file pulls in: `@import "./x.css"` in a stylesheet, `import './x.css'` in a module. */
function cssImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const pattern = file.endsWith('.css') ? /^@import\s+["']([^"']+)["']/gm : /^import\s+["']([^"']+\.css)["']/gm;
  return [...text.matchAll(pattern)].map((m) => path.resolve(path.dirname(file), m[1]!));
}

describe('the web app’s styles', () => {
  test('every CSS file under web/ reaches the bundle (from web/app/main.tsx through web/styles.css, or imported by its module), and every import names a file that exists', () => {
    const modules = files(/\.tsx?$/);
    const stylesheets = files(/\.css$/);
    const reached = new Set<string>();
    const missing: string[] = [];
    const follow = (from: string, css: string) => {
      if (!fs.existsSync(css)) missing.push(`${path.relative(WEB, from)} imports ${path.relative(WEB, css)}`);
      else if (!reached.has(css)) {
        reached.add(css);
        for (const next of cssImports(css)) follow(css, next);
      }
    };
    for (const m of modules) for (const css of cssImports(m)) follow(m, css);
    expect(cssImports(path.join(WEB, 'app/main.tsx'))).toEqual([path.join(WEB, 'styles.css')]);
    expect(missing).toEqual([]);
    expect(stylesheets.filter((f) => !reached.has(f)).map((f) => path.relative(WEB, f))).toEqual([]);
  });

  test(`the page loads one stylesheet of at most ${CSS_BUDGET} bytes, the static tokens written in place and the themed ones kept`, async () => {
    const bundle = await buildWebBundle();
    const sheets = [...bundle.assets.values()].filter((a) => a.path.endsWith('.css'));
    expect(sheets.map((s) => s.path)).toHaveLength(1);
    expect(new TextDecoder().decode(bundle.index.body)).toContain(`<link rel="stylesheet" href="${sheets[0]!.path}">`);
    expect(sheets[0]!.body.byteLength).toBeLessThanOrEqual(CSS_BUDGET);
    const css = new TextDecoder().decode(sheets[0]!.body);
    const statics = [...readStaticTokens(fs.readFileSync(path.join(WEB, 'ui/tokens.css'), 'utf8')).keys()];
    expect(statics.length).toBeGreaterThan(0);
    expect(statics.filter((name) => css.includes(`${name}:`) || css.includes(`var(${name})`) || css.includes(`var(${name},`))).toEqual([]);
    expect(css).toContain('var(--accent)');
  });
});
