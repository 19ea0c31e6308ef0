import { createHash } from 'node:crypto';
import { escapeHtml } from '../lib/html.ts';
import { NOTICE_STYLE } from './error-page.ts';
import { pageShell } from './page.ts';

const STYLE = `${NOTICE_STYLE}
html,body{height:100%}#editor{height:100%}iframe{display:block;border:0}`;

// Reads the signed config from the data block and starts the editor; says so when the server's script did not load.
const BOOT = `(function () {
  var data = JSON.parse(document.getElementById('docserver-config').textContent);
  if (typeof DocsAPI === 'undefined' || !DocsAPI.DocEditor) {
    document.getElementById('editor').hidden = true;
    document.getElementById('unavailable').hidden = false;
    return;
  }
  var config = data.config;
  config.token = data.token;
  config.type = window.matchMedia('(max-width: 600px)').matches ? 'mobile' : 'desktop';
  config.width = '100%';
  config.height = '100%';
  new DocsAPI.DocEditor('editor', config);
})();`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The viewer's CSP: script and frames from the document server's origin only (plus the inline start-up
 * script by its hash), nothing else from anywhere. Framing by Coffer's own pages is allowed, by no one else.
 */
function editorCsp(docserverOrigin: string): string {
  return [
    "default-src 'none'",
    `script-src ${docserverOrigin} ${sha256(BOOT)}`,
    `frame-src ${docserverOrigin}`,
    `connect-src ${docserverOrigin}`,
    `style-src ${sha256(STYLE)}`,
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
  ].join('; ');
}

/** JSON inside a script data block: `<` escaped, so a file name cannot close the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export interface EditorPage {
  html: string;
  csp: string;
}

/** GET /api/docserver/viewer/:id: a page that loads the document server's api.js and opens the editor with the signed config. */
export function renderEditorPage(input: {
  title: string;
  config: unknown;
  token: string;
  docserverJsUrl: string;
  docserverOrigin: string;
}): EditorPage {
  const body = `<div id="editor"></div>
<main id="unavailable" hidden><div class="card"><h1>The document editor is not reachable</h1>
<p>Coffer could not load the editor from the document server at ${escapeHtml(input.docserverOrigin)}. Check that it is running and that this browser can reach it, then reload this page.</p>
<p><a href="/">Back to your files</a></p></div></main>
<script type="application/json" id="docserver-config">${scriptJson({ config: input.config, token: input.token })}</script>
<script src="${escapeHtml(input.docserverJsUrl)}"></script>
<script>${BOOT}</script>`;
  return { html: pageShell(`${input.title} – Coffer`, body, { style: STYLE }), csp: editorCsp(input.docserverOrigin) };
}
