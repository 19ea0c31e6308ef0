import { createHash } from 'node:crypto';
import { escapeHtml } from '../lib/html.ts';
import { longUtcDay } from '../lib/dates.ts';
import { formatSize } from '../contract/size.ts';
import { stripBidiControls } from '../services/files/names.ts';
import { PAGE_BASE_STYLE, pageShell } from './page.ts';
import { isInlineImageType } from '../services/files/downloads.ts';
import type { PublicItem } from '../services/files/item-views.ts';
import type { ShareFacts } from '../services/sharing/shares.ts';
import type { PublicPhoto } from '../contract/albums.ts';

/** "Shared by Ada · until 12 December 2026 · 3 downloads left": the visitor's time zone is unknown to the server, so the UTC day. */
function factsLine(f: ShareFacts): string {
  const parts = [f.sharedBy ? `Shared by ${nameHtml(f.sharedBy)}` : 'Shared with you'];
  if (f.expiresAt !== null) parts.push(`until ${escapeHtml(longUtcDay(f.expiresAt))}`);
  if (f.downloadsLeft !== null) parts.push(`${f.downloadsLeft} download${f.downloadsLeft === 1 ? '' : 's'} left`);
  return `<p class="meta facts">${parts.join(' &middot; ')}</p>`;
}

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
.kind{width:2rem;color:var(--muted)}.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}.icon{width:20px;height:20px;vertical-align:-4px}
h1 .icon{width:26px;height:26px;vertical-align:-5px}.num{white-space:nowrap;color:var(--muted)}
.empty{color:var(--muted);text-align:center;padding:32px}
.meta{color:var(--muted);margin:8px 0 16px;overflow-wrap:anywhere}.preview{display:block;max-width:100%;max-height:80vh;margin:16px auto 0;border-radius:8px;object-fit:contain}video.preview{width:100%;background:#000}
.pager{margin-top:16px;text-align:right}.pager a{color:var(--accent)}
form{margin:0}label{display:block;font-weight:600;margin:12px 0 6px}
input[type=password],input[type=text]{width:100%;max-width:360px;padding:10px;border:1px solid var(--line);border-radius:8px;background:var(--bg);color:var(--fg);font:inherit}
button{padding:10px 18px;border:0;border-radius:8px;background:var(--accent);color:#fff;font:inherit;font-weight:600;cursor:pointer;margin-top:12px}
.error{color:#c62828;font-weight:600}@media (prefers-color-scheme:dark){.error{color:#ff8a80}button{color:#0b1220}}
.drop{position:relative;display:block;border:2px dashed var(--line);border-radius:12px;padding:32px 16px;text-align:center;margin:16px 0 0}
.drop:focus-within,.drop.over{border-color:var(--accent)}
.drop input[type=file]{position:absolute;inset:0;width:100%;height:100%;opacity:0;cursor:pointer}
.drop strong{display:block;font-size:1.1rem}.drop span{color:var(--muted);font-weight:400}
.receipt h2{font-size:1rem;margin:0 0 4px}.receipt ul{margin:0;padding-left:20px}
progress{width:120px;height:10px;vertical-align:middle}.receipt{margin-top:16px}.receipt li{overflow-wrap:anywhere}
.progress-list{list-style:none;margin:12px 0 0;padding:0}.progress-list li{display:flex;flex-wrap:wrap;gap:4px 10px;align-items:center;padding:4px 0;overflow-wrap:anywhere}.progress-list li span:first-child{flex:1 1 160px}
.upload{margin-bottom:16px}
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px;margin:0 0 16px;padding:0;list-style:none}
.gallery a{display:block;border-radius:8px;overflow:hidden;background:var(--line);aspect-ratio:4/3}
.gallery img{display:block;width:100%;height:100%;object-fit:cover}.gallery .tile-name{display:flex;height:100%;align-items:center;justify-content:center;padding:8px;color:var(--fg);overflow-wrap:anywhere;text-align:center}
.lightbox{display:none;position:fixed;inset:0;z-index:1;background:rgba(8,10,14,.94);color:#fff;flex-direction:column}
.lightbox:target{display:flex}.lightbox figure{flex:1;min-height:0;margin:0;display:flex;align-items:center;justify-content:center;padding:8px;overflow:hidden;touch-action:none;user-select:none}
.lightbox figure img,.lightbox figure video{max-width:100%;max-height:100%;object-fit:contain}.lightbox figure img{-webkit-user-drag:none;pointer-events:none}
.lightbox .bar{display:flex;gap:12px;align-items:center;justify-content:space-between;padding:10px 16px}
.lightbox .bar a{color:#fff;padding:8px 12px;border-radius:8px;background:rgba(255,255,255,.14);text-decoration:none;white-space:nowrap}
.lightbox .bar span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
@media (prefers-color-scheme:dark){.button{color:#0b1220}}
@media (max-width:600px){.hide-small{display:none}main{padding:10px}th,td{padding:8px 4px}.gallery{grid-template-columns:repeat(auto-fill,minmax(104px,1fr))}}`;

// The drop area's script: files upload as soon as they are chosen or dropped, one request each, each with its own
// row and progress; the page then reloads to show the receipt. Without it the form posts with its button.
const DROP_SCRIPT = `(()=>{const f=document.getElementById('drop-form');if(!f)return;
const a=f.querySelector('.drop'),i=f.querySelector('input[type=file]'),l=f.querySelector('.progress-list'),s=f.querySelector('[role=status]'),u=f.querySelector('#uploader');
f.querySelector('button[type=submit]').hidden=true;
for(const e of['dragenter','dragover'])a.addEventListener(e,()=>a.classList.add('over'));for(const e of['dragleave','drop'])a.addEventListener(e,()=>a.classList.remove('over'));
const row=(file)=>{const li=document.createElement('li'),n=document.createElement('span'),p=document.createElement('progress'),t=document.createElement('span');
n.textContent=file.name;p.max=1;p.value=0;p.setAttribute('aria-label','Progress of '+file.name);t.className='num';t.textContent='waiting';li.append(n,' ',p,' ',t);l.append(li);return{p,t}};
const send=(file,r)=>new Promise((done)=>{const x=new XMLHttpRequest(),d=new FormData();d.append('uploader',u.value);d.append('file',file);x.open('POST',f.action);x.setRequestHeader('accept','application/json');
x.upload.onprogress=(ev)=>{if(ev.lengthComputable){r.p.value=ev.loaded/ev.total;r.t.textContent=Math.round(100*ev.loaded/ev.total)+'%'}};
x.onload=()=>{if(x.status===201){r.p.value=1;r.t.textContent='sent';done(true)}else{let m=String(x.status);try{m=JSON.parse(x.responseText).message||m}catch{}r.t.textContent='not sent: '+m;done(false)}};
x.onerror=()=>{r.t.textContent='not sent: the connection was lost';done(false)};x.send(d)});
i.addEventListener('change',async()=>{const files=[...i.files];if(!files.length)return;i.disabled=true;const rows=files.map(row);let ok=0;s.textContent='Sending '+files.length+' file(s)…';
for(let k=0;k<files.length;k++)if(await send(files[k],rows[k]))ok++;
if(ok===files.length)location.reload();else{i.disabled=false;i.value='';s.textContent=(files.length-ok)+' of '+files.length+' file(s) not sent: the reason is beside each. Choose them again to retry.'}})})()`;

// The picture viewer (the app's viewer/gestures.ts, brought to these script-only pages): ←/→ step, Esc closes, +/−/0
// zoom; the wheel zooms towards the pointer, a double click or double tap zooms in and back, a pinch zooms, a drag
// pans once zoomed, a swipe steps. Focus goes to the viewer opened and back to its picture when it closes. Close
// goes to the picture's own fragment, not the empty one: the browser applies a fragment's focus at a later frame
// (seconds later on a loaded machine), and the empty fragment's is to drop focus on the page; the picture's is to
// focus it. The picture is the one the fragment names, not the viewer last seen open: a key can be handled before the
// hashchange of the step it follows. Until the next key or pointer press, focus dropped on the page goes back to the
// picture: a late fragment focus of a viewer opened before (not focusable) drops it, as does leaving by the Back button.
// Zoomed past fit, a picture with data-full swaps its large thumbnail for the original once that has loaded.
const VIEWER_SCRIPT = `(()=>{let last=null,held=0,v={s:1,x:0,y:0},img=null;const open=()=>document.querySelector('.lightbox:target');
const apply=()=>{if(img)img.style.transform=v.s===1?'':'translate('+v.x+'px,'+v.y+'px) scale('+v.s+')'};
const zoom=(f,cx=0,cy=0)=>{const b=open(),p=b&&b.querySelector('figure img');if(!p)return;if(p!==img){if(img)img.style.transform='';img=p;v={s:1,x:0,y:0}}
const s=f===0?1:Math.min(8,Math.max(1,v.s*f)),k=s/v.s;v.x=s===1?0:cx-(cx-v.x)*k;v.y=s===1?0:cy-(cy-v.y)*k;v.s=s;apply();if(s>1)full(p)};
const full=(p)=>{const u=p.dataset.full;if(!u||p.dataset.zoomed)return;p.dataset.zoomed='1';const o=new Image();o.onload=()=>{p.src=u};o.src=u};
const step=(d)=>{const b=open(),a=b&&b.querySelector(d>0?'a[data-step=next]':'a[data-step=prev]');if(a)a.click()};
const sync=()=>{if(img)img.style.transform='';img=null;v={s:1,x:0,y:0};const b=open();
if(b){last=b.id;b.querySelector('a[data-close]').focus()}else{const t=document.getElementById(location.hash.slice(1)),a=t&&t.matches('a[href^="#view-"]')?t:last&&document.querySelector('a[href="#'+last+'"]');last=null;if(a){a.focus();const k=++held;const back=(n)=>{if(k!==held)return;const f=document.activeElement;if(!f||f===document.body)a.focus();if(n>0)setTimeout(()=>back(n-1),50)};setTimeout(()=>back(300),0)}}};
for(const e of['keydown','pointerdown'])addEventListener(e,()=>{held++},true);
addEventListener('hashchange',sync);sync();
addEventListener('keydown',(e)=>{const b=open();if(!b||e.altKey||e.ctrlKey||e.metaKey)return;
if(e.key==='+'||e.key==='='){zoom(1.25);e.preventDefault();return}if(e.key==='-'){zoom(0.8);e.preventDefault();return}if(e.key==='0'){zoom(0);e.preventDefault();return}
const a=b.querySelector(e.key==='Escape'?'a[data-close]':e.key==='ArrowRight'?'a[data-step=next]':e.key==='ArrowLeft'?'a[data-step=prev]':'');if(a){e.preventDefault();a.click()}});
for(const el of document.querySelectorAll('.lightbox figure')){const P=new Map();let g=null,tap=0,kind='';
const mid=(x,y)=>{const r=el.getBoundingClientRect();return[x-(r.left+r.width/2),y-(r.top+r.height/2)]};
const spread=()=>{const[a,b]=[...P.values()];return a&&b?Math.hypot(a.x-b.x,a.y-b.y):0};
const toggle=(x,y)=>v.s>1?zoom(0):zoom(2.5,...mid(x,y));
el.addEventListener('wheel',(e)=>{if(!open())return;e.preventDefault();zoom(Math.exp(-Math.max(-100,Math.min(100,e.deltaY))/300),...mid(e.clientX,e.clientY))},{passive:false});
el.addEventListener('dblclick',(e)=>{if(kind!=='touch')toggle(e.clientX,e.clientY)});
el.addEventListener('pointerdown',(e)=>{if(e.target.tagName==='VIDEO')return;kind=e.pointerType;el.setPointerCapture(e.pointerId);P.set(e.pointerId,{x:e.clientX,y:e.clientY});g={d:spread(),s:v.s,x:e.clientX,y:e.clientY,m:false}});
el.addEventListener('pointermove',(e)=>{const p=P.get(e.pointerId);if(!p||!g)return;P.set(e.pointerId,{x:e.clientX,y:e.clientY});
if(P.size===2&&g.d){zoom(Math.min(8,Math.max(1,g.s*spread()/g.d))/v.s);if(v.s===1)v.x=v.y=0}else if(v.s>1){v.x+=e.clientX-p.x;v.y+=e.clientY-p.y}
if(Math.hypot(e.clientX-g.x,e.clientY-g.y)>10)g.m=true;apply()});
const up=(e)=>{const h=g,many=P.size>1;P.delete(e.pointerId);if(!h||P.size>0)return;g=null;const dx=e.clientX-h.x;
if(v.s===1&&!many&&Math.abs(dx)>60)return step(dx<0?1:-1);if(e.pointerType!=='touch'||h.m||many)return;
if(e.timeStamp-tap<300){tap=0;toggle(e.clientX,e.clientY)}else tap=e.timeStamp};
el.addEventListener('pointerup',up);el.addEventListener('pointercancel',up)}})()`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64');
/**
 * CSP of every share page: nothing external (a shared video plays from this server); the one stylesheet, the drop
 * area's script and the picture viewer's are allowed by their hashes; forms (password, drop area) post only to this server.
 */
export const SHARE_PAGE_CSP = `default-src 'none'; img-src 'self'; media-src 'self'; style-src 'sha256-${sha256(STYLE)}'; script-src 'sha256-${sha256(DROP_SCRIPT)}' 'sha256-${sha256(VIEWER_SCRIPT)}'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;

// Inline SVG, so icons show without emoji fonts or any request beyond the page itself.
const FOLDER_ICON =
  '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true"><path fill="#f2b84b" d="M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z"/></svg>';
const FILE_ICON =
  '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true"><path fill="#8fa3bf" d="M6 2h8l6 6v12a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2z"/><path fill="#d5deea" d="M14 2v6h6z"/></svg>';

function layout(title: string, body: string): string {
  return pageShell(title, `<main>\n${body}\n</main>`, { style: STYLE, referrer: 'no-referrer' });
}

/** The upload area of a drop folder: a form that works without the script; with it, files go as soon as chosen, each with its progress. */
function dropArea(token: string, received: ReadonlyArray<{ name: string; size: number }>): string {
  const receipt = received.length
    ? `<section class="receipt" aria-labelledby="sent"><h2 id="sent">You sent</h2><ul>${received
        .map((f) => `<li>${nameHtml(f.name)} <span class="num">${escapeHtml(formatSize(f.size))}</span></li>`)
        .join('')}</ul></section>`
    : '';
  return `<section class="card upload"><form id="drop-form" method="post" action="/s/${enc(token)}/upload" enctype="multipart/form-data">
<label for="uploader">Your name (optional)</label><input type="text" id="uploader" name="uploader" maxlength="100" autocomplete="name">
<label class="drop"><strong>Drop files here</strong><span>or tap to choose files: they are sent at once</span><input type="file" name="file" multiple required aria-label="Choose files to upload"></label>
<div><button type="submit">Upload</button></div>
<ul class="progress-list" aria-label="Files being sent"></ul><p role="status" class="meta"></p>
</form>${receipt}</section>
<script>${DROP_SCRIPT}</script>`;
}

/** An upload-only link: the drop area and what this visitor sent; never the folder's contents. */
export function renderDropPage(v: {
  token: string;
  folderName: string;
  facts: ShareFacts;
  received: ReadonlyArray<{ name: string; size: number }>;
}): string {
  const until = v.facts.expiresAt === null ? '' : ` You can send files until ${escapeHtml(longUtcDay(v.facts.expiresAt))}.`;
  const whose = v.facts.sharedBy
    ? `${nameHtml(v.facts.sharedBy)}’s folder ${nameHtml(v.folderName)}`
    : `the folder ${nameHtml(v.folderName)}`;
  return layout(
    `Send files to ${v.folderName}`,
    `<header><h1>${FOLDER_ICON} Send files to ${nameHtml(v.folderName)}</h1></header>
<p class="meta">Files you send go to ${whose}. You can see only what you sent.${until}</p>
${dropArea(v.token, v.received)}`,
  );
}

/** The password form of a protected link; `next` is where the visitor was going (a path under the link). */
export function renderPasswordPage(v: { token: string; next: string; wrong: boolean; base?: string }): string {
  return layout(
    'Password required',
    `<section class="card"><h1>Password required</h1>
<p class="meta">This link is protected. Enter the password its owner gave you.</p>
${v.wrong ? '<p class="error" role="alert">That password is not right. Check it and try again.</p>' : ''}
<form method="post" action="${v.base ?? `/s/${enc(v.token)}`}/unlock">
<input type="hidden" name="next" value="${escapeHtml(v.next)}">
<label for="password">Password</label><input type="password" id="password" name="password" required autocomplete="current-password" autofocus>
<div><button type="submit">Unlock</button></div>
</form></section>`,
  );
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
  /** A view-and-upload link's root shows the drop area above the listing (where what was sent appears). */
  upload?: boolean;
  facts: ShareFacts;
}

/** Whether a page may fetch a file's original by itself: that counts as a download, so never on a link with a download cap. */
export const showsOriginals = (facts: ShareFacts) => facts.downloadsLeft === null;

/**
 * The original to zoom into, for a picture a browser shows as it is, on a link without a download cap: fetching it
 * counts as a download, so a capped link's viewer keeps zooming the large thumbnail.
 */
const fullZoom = (facts: ShareFacts, mimeType: string | null, href: string) =>
  showsOriginals(facts) && isInlineImageType(mimeType) ? ` data-full="${href}?inline=1"` : '';

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
  // Pictures first, as a gallery; each opens a full-screen view (CSS :target, so it works without the script) with
  // the previous and next picture, the download of that one, and a way back.
  const pictures = v.items.filter((item) => item.hasThumbnail);
  const thumb = (id: string, size: 'small' | 'large') => `${base}/thumbnail/${enc(id)}${size === 'large' ? '?size=large' : ''}`;
  const gallery = pictures.length
    ? `<ul class="gallery" aria-label="Pictures">${pictures
        .map(
          (p) =>
            `<li><a href="#view-${enc(p.id)}" id="pic-${enc(p.id)}"><img src="${thumb(p.id, 'small')}" alt="${escapeHtml(stripBidiControls(p.name))}" loading="lazy" decoding="async"></a></li>`,
        )
        .join('')}</ul>
${pictures
  .map((p, i) => {
    const step = (to: PublicItem | undefined, label: string, dir: 'prev' | 'next') =>
      to ? `<a href="#view-${enc(to.id)}" data-step="${dir}">${label}</a>` : '';
    return `<div class="lightbox" id="view-${enc(p.id)}" role="dialog" aria-label="${escapeHtml(stripBidiControls(p.name))}"><div class="bar"><a href="#pic-${enc(p.id)}" data-close>Close</a><span>${nameHtml(p.name)}</span><a href="${base}/file/${enc(p.id)}">Download</a></div><figure><img src="${thumb(p.id, 'large')}"${fullZoom(v.facts, p.mimeType, `${base}/file/${enc(p.id)}`)} alt="${escapeHtml(stripBidiControls(p.name))}" loading="lazy"></figure><div class="bar">${step(pictures[i - 1], '&larr; Previous', 'prev')}<span>${i + 1} of ${pictures.length}</span>${step(pictures[i + 1], 'Next &rarr;', 'next')}</div></div>`;
  })
  .join('\n')}
<script>${VIEWER_SCRIPT}</script>`
    : '';
  const pager = v.nextCursor
    ? `<p class="pager"><a href="${folderHref(v.folder.id, v.isRoot)}?cursor=${enc(v.nextCursor)}&amp;limit=${v.limit}">Next page &rarr;</a></p>`
    : '';
  return layout(
    v.folder.name,
    `<header><div>${v.trail.length > 1 ? `<nav>${crumbs}</nav>` : ''}<h1>${nameHtml(v.folder.name)}</h1></div><a class="button" href="${zipHref}">Download all (ZIP)</a></header>
${factsLine(v.facts)}
${v.upload ? dropArea(v.token, []) : ''}<section class="card">
${gallery}
<table>
<thead><tr><th class="kind"><span class="sr-only">Type</span></th><th>Name</th><th>Size</th><th class="hide-small">Modified</th></tr></thead>
<tbody>
${rows || '<tr><td class="empty" colspan="4">This folder is empty.</td></tr>'}
</tbody>
</table>
${pager}
</section>`,
  );
}

/** An album's public link: its photos and videos as a gallery, each opening full screen with the previous and next. */
export function renderAlbumPage(v: {
  token: string;
  name: string;
  items: PublicPhoto[];
  nextCursor: string | null;
  limit: number;
  facts: ShareFacts;
  /** The items with a thumbnail (AlbumLinkService.pictured). */
  pictured: ReadonlySet<string>;
}): string {
  const base = `/s/album/${enc(v.token)}`;
  const thumb = (id: string, size: 'small' | 'large') => `${base}/thumbnail/${enc(id)}${size === 'large' ? '?size=large' : ''}`;
  const file = (id: string) => `${base}/file/${enc(id)}`;
  const alt = (p: PublicPhoto) => escapeHtml(stripBidiControls(p.name));
  const pictured = (p: PublicPhoto) => v.pictured.has(p.id);
  const gallery = v.items.length
    ? `<ul class="gallery" aria-label="Photos">${v.items
        .map(
          (p) =>
            `<li><a href="#view-${enc(p.id)}" id="pic-${enc(p.id)}">${pictured(p) ? `<img src="${thumb(p.id, 'small')}" alt="${alt(p)}" loading="lazy" decoding="async">` : `<span class="tile-name">${nameHtml(p.name)}</span>`}</a></li>`,
        )
        .join('')}</ul>
${v.items
  .map((p, i) => {
    const step = (to: PublicPhoto | undefined, label: string, dir: 'prev' | 'next') =>
      to ? `<a href="#view-${enc(to.id)}" data-step="${dir}">${label}</a>` : '';
    // A video plays muted in the viewer; nothing is fetched before Play (playing counts as a download, as on a file link).
    const media = p.mimeType.startsWith('video/')
      ? `<video src="${file(p.id)}" controls muted playsinline preload="none"${pictured(p) ? ` poster="${thumb(p.id, 'large')}"` : ''} aria-label="${alt(p)}"></video>`
      : pictured(p)
        ? `<img src="${thumb(p.id, 'large')}"${fullZoom(v.facts, p.mimeType, file(p.id))} alt="${alt(p)}" loading="lazy">`
        : `<span class="tile-name">${nameHtml(p.name)}</span>`;
    return `<div class="lightbox" id="view-${enc(p.id)}" role="dialog" aria-label="${alt(p)}"><div class="bar"><a href="#pic-${enc(p.id)}" data-close>Close</a><span>${nameHtml(p.name)}</span><a href="${file(p.id)}">Download</a></div><figure>${media}</figure><div class="bar">${step(v.items[i - 1], '&larr; Previous', 'prev')}<span>${i + 1} of ${v.items.length}</span>${step(v.items[i + 1], 'Next &rarr;', 'next')}</div></div>`;
  })
  .join('\n')}
<script>${VIEWER_SCRIPT}</script>`
    : '<p class="empty">This album is empty.</p>';
  const pager = v.nextCursor
    ? `<p class="pager"><a href="${base}?cursor=${enc(v.nextCursor)}&amp;limit=${v.limit}">More photos &rarr;</a></p>`
    : '';
  return layout(
    v.name,
    `<header><div><h1>${nameHtml(v.name)}</h1></div>${v.items.length ? `<a class="button" href="${base}/zip">Download all (ZIP)</a>` : ''}</header>
${factsLine(v.facts)}
<section class="card">
${gallery}
${pager}
</section>`,
  );
}

export function renderFilePage(v: { token: string; file: PublicItem; pictured: boolean; previewable: boolean; facts: ShareFacts }): string {
  const href = `/s/${enc(v.token)}/file/${enc(v.file.id)}`;
  // The large thumbnail where there is one (HEIC and PDF too), fitted to the screen; else a browser-safe image as it is.
  const alt = `Preview of ${escapeHtml(stripBidiControls(v.file.name))}`;
  const large = `/s/${enc(v.token)}/thumbnail/${enc(v.file.id)}?size=large`;
  // A video plays in the page, muted until the visitor turns the sound on; nothing is fetched before Play
  // (playing reads the file from its start, so it counts as a download of a download-limited link).
  const preview = v.file.mimeType?.startsWith('video/')
    ? `<video class="preview" src="${href}" controls muted playsinline preload="none"${v.pictured ? ` poster="${large}"` : ''} aria-label="${escapeHtml(stripBidiControls(v.file.name))}"><a href="${href}">Download the video</a></video>`
    : v.pictured
      ? `<img class="preview" src="${large}" alt="${alt}">`
      : v.previewable
        ? `<img class="preview" src="${href}?inline=1" alt="${alt}">`
        : '';
  return layout(
    v.file.name,
    `<header><h1>${FILE_ICON} ${nameHtml(v.file.name)}</h1><a class="button" href="${href}">Download</a></header>
${factsLine(v.facts)}
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
