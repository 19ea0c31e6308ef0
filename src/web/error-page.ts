import { createHash } from 'node:crypto';
import { escapeHtml } from '../lib/html.ts';
import { stripBidiControls } from '../services/names.ts';

/** The look of Coffer's plain pages outside the app (a card in the middle, light and dark). */
export const NOTICE_STYLE = `:root{color-scheme:light dark;--fg:#1d2433;--muted:#5b6475;--bg:#f6f7f9;--card:#fff;--line:#e3e6eb;--accent:#2f6fde}
@media (prefers-color-scheme:dark){:root{--fg:#e7eaf0;--muted:#a0a8b8;--bg:#14171c;--card:#1c2027;--line:#2c313a;--accent:#6ea0ff}}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:560px;margin:0 auto;padding:48px 16px}.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:20px 24px}
h1{font-size:1.3rem;margin:0 0 8px;overflow-wrap:anywhere}p{margin:8px 0;color:var(--muted);overflow-wrap:anywhere}a{color:var(--accent)}`;

/** A whole page around `body`, with `style` inline (the caller's CSP allows it by hash). */
export function noticePage(title: string, body: string, style = NOTICE_STYLE): string {
  // A title cannot isolate text, so a name in it loses its bidirectional controls instead.
  const plain = stripBidiControls(title);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(plain.length > 70 ? `${plain.slice(0, 69)}…` : plain)}</title>
<style>${style}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

const TITLES: Record<number, string> = {
  400: 'This cannot be opened',
  401: 'Sign in first',
  403: 'Not allowed',
  404: 'Not found',
  424: 'Not set up',
  429: 'Too many requests',
};

/** No script at all; framing by Coffer's own pages only. */
const ERROR_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(NOTICE_STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`;

/** The refusal of a route a browser tab opens (http/policy.ts `htmlErrors`): a page with the reason. */
export function renderErrorPage(status: number, message: string): { html: string; csp: string } {
  const title = TITLES[status] ?? 'Something went wrong';
  const hint = status === 401 ? '<p>Sign in to Coffer in this browser, then try again.</p>' : '';
  const body = `<main><div class="card"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${hint}
<p><a href="/">Back to your files</a></p></div></main>`;
  return { html: noticePage(title, body), csp: ERROR_CSP };
}
