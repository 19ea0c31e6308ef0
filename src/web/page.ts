import { escapeHtml } from '../lib/html.ts';
import { stripBidiControls } from '../services/files/names.ts';

/** The palette and type of Coffer's plain server-rendered pages (share links, notices), light and dark. */
export const PAGE_BASE_STYLE = `:root{color-scheme:light dark;--fg:#1d2433;--muted:#5b6475;--bg:#f6f7f9;--card:#fff;--line:#e3e6eb;--accent:#2f6fde}
@media (prefers-color-scheme:dark){:root{--fg:#e7eaf0;--muted:#a0a8b8;--bg:#14171c;--card:#1c2027;--line:#2c313a;--accent:#6ea0ff}}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}`;

/** A title's first 69 UTF-16 units, less half a surrogate pair at the cut (it would show as a replacement character). */
const cutTitle = (title: string) => title.slice(0, 69).replace(/[\uD800-\uDBFF]$/, '');

/** A whole server-rendered page around `body`, with `style` inline (the caller's CSP allows it by hash). */
export function pageShell(title: string, body: string, opts: { style: string; referrer?: 'no-referrer' }): string {
  // A title cannot isolate text, so a name in it loses its bidirectional controls instead.
  const plain = stripBidiControls(title);
  const referrer = opts.referrer ? `\n<meta name="referrer" content="${opts.referrer}">` : '';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">${referrer}
<title>${escapeHtml(plain.length > 70 ? `${cutTitle(plain)}…` : plain)}</title>
<style>${opts.style}</style>
</head>
<body>
${body}
</body>
</html>
`;
}
