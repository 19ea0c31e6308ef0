import { createHash } from 'node:crypto';
import { escapeHtml } from '../lib/html.ts';
import { PAGE_BASE_STYLE, pageShell } from './page.ts';

/** The look of Coffer's notices outside the app: a card in the middle. */
export const NOTICE_STYLE = `${PAGE_BASE_STYLE}
main{max-width:560px;margin:0 auto;padding:48px 16px}.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:20px 24px}
h1{font-size:1.3rem;margin:0 0 8px;overflow-wrap:anywhere}p{margin:8px 0;color:var(--muted);overflow-wrap:anywhere}a{color:var(--accent)}`;

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
  return { html: pageShell(title, body, { style: NOTICE_STYLE }), csp: ERROR_CSP };
}
