/**
 * Static design tokens: custom properties declared between `static:begin` and `static:end` comments in
 * `web/ui/tokens.css`, the same in every theme. The build writes each `var(--name)` of one as its value and
 * drops the block, so the sheet names its spacing once without paying a `var()` per use; the colours stay
 * custom properties because the theme changes them.
 */

const BEGIN = '/* static:begin';
const END = '/* static:end */';
/** Bounds: a few dozen tokens of short values; anything else in the block is a mistake to report. */
const MAX_TOKENS = 100;
const MAX_VALUE = 64;
const DECLARATION = /(--[a-z][a-z0-9-]*)\s*:\s*([^;{}]+?)\s*[;}]/gi;

/** The marked block of a stylesheet and what is left without it; `block` is null when there is none. */
function splitBlock(css: string): { block: string | null; rest: string } {
  const start = css.indexOf(BEGIN);
  if (start < 0) return { block: null, rest: css };
  const end = css.indexOf(END, start);
  if (end < 0) throw new Error('static tokens: "static:begin" without "/* static:end */"');
  return { block: css.slice(start, end), rest: css.slice(0, start) + css.slice(end + END.length) };
}

/** The static tokens a stylesheet declares in its marked block, by name (`--s1` → `2px`). */
export function readStaticTokens(css: string): Map<string, string> {
  const tokens = new Map<string, string>();
  const { block } = splitBlock(css);
  if (block === null) return tokens;
  const body = block.replace(/\/\*[\s\S]*?\*\//g, '');
  for (const [, name, value] of body.matchAll(DECLARATION) as IterableIterator<[string, string, string]>) {
    if (value.includes('var(') || value.length > MAX_VALUE) throw new Error(`static tokens: ${name} must be a plain value`);
    tokens.set(name, value);
    if (tokens.size > MAX_TOKENS) throw new Error(`static tokens: more than ${MAX_TOKENS}`);
  }
  return tokens;
}

/** The index just past the `)` closing the parenthesis opened before `from`, skipping strings and comments. */
function closingParen(css: string, from: number): number {
  let depth = 1;
  for (let i = from; i < css.length; i++) {
    const c = css[i];
    if (c === '"' || c === "'") i = stringEnd(css, i);
    else if (c === '/' && css[i + 1] === '*') i = commentEnd(css, i);
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return -1;
}

function stringEnd(css: string, start: number): number {
  const quote = css[start];
  for (let i = start + 1; i < css.length; i++) {
    if (css[i] === '\\') i++;
    else if (css[i] === quote || css[i] === '\n') return i;
  }
  return css.length;
}

function commentEnd(css: string, start: number): number {
  const end = css.indexOf('*/', start + 2);
  return end < 0 ? css.length : end + 1;
}

/**
 * Writes every `var(--name)` or `var(--name, fallback)` of a known token as its value, in one pass over the
 * text: comments and strings are copied as they are, an unknown var stays (a known one in its fallback is
 * still written out) and a stylesheet's own marked block is dropped.
 */
export function resolveStaticTokens(css: string, tokens: ReadonlyMap<string, string>): string {
  const source = splitBlock(css).rest;
  if (tokens.size === 0) return source;
  let out = '';
  let copied = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '"' || c === "'") i = stringEnd(source, i);
    else if (c === '/' && source[i + 1] === '*') i = commentEnd(source, i);
    else if (c === 'v' && source.startsWith('var(', i) && !/[\w-]/.test(source[i - 1] ?? '')) {
      const name = /^var\(\s*(--[\w-]+)\s*[,)]/.exec(source.slice(i, i + 80))?.[1];
      const value = name === undefined ? undefined : tokens.get(name);
      const end = value === undefined ? -1 : closingParen(source, i + 4);
      if (value !== undefined && end > 0) {
        out += source.slice(copied, i) + value;
        copied = end;
        i = end - 1;
      }
    }
  }
  return out + source.slice(copied);
}
