import { createHash } from 'node:crypto';
import { escapeHtml } from '../lib/html.ts';
import { formatSize } from '../contract/size.ts';
import { stripBidiControls } from '../services/files/names.ts';
import { PAGE_BASE_STYLE, pageShell } from './page.ts';
import type { PublicItem } from '../services/files/item-views.ts';

const STYLE = `${PAGE_BASE_STYLE}
*{box-sizing:border-box}
main{max-width:960px;margin:0 auto;padding:16px}header{display:flex;flex-wrap:wrap;gap:12px;align-items:center;justify-content:space-between;margin:8px 0 16px}
h1{font-size:1.35rem;margin:0;overflow-wrap:anywhere}nav{color:var(--muted);font-size:.9rem;overflow-wrap:anywhere}nav a{color:inherit}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px}
.button{display:inline-block;padding:10px 18px;border-radius:8px;background:var(--accent);color:#fff;text-decoration:none;font-weight:600}
table{width:100%;border-collapse:collapse}th,td{padding:10px 8px;border-bottom:1px solid var(--line);text-align:left}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
td a{color:var(--fg);text-decoration:none;overflow-wrap:anywhere}
td a:hover{text-decoration:underline}
.kind{width:2rem;color:var(--muted)}.icon{width:20px;height:20px;vertical-align:-4px}
h1 .icon{width:26px;height:26px;vertical-align:-5px}.num{white-space:nowrap;color:var(--muted)}
.empty{color:var(--muted);text-align:center;padding:32px}
.meta{color:var(--muted);margin:8px 0 16px}.preview{display:block;max-width:100%;max-height:80vh;margin:16px auto 0;border-radius:8px;object-fit:contain}
.pager{margin-top:16px;text-align:right}.pager a{color:var(--accent)}
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px;margin:0 0 16px;padding:0;list-style:none}
.gallery a{display:block;border-radius:8px;overflow:hidden;background:var(--line);aspect-ratio:4/3}
.gallery img{display:block;width:100%;height:100%;object-fit:cover}
.lightbox{display:none;position:fixed;inset:0;z-index:1;background:rgba(8,10,14,.94);color:#fff;flex-direction:column}
.lightbox:target{display:flex}.lightbox figure{flex:1;min-height:0;margin:0;display:flex;align-items:center;justify-content:center;padding:8px}
.lightbox figure img{max-width:100%;max-height:100%;object-fit:contain}
.lightbox .bar{display:flex;gap:12px;align-items:center;justify-content:space-between;padding:10px 16px}
.lightbox .bar a{color:#fff;padding:8px 12px;border-radius:8px;background:rgba(255,255,255,.14);text-decoration:none;white-space:nowrap}
.lightbox .bar span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
@media (prefers-color-scheme:dark){.button{color:#0b1220}}
@media (max-width:600px){.hide-small{display:none}main{padding:10px}th,td{padding:8px 4px}.gallery{grid-template-columns:repeat(auto-fill,minmax(104px,1fr))}}`;

/** CSP of every share page: no scripts, no external anything; the one stylesheet is allowed by its hash. */
export const SHARE_PAGE_CSP = `default-src 'none'; img-src 'self'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

// Inline SVG, so icons show without emoji fonts or any request beyond the page itself.
const FOLDER_ICON =
  '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true"><path fill="#f2b84b" d="M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z"/></svg>';
const FILE_ICON =
  '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true"><path fill="#8fa3bf" d="M6 2h8l6 6v12a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2z"/><path fill="#d5deea" d="M14 2v6h6z"/></svg>';

function layout(title: string, body: string): string {
  return pageShell(title, `<main>\n${body}\n</main>`, { style: STYLE, referrer: 'no-referrer' });
}

const enc = encodeURIComponent;
/** An item name in page text: isolated, so bidirectional controls in it cannot reorder what is around it. */
const nameHtml = (name: string) => `<bdi>${escapeHtml(name)}</bdi>`;
const date = (iso: string) => iso.slice(0, 10);

export interface FolderPageView {
  token: string;
  folder: PublicItem;
  /** Root first; the last entry is the folder shown. */
  trail: PublicItem[];
  isRoot: boolean;
  items: PublicItem[];
  nextCursor: string | null;
  limit: number;
}

export function renderFolderPage(v: FolderPageView): string {
  const base = `/s/${enc(v.token)}`;
  const folderHref = (id: string, isRoot: boolean) => (isRoot ? base : `${base}/folder/${enc(id)}`);
  const crumbs = v.trail
    .map((f, i) => (i === v.trail.length - 1 ? nameHtml(f.name) : `<a href="${folderHref(f.id, i === 0)}">${nameHtml(f.name)}</a>`))
    .join(' / ');
  const zipHref = v.isRoot ? `${base}/zip` : `${base}/file/${enc(v.folder.id)}`;
  const rows = v.items
    .map((item) => {
      const href = item.type === 'folder' ? `${base}/folder/${enc(item.id)}` : `${base}/file/${enc(item.id)}`;
      return `<tr><td class="kind">${item.type === 'folder' ? FOLDER_ICON : FILE_ICON}</td><td><a href="${href}">${nameHtml(item.name)}</a></td><td class="num">${
        item.size === null ? '' : escapeHtml(formatSize(item.size))
      }</td><td class="num hide-small">${escapeHtml(date(item.modified))}</td></tr>`;
    })
    .join('\n');
  // Pictures first, as a gallery; each opens a full-screen view (CSS :target, as the page runs no script) with
  // the previous and next picture, the download of that one, and a way back.
  const pictures = v.items.filter((item) => item.hasThumbnail);
  const thumb = (id: string, size: 'small' | 'large') => `${base}/thumbnail/${enc(id)}${size === 'large' ? '?size=large' : ''}`;
  const gallery = pictures.length
    ? `<ul class="gallery" aria-label="Pictures">${pictures
        .map(
          (p) =>
            `<li><a href="#view-${enc(p.id)}"><img src="${thumb(p.id, 'small')}" alt="${escapeHtml(stripBidiControls(p.name))}" loading="lazy" decoding="async"></a></li>`,
        )
        .join('')}</ul>
${pictures
  .map((p, i) => {
    const step = (to: PublicItem | undefined, label: string) => (to ? `<a href="#view-${enc(to.id)}">${label}</a>` : '');
    return `<div class="lightbox" id="view-${enc(p.id)}" role="dialog" aria-label="${escapeHtml(stripBidiControls(p.name))}"><div class="bar"><a href="#">Close</a><span>${nameHtml(p.name)}</span><a href="${base}/file/${enc(p.id)}">Download</a></div><figure><img src="${thumb(p.id, 'large')}" alt="${escapeHtml(stripBidiControls(p.name))}" loading="lazy"></figure><div class="bar">${step(pictures[i - 1], '&larr; Previous')}<span>${i + 1} of ${pictures.length}</span>${step(pictures[i + 1], 'Next &rarr;')}</div></div>`;
  })
  .join('\n')}`
    : '';
  const pager = v.nextCursor
    ? `<p class="pager"><a href="${folderHref(v.folder.id, v.isRoot)}?cursor=${enc(v.nextCursor)}&amp;limit=${v.limit}">Next page &rarr;</a></p>`
    : '';
  return layout(
    v.folder.name,
    `<header><div>${v.trail.length > 1 ? `<nav>${crumbs}</nav>` : ''}<h1>${nameHtml(v.folder.name)}</h1></div><a class="button" href="${zipHref}">Download all (ZIP)</a></header>
<section class="card">
${gallery}
<table>
<thead><tr><th class="kind"><span hidden>Type</span></th><th>Name</th><th>Size</th><th class="hide-small">Modified</th></tr></thead>
<tbody>
${rows || '<tr><td class="empty" colspan="4">This folder is empty.</td></tr>'}
</tbody>
</table>
${pager}
</section>`,
  );
}

export function renderFilePage(v: { token: string; file: PublicItem; pictured: boolean; previewable: boolean }): string {
  const href = `/s/${enc(v.token)}/file/${enc(v.file.id)}`;
  // The large thumbnail where there is one (HEIC and PDF too), fitted to the screen; else a browser-safe image as it is.
  const alt = `Preview of ${escapeHtml(stripBidiControls(v.file.name))}`;
  const preview = v.pictured
    ? `<img class="preview" src="/s/${enc(v.token)}/thumbnail/${enc(v.file.id)}?size=large" alt="${alt}">`
    : v.previewable
      ? `<img class="preview" src="${href}?inline=1" alt="${alt}">`
      : '';
  return layout(
    v.file.name,
    `<header><h1>${FILE_ICON} ${nameHtml(v.file.name)}</h1><a class="button" href="${href}">Download</a></header>
<section class="card">
<p class="meta">${escapeHtml(formatSize(v.file.size ?? 0))} &middot; ${escapeHtml(v.file.mimeType ?? 'unknown type')} &middot; modified ${escapeHtml(date(v.file.modified))}</p>
${preview}
</section>`,
  );
}

export function renderErrorPage(status: number, message: string): string {
  const title =
    status === 410
      ? 'Link expired'
      : status === 404
        ? 'Not found'
        : status === 429
          ? 'Too many requests'
          : status < 500
            ? 'Bad request'
            : 'Unavailable';
  return layout(title, `<section class="card"><h1>${escapeHtml(title)}</h1><p class="meta">${escapeHtml(message)}</p></section>`);
}
