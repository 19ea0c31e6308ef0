import { Elysia } from 'elysia';
import type { AppContext } from '../../context.ts';
import { AppError, badRequest, forbidden, Messages, notFound, StorageLimitError } from '../../errors.ts';
import { isoString, utcString } from '../../lib/dates.ts';
import { childElements, escapeQuotedXml, escapeXml, parseXml, serializeNodes, type XmlElement, XmlError } from '../../lib/xml.ts';
import { type DavLock, DavLockService, locksCovering } from '../../services/dav/dav-locks.ts';
import { type DavSync, type SyncLevel, type SyncResult, SyncTokenError } from '../../services/dav/dav-sync.ts';
import {
  type DavEntry,
  type DavItem,
  type DavListingNeeds,
  type DavPath,
  davPath,
  type DavPlace,
  type DavRows,
  type DavService,
  type DavTarget,
  type DavTreeView,
  type DavWalk,
  type PropPatch,
  SHARED_WITH_ME,
} from '../../services/dav/dav.ts';
import { can, type Principal } from '../../services/identity/principal.ts';
import { readBody, readText } from '../body.ts';
import { fileResponse } from '../download-responses.ts';
import { davAuthenticate } from '../guard.ts';
import type { Limits } from '../limits.ts';
import { requestMeta } from '../request-meta.ts';
import { route, routes } from '../route.ts';

export const DAV = 'DAV:';
export const OC = 'http://owncloud.org/ns';
export const NC = 'http://nextcloud.org/ns';
/** The Nextcloud clients' doors: the login's id (cloud/user's `id`) follows FILES_DOOR. */
const WEBDAV_DOOR = '/remote.php/webdav';
const FILES_DOOR = '/remote.php/dav/files/';
const METHODS = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK, REPORT';
const XML_TYPE = 'application/xml; charset=utf-8';
const XML_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n';

/** Live properties a PROPFIND `allprop` returns (RFC 4918 §15; the RFC 4331 quota ones only when named). */
const ALLPROP = [
  'creationdate',
  'displayname',
  'getcontentlength',
  'getcontenttype',
  'getetag',
  'getlastmodified',
  'lockdiscovery',
  'resourcetype',
  'supportedlock',
];
/** RFC 6578's sync-token and RFC 3253's supported-report-set are live on collections, only when named. */
const LIVE = new Set([...ALLPROP, 'quota-available-bytes', 'quota-used-bytes', 'sync-token', 'supported-report-set']);
/** The ownCloud and Nextcloud properties the Nextcloud clients ask for, answered from the tree (never stored as dead ones). */
const OC_LIVE = new Set(['fileid', 'id', 'permissions', 'size', 'checksums']);
const NC_LIVE = new Set(['has-preview']);
const isLive = (ns: string, name: string) =>
  ns === DAV ? LIVE.has(name) : ns === OC ? OC_LIVE.has(name) : ns === NC ? NC_LIVE.has(name) : false;

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  507: 'Insufficient Storage',
  424: 'Failed Dependency',
};
export const statusLine = (code: number) => `HTTP/1.1 ${code} ${STATUS_TEXT[code] ?? ''}`;

/** A resource as the protocol sees it: its path, href and row (null: the account's root). */
interface Resource {
  path: DavPath;
  href: string;
  item: DavItem | null;
}

const RESERVED = /[!'()*]/;
/** A path segment percent-encoded, RFC 3986's reserved !'()* too; the replace only where one is (a PROPFIND encodes every row's name). */
function encodeSegment(s: string): string {
  const encoded = encodeURIComponent(s);
  return RESERVED.test(encoded) ? encoded.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`) : encoded;
}

function hrefOf(prefix: string, path: DavPath, folder: boolean): string {
  const base = prefix + path.segments.map((s) => `/${encodeSegment(s)}`).join('');
  return folder ? `${base}/` : base;
}

/** Where a request path points (the service's walk) and the door it came in by (hrefs are written under it). */
type Place = DavPlace & { prefix: string };
type Walked = DavWalk & { prefix: string };

const SHARED_KEY = davPath([SHARED_WITH_ME]).key;

/** The request's walk into the tree: the door and path are read here, the rest is the service's (one visit). */
function walkTo(dav: DavService, caller: Principal, urlPath: string, opts: Parameters<DavService['walk']>[2] = {}): Walked {
  const prefix = doorOf(urlPath, caller);
  return { ...dav.walk(caller, pathOfUrlPath(prefix, urlPath), opts), prefix };
}

/** The href of a path of `place`'s tree: inside a share, under its mount (SHARED_WITH_ME/<name>, or a team folder's name) rather than the owner's path. */
function hrefIn(place: Place, path: DavPath, folder: boolean): string {
  if (place.kind !== 'mount') return hrefOf(place.prefix, path, folder);
  const rest = path.segments.slice(place.mount.ownerSegments.length);
  return hrefOf(place.prefix, davPath([...place.mount.prefix, ...rest]), folder);
}

/** The paths WebDAV serves, every door. */
const DAV_PATH = /^\/(dav|remote\.php\/webdav)(\/|$)|^\/remote\.php\/dav\/files\//;

const WRITES = new Set(['PUT', 'MKCOL', 'DELETE', 'MOVE', 'COPY', 'PROPPATCH', 'LOCK']);

const under = (urlPath: string, prefix: string) => urlPath === prefix || urlPath.startsWith(`${prefix}/`);

/**
 * The prefix a WebDAV path enters by (hrefs are written under it): /dav, or the Nextcloud clients'
 * /remote.php/webdav and /remote.php/dav/files/<login id>, where another login's id is 404.
 */
function doorOf(urlPath: string, principal: Principal): string {
  if (under(urlPath, '/dav')) return '/dav';
  if (under(urlPath, WEBDAV_DOOR)) return WEBDAV_DOOR;
  if (urlPath.startsWith(FILES_DOOR)) {
    const user = urlPath.slice(FILES_DOOR.length).split('/')[0]!;
    let id: string;
    try {
      id = decodeURIComponent(user);
    } catch {
      throw badRequest('The path has a malformed percent-escape');
    }
    if (id !== principal.loginId) throw notFound(Messages.itemNotFound);
    return FILES_DOOR + user;
  }
  throw new AppError(502, 'The destination is not on this WebDAV server');
}

/** The decoded, non-empty segments of a URL path after `door`; 400 for a bad escape. */
export function segmentsAfter(door: string, urlPath: string): string[] {
  const segments: string[] = [];
  for (const raw of urlPath.slice(door.length).split('/')) {
    if (raw === '') continue;
    try {
      segments.push(decodeURIComponent(raw));
    } catch {
      throw badRequest('The path has a malformed percent-escape');
    }
  }
  return segments;
}

/** The path of a request target under its door's prefix (`/dav/a%20b/c`) as decoded segments; 400 for bad escapes or dot segments. */
function pathOfUrlPath(prefix: string, urlPath: string): DavPath {
  const segments: string[] = [];
  for (const raw of urlPath.slice(prefix.length).split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      throw badRequest('The path has a malformed percent-escape');
    }
    if (segment === '.' || segment === '..') throw badRequest('The path must not contain . or .. segments');
    segments.push(segment);
  }
  return davPath(segments);
}

/** One `If` header list: conditions on a resource (the request's, or the tagged one). */
interface IfList {
  tag: string | null;
  conditions: Array<{ not: boolean; token?: string; etag?: string }>;
}

/** RFC 4918 §10.4 grammar; a header that does not parse is a 400. */
function parseIf(header: string): IfList[] {
  const lists: IfList[] = [];
  let tag: string | null = null;
  let i = 0;
  const bad = () => badRequest('The If header is malformed');
  while (i < header.length) {
    const c = header[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '<') {
      const end = header.indexOf('>', i);
      if (end < 0) throw bad();
      tag = header.slice(i + 1, end);
      i = end + 1;
    } else if (c === '(') {
      const end = header.indexOf(')', i);
      if (end < 0) throw bad();
      const body = header.slice(i + 1, end);
      const conditions: IfList['conditions'] = [];
      const re = /\s*(Not\s+)?(?:<([^>]*)>|\[([^\]]*)\])/giy;
      let m: RegExpExecArray | null;
      let consumed = 0;
      while ((m = re.exec(body))) {
        conditions.push(m[2] !== undefined ? { not: !!m[1], token: m[2] } : { not: !!m[1], etag: m[3] });
        consumed = re.lastIndex;
      }
      if (conditions.length === 0 || body.slice(consumed).trim() !== '') throw bad();
      lists.push({ tag, conditions });
      i = end + 1;
    } else throw bad();
  }
  if (lists.length === 0) throw bad();
  return lists;
}

function lockXml(lock: DavLock): string {
  return (
    `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${lock.scope}/></D:lockscope>` +
    `<D:depth>${lock.depth === 'infinity' ? 'infinity' : '0'}</D:depth>${lock.ownerXml ? `<D:owner>${lock.ownerXml}</D:owner>` : ''}` +
    `<D:timeout>Second-${Math.max(0, Math.round((lock.expiresAt - Date.now()) / 1000))}</D:timeout>` +
    `<D:locktoken><D:href>${escapeXml(lock.token)}</D:href></D:locktoken>` +
    `<D:lockroot><D:href>${escapeXml(lock.href)}</D:href></D:lockroot></D:activelock>`
  );
}

const SUPPORTED_LOCK =
  '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>' +
  '<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';

const SUPPORTED_REPORTS = '<D:supported-report><D:report><D:sync-collection/></D:report></D:supported-report>';

/** How every allprop answer ends: supportedlock, then the one propstat's status. */
const ALLPROP_TAIL = `<D:supportedlock>${SUPPORTED_LOCK}</D:supportedlock></D:prop><D:status>${statusLine(200)}</D:status></D:propstat></D:response>`;

/** A property's identity: names never hold a newline, so the last one separates the two. */
const propKey = (ns: string, name: string) => `${ns}\n${name}`;

/** A property element with its value (or empty), in its own namespace. */
export function propXml(ns: string, name: string, value = ''): string {
  if (ns === DAV) return value ? `<D:${name}>${value}</D:${name}>` : `<D:${name}/>`;
  const open = ns ? `x:${name} xmlns:x="${escapeXml(ns)}"` : `${name} xmlns=""`;
  const close = ns ? `x:${name}` : name;
  return value ? `<${open}>${value}</${close}>` : `<${open}/>`;
}

function xmlResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(XML_HEAD + body, { status, headers: { 'Content-Type': XML_TYPE, ...headers } });
}

function davError(status: number, condition: string, message: string): Response {
  return xmlResponse(
    status,
    `<D:error xmlns:D="DAV:"><D:${condition}/><D:responsedescription>${escapeXml(message)}</D:responsedescription></D:error>`,
  );
}

export async function xmlBody(request: Request): Promise<XmlElement | null> {
  const text = await readText(request);
  if (text.trim() === '') return null;
  try {
    return parseXml(text);
  } catch (err) {
    if (err instanceof XmlError && err.tooLarge) throw new AppError(413, `The XML body is too large to process: ${err.message}`);
    if (err instanceof XmlError) throw badRequest(`The XML body is malformed: ${err.message}`);
    throw err;
  }
}

export type PropName = { ns: string; name: string };
export type PropRequest = { kind: 'allprop'; include: PropName[] } | { kind: 'propname' } | { kind: 'prop'; names: PropName[] };

/**
 * What one PROPFIND may name (clients name tens): each name is answered, found or not, for every
 * resource listed, so names are capped in number and in characters (a long namespace can be named often).
 */
const PROPFIND_NAMES = { count: 1_000, characters: 64 * 1024 } as const;

/** The properties an element names; 413 past PROPFIND_NAMES. */
function propNamesOf(el: XmlElement): PropName[] {
  const names = childElements(el).map((e) => ({ ns: e.ns, name: e.name }));
  const characters = names.reduce((sum, n) => sum + n.ns.length + n.name.length, 0);
  if (names.length > PROPFIND_NAMES.count || characters > PROPFIND_NAMES.characters) {
    const n = (x: number) => x.toLocaleString('en-US');
    throw new AppError(
      413,
      `A PROPFIND may name at most ${n(PROPFIND_NAMES.count)} properties, of ${n(PROPFIND_NAMES.characters)} characters of namespaces and names together; this one names ${n(names.length)} of ${n(characters)} characters`,
    );
  }
  return names;
}

export function propRequestOf(body: XmlElement | null): PropRequest {
  if (!body) return { kind: 'allprop', include: [] };
  if (body.ns !== DAV || body.name !== 'propfind') throw badRequest('A PROPFIND body must be a DAV:propfind element');
  const [first, ...rest] = childElements(body, DAV);
  if (first?.name === 'propname') return { kind: 'propname' };
  if (first?.name === 'prop') return { kind: 'prop', names: propNamesOf(first) };
  if (first?.name === 'allprop') {
    const include = rest.find((e) => e.name === 'include');
    return { kind: 'allprop', include: include ? propNamesOf(include) : [] };
  }
  throw badRequest('A PROPFIND body names prop, allprop or propname');
}

/**
 * WebDAV (RFC 4918 class 1 and 2) at /dav/: the account's tree, through the same services as the API.
 * Clients' quirks handled: Finder and Windows send OPTIONS before any credentials (answered without);
 * Windows PROPPATCHes its Win32 times (kept as dead properties) and writes a 0-byte file before its
 * content; rclone's owncloud vendor sets modification times with `X-OC-Mtime` (honoured).
 */
export function davRoutes(ctx: AppContext, limits: Limits) {
  const dav = ctx.services.dav;
  const sync = ctx.services.davSync;
  const handle = ({ request }: { request: Request }) => davErrors(() => serve(dav, sync, request, ctx.instanceId));
  // GET wins over the web app's `GET /*` only registered on its own; every other method comes through `all`.
  const app = new Elysia({ name: 'http/dav', seed: ctx.instanceId }).onRequest(async ({ request }) => {
    // The router answers HEAD by running GET and reading its whole body to count it (and a file's HEAD
    // has no body here): WebDAV's HEAD is served before routing, behind the same guard.
    if (request.method !== 'HEAD' || !DAV_PATH.test(requestMeta(request).path)) return;
    await davAuthenticate(ctx, limits, request);
    return handle({ request });
  });
  return routes(
    ctx,
    'http/dav',
    [
      route('GET /dav', { handler: handle }),
      route('GET /dav/*', { handler: handle }),
      route('ALL /dav', { handler: handle }),
      route('ALL /dav/*', { handler: handle }),
      route('GET /remote.php/webdav', { handler: handle }),
      route('GET /remote.php/webdav/*', { handler: handle }),
      route('ALL /remote.php/webdav', { handler: handle }),
      route('ALL /remote.php/webdav/*', { handler: handle }),
      route('GET /remote.php/dav/files/*', { handler: handle }),
      route('ALL /remote.php/dav/files/*', { handler: handle }),
    ],
    app,
  );
}

async function serve(dav: DavService, sync: DavSync, request: Request, instanceId: string): Promise<Response> {
  const meta = requestMeta(request);
  const method = request.method.toUpperCase();
  if (method === 'OPTIONS') {
    return new Response(null, { headers: { DAV: '1, 2', 'MS-Author-Via': 'DAV', Allow: METHODS, 'Content-Length': '0' } });
  }
  // A fragment is never part of a request target (RFC 9110 §7.1); acting on the path without it could delete the wrong thing.
  if (request.url.includes('#')) throw badRequest('The request URL must not contain a fragment (#)');
  // A PROPFIND is read before the walk: what it asks for is what the walk brings back with the rows.
  const asked = method === 'PROPFIND' ? await propfindOf(request) : null;
  if (asked instanceof Response) return asked;
  const write = WRITES.has(method) ? (method === 'COPY' ? 'copy' : 'write') : undefined;
  const place = walkTo(dav, meta.principal!, meta.path, { write, listing: asked?.needs });
  if (place.kind === 'list') return sharedList(sync, request, method, place, instanceId, asked);
  const { principal, path, target } = place;
  const trailingSlash = meta.path.endsWith('/');
  const resource = (t: DavTarget | null): Resource => ({
    path,
    href: hrefIn(place, path, t?.kind === 'root' || t?.item.type === 'folder' || (!t && trailingSlash)),
    item: t?.kind === 'item' ? t.item : null,
  });
  const res = resource(target);
  switch (method) {
    case 'GET':
    case 'HEAD':
      return get(dav, principal, request, target, res);
    case 'PROPFIND':
      return propfind(place, treeView(sync, place, instanceId), asked!, res);
    case 'REPORT':
      return report(dav, sync, request, res, instanceId);
    case 'PROPPATCH':
      return proppatch(dav, principal, request, target, res);
    case 'PUT':
      return put(dav, principal, request, target, res, instanceId);
    case 'MKCOL': {
      if ((await readText(request)).length > 0) throw new AppError(415, 'MKCOL takes no body');
      checkWrite(dav, principal, request, res, target);
      const created = dav.mkcol(principal, path);
      return new Response(null, { status: 201, headers: { ETag: created.etag, 'OC-FileId': ocIdOf(created.seq, instanceId) } });
    }
    case 'DELETE': {
      if (!target) throw notFound(Messages.itemNotFound);
      if (target.kind === 'root') throw forbidden('The root folder cannot be deleted');
      const depth = request.headers.get('depth');
      if (target.item.type === 'folder' && depth !== null && depth.toLowerCase() !== 'infinity')
        throw badRequest('DELETE of a folder takes Depth: infinity');
      checkWrite(dav, principal, request, res, target, true);
      dav.remove(principal, path, target.item);
      return new Response(null, { status: 204 });
    }
    case 'COPY':
    case 'MOVE':
      return transfer(dav, place, request, method, target, res);
    case 'LOCK':
      return lock(dav, principal, request, target, res);
    case 'UNLOCK': {
      const token = /^\s*<([^>]+)>\s*$/.exec(request.headers.get('lock-token') ?? '')?.[1];
      if (!token) throw badRequest('UNLOCK needs a Lock-Token header: <token>');
      if (!dav.unlock(principal, path, token)) return davError(409, 'lock-token-matches-request-uri', 'No such lock on this resource');
      return new Response(null, { status: 204 });
    }
    default:
      return new Response(JSON.stringify({ message: `${method} is not a WebDAV method served here` }), {
        status: 405,
        headers: { Allow: METHODS, 'Content-Type': 'application/json' },
      });
  }
}

/** SHARED_WITH_ME itself: read-only, its children are the shares. */
async function sharedList(
  sync: DavSync,
  request: Request,
  method: string,
  place: Walked & { kind: 'list' },
  instanceId: string,
  asked: Propfind | null,
): Promise<Response> {
  const res: Resource = { path: place.path, href: hrefOf(place.prefix, place.path, true), item: null };
  if (method === 'PROPFIND') return propfind(place, treeView(sync, place, instanceId), asked!, res);
  if (method === 'REPORT') return davError(403, 'supported-report', `"${SHARED_WITH_ME}" has no sync-collection: sync each of its folders`);
  if (method === 'GET' || method === 'HEAD') {
    const headers = { 'Content-Type': 'text/html; charset=utf-8' };
    if (method === 'HEAD') return new Response(null, { headers });
    const items = place.shares.map((s) => {
      const href = res.href + encodeSegment(s.name) + (s.item.type === 'folder' ? '/' : '');
      return `<li><a href="${escapeXml(href)}">${escapeXml(s.name)}${s.item.type === 'folder' ? '/' : ''}</a></li>`;
    });
    const title = escapeXml(SHARED_WITH_ME);
    return new Response(`<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><ul>${items.join('')}</ul>`, {
      headers,
    });
  }
  throw forbidden(`"${SHARED_WITH_ME}" lists what other accounts share with you: put files inside one of its folders.`);
}

/** The `If` header (412 when false), If-Match / If-None-Match, then the locks (423) on what a write touches. */
function checkWrite(
  dav: DavService,
  principal: Principal,
  request: Request,
  res: Resource,
  target: DavTarget | null,
  subtree = false,
): void {
  const tokens = checkConditions(dav, principal, request, res, target);
  dav.assertUnlocked(principal, res.path, { tokens }, res.href, subtree);
}

/** Evaluates the precondition headers; returns the lock tokens the `If` header submitted. */
function checkConditions(dav: DavService, principal: Principal, request: Request, res: Resource, target: DavTarget | null): Set<string> {
  const etag = res.item?.etag ?? null;
  const ifMatch = request.headers.get('if-match');
  if (ifMatch && !(ifMatch.trim() === '*' ? target : etag && ifMatch.split(',').some((t) => t.trim() === etag)))
    throw new AppError(412, 'If-Match failed: the resource changed');
  const ifNoneMatch = request.headers.get('if-none-match');
  if (ifNoneMatch && (ifNoneMatch.trim() === '*' ? target : etag && ifNoneMatch.split(',').some((t) => t.trim() === etag)))
    throw new AppError(412, 'If-None-Match failed: the resource exists');
  const header = request.headers.get('if');
  const tokens = new Set<string>();
  if (!header) return tokens;
  const lists = parseIf(header);
  for (const list of lists) for (const c of list.conditions) if (c.token && !c.not) tokens.add(c.token);
  const holds = (list: IfList) => {
    let path = res.path;
    let item = res.item;
    if (list.tag) {
      let tagPath: DavPath;
      try {
        const tagUrlPath = new URL(list.tag, 'http://x').pathname;
        tagPath = pathOfUrlPath(doorOf(tagUrlPath, principal), tagUrlPath);
      } catch {
        return false;
      }
      const t = dav.resolve(principal, tagPath);
      path = tagPath;
      item = t?.kind === 'item' ? t.item : null;
    }
    return list.conditions.every((c) => {
      const ok =
        c.token !== undefined
          ? dav.locks.covering(principal.accountId, path.key).some((l) => l.token === c.token)
          : item !== null && item.etag === c.etag;
      return ok !== c.not;
    });
  };
  if (!lists.some(holds)) throw new AppError(412, 'The If header conditions are not met');
  return tokens;
}

async function get(dav: DavService, principal: Principal, request: Request, target: DavTarget | null, res: Resource): Promise<Response> {
  if (!target) throw notFound(Messages.itemNotFound);
  if (target.kind === 'root' || target.item.type === 'folder') return folderPage(dav, principal, res, request.method === 'HEAD');
  const row = target.item;
  const headers: Record<string, string> = { ETag: row.etag, 'Last-Modified': new Date(row.modifiedAt).toUTCString() };
  const ifNoneMatch = request.headers.get('if-none-match');
  if (ifNoneMatch && (ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((t) => t.trim() === headers.ETag)))
    return new Response(null, { status: 304, headers });
  const ifMatch = request.headers.get('if-match');
  if (ifMatch && ifMatch.trim() !== '*' && !ifMatch.split(',').some((t) => t.trim() === headers.ETag))
    throw new AppError(412, 'If-Match failed: the resource changed');
  dav.allow(principal, 'downloads.file');
  if (request.method === 'HEAD') {
    return new Response(null, {
      headers: {
        ...headers,
        'Content-Type': row.mimeType ?? 'application/octet-stream',
        'Content-Length': String(row.size),
        'Accept-Ranges': 'bytes',
      },
    });
  }
  const response = await fileResponse(dav.downloads, row, request, { inline: false, reader: principal });
  for (const [k, v] of Object.entries(headers)) response.headers.set(k, v);
  return response;
}

/** GET of a folder: a plain list of links, for a person who opens the mount URL in a browser. */
function folderPage(dav: DavService, principal: Principal, res: Resource, head: boolean): Response {
  const headers = { 'Content-Type': 'text/html; charset=utf-8' };
  if (head) return new Response(null, { headers });
  const encoder = new TextEncoder();
  const folderId = res.item?.id ?? null;
  const pages = dav.children(principal, folderId);
  const title = escapeXml(res.item?.name ?? 'Coffer');
  let started = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(`<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><ul>`));
        return;
      }
      const next = await pages.next();
      if (next.done) {
        controller.enqueue(encoder.encode('</ul>'));
        controller.close();
        return;
      }
      const base = res.href.endsWith('/') ? res.href : `${res.href}/`;
      const items = next.value.map((c) => {
        const href = base + encodeSegment(c.name) + (c.type === 'folder' ? '/' : '');
        return `<li><a href="${escapeXml(href)}">${escapeXml(c.name)}${c.type === 'folder' ? '/' : ''}</a></li>`;
      });
      controller.enqueue(encoder.encode(items.join('')));
    },
  });
  return new Response(stream, { headers });
}

/** What a PROPFIND asks: its depth, its properties and so what the walk brings back with the rows. */
interface Propfind {
  depth: '0' | '1';
  want: PropRequest;
  needs: DavListingNeeds;
}

/** The PROPFIND's Depth and body; Depth: infinity is answered (403) rather than walked. */
async function propfindOf(request: Request): Promise<Propfind | Response> {
  const depth = (request.headers.get('depth') ?? '1').trim().toLowerCase();
  if (depth === 'infinity') return davError(403, 'propfind-finite-depth', 'PROPFIND with Depth: infinity is not served; use Depth 0 or 1');
  if (depth !== '0' && depth !== '1') throw badRequest('Depth must be 0, 1 or infinity');
  const want = propRequestOf(await xmlBody(request));
  return { depth, want, needs: needsOf(want, depth === '1') };
}

/** What the answer to `want` reads beyond the rows. */
function needsOf(want: PropRequest, children: boolean): DavListingNeeds {
  const named = (ns: string, name: string) => want.kind === 'prop' && want.names.some((n) => n.ns === ns && n.name === name);
  return {
    children,
    dead: want.kind !== 'prop' || want.names.some((n) => !isLive(n.ns, n.name)),
    previews: named(NC, 'has-preview'),
    checksums: named(OC, 'checksums'),
    sharedOut: named(OC, 'permissions'),
  };
}

function propfind(place: Walked, view: TreeView | null, asked: Propfind, res: Resource): Response {
  if (!place.target || !view) throw notFound(Messages.itemNotFound);
  const { depth, want } = asked;
  const tree = place.view!;
  const listsShares = place.kind === 'list';
  const answer = new PropfindAnswer(view, want, listsShares);
  const self = res.item;
  const selfDead = answer.take(tree.self);
  const first =
    XML_HEAD +
    '<D:multistatus xmlns:D="DAV:">' +
    answer.responseXml(self, res.path.key, res.href, self ? selfDead.get(self.id) : undefined);
  const base = res.href.endsWith('/') ? res.href : `${res.href}/`;
  async function* parts(): AsyncGenerator<Parts> {
    yield new ListParts([first]);
    if (listsShares && depth === '1') {
      const dead = answer.take(tree.mounts.rows);
      yield new ListParts(
        tree.mounts.shares.map((s) =>
          answer.responseXml(
            s.item,
            `${res.path.key}/${davPath([s.name]).key.slice(1)}`,
            base + encodeSegment(s.name) + (s.item.type === 'folder' ? '/' : ''),
            dead.get(s.item.id),
          ),
        ),
      );
    }
    // The root also lists SHARED_WITH_ME while something is shared with the account, and its team folders.
    if (!listsShares && !self && depth === '1' && view!.sharedEtag)
      yield new ListParts([answer.responseXml(null, SHARED_KEY, `${base}${encodeSegment(SHARED_WITH_ME)}/`, undefined, true)]);
    if (!listsShares && !self && depth === '1') {
      const dead = answer.take(tree.mounts.rows);
      yield new ListParts(
        tree.mounts.shares.map((t) =>
          answer.responseXml(t.item, davPath([t.name]).key, `${base}${encodeSegment(t.name)}/`, dead.get(t.item.id)),
        ),
      );
    }
    for await (const batch of tree.children ?? []) yield new ChildParts(answer, batch, res.path.key, base);
    yield new ListParts(['</D:multistatus>']);
  }
  return new Response(streamText(parts()), { status: 207, headers: { 'Content-Type': XML_TYPE } });
}

/** The text inside an element (its text children joined), trimmed. */
function textOf(el: XmlElement | undefined): string {
  return el
    ? el.children
        .map((c) => (c.kind === 'text' ? c.text : ''))
        .join('')
        .trim()
    : '';
}

/** What a sync-collection REPORT asks (RFC 6578 §6.1): a token (empty: the first sync), a level, a limit, properties. */
interface SyncRequest {
  token: string;
  level: SyncLevel;
  limit: number | null;
  names: PropName[];
}

function syncRequestOf(body: XmlElement | null): SyncRequest | null {
  if (!body) throw badRequest('A REPORT body names the report: DAV:sync-collection');
  if (body.ns !== DAV || body.name !== 'sync-collection') return null;
  const level = textOf(childElements(body, DAV, 'sync-level')[0]) || '1';
  if (level !== '1' && level !== 'infinite') throw badRequest('DAV:sync-level is 1 or infinite');
  const limitEl = childElements(body, DAV, 'limit')[0];
  let limit: number | null = null;
  if (limitEl) {
    const n = textOf(childElements(limitEl, DAV, 'nresults')[0]);
    if (!/^\d{1,9}$/.test(n) || Number(n) < 1) throw badRequest('DAV:limit names DAV:nresults, a whole number of 1 or more');
    limit = Number(n);
  }
  const prop = childElements(body, DAV, 'prop')[0];
  if (!prop) throw badRequest('A sync-collection names the properties to return in DAV:prop');
  return { token: textOf(childElements(body, DAV, 'sync-token')[0]), level, limit, names: propNamesOf(prop) };
}

/** A batch of sync-collection results: members with their properties (dead ones read together), removed ones as 404. */
class SyncParts implements Parts {
  readonly count: number;
  private readonly dead: Map<string, Dead>;
  constructor(
    private readonly answer: PropfindAnswer,
    private readonly results: readonly SyncResult[],
    members: DavRows<Listed>,
    private readonly place: Place,
    private readonly base: DavPath,
  ) {
    this.count = results.length;
    this.dead = answer.take(members);
  }
  part(i: number): string {
    const r = this.results[i]!;
    const path = davPath([...this.base.segments, ...r.segments]);
    if (r.kind === 'removed')
      return `<D:response><D:href>${escapeXml(hrefIn(this.place, path, r.folder))}</D:href><D:status>${statusLine(404)}</D:status></D:response>`;
    return this.answer.responseXml(r.item, path.key, hrefIn(this.place, path, r.item.type === 'folder'), this.dead.get(r.item.id));
  }
}

/**
 * REPORT: RFC 6578's sync-collection on a collection (RFC 3253's DAV:supported-report for any other
 * report). The answer streams; past the client's limit (or the server's) the request-URI gets a 507
 * and the token continues where the answer stopped.
 */
async function report(dav: DavService, sync: DavSync, request: Request, res: Resource, instanceId: string): Promise<Response> {
  const depth = (request.headers.get('depth') ?? '0').trim();
  if (depth !== '0') throw badRequest('A sync-collection REPORT takes Depth: 0 (DAV:sync-level says how deep)');
  const want = syncRequestOf(await xmlBody(request));
  if (!want) return davError(403, 'supported-report', 'The only REPORT served here is DAV:sync-collection');
  const asked: PropRequest = { kind: 'prop', names: want.names };
  const needs = needsOf(asked, false);
  // Walked again now that the properties are known: the answer's tree (ETags, roles, usage) comes with it.
  const meta = requestMeta(request);
  const place = walkTo(dav, meta.principal!, meta.path, { listing: needs });
  const target = place.target;
  const view = treeView(sync, place, instanceId);
  if (!target || !view) throw notFound(Messages.itemNotFound);
  if (target.kind === 'item' && target.item.type !== 'folder')
    return davError(403, 'supported-report', 'sync-collection reports on a collection, not a file');
  let run: ReturnType<DavSync['start']>;
  try {
    run = sync.start(view.principal, target.kind === 'root' ? null : target.item.id, want.level, want.token, want.limit);
  } catch (err) {
    if (err instanceof SyncTokenError) return davError(403, 'valid-sync-token', err.message);
    throw err;
  }
  const answer = new PropfindAnswer(view, asked, false);
  const members = (batch: readonly SyncResult[]) =>
    dav.rowsOf(
      batch.flatMap((r) => (r.kind === 'member' ? [r.item] : [])),
      needs,
    );
  async function* parts(): AsyncGenerator<Parts> {
    yield new ListParts([`${XML_HEAD}<D:multistatus xmlns:D="DAV:">`]);
    let batch: SyncResult[] = [];
    for await (const r of run.results()) {
      batch.push(r);
      if (batch.length === DEAD_BATCH) {
        yield new SyncParts(answer, batch, members(batch), place, res.path);
        batch = [];
      }
    }
    if (batch.length) yield new SyncParts(answer, batch, members(batch), place, res.path);
    const truncated = run.truncated
      ? `<D:response><D:href>${escapeXml(res.href)}</D:href><D:status>${statusLine(507)}</D:status></D:response>`
      : '';
    yield new ListParts([`${truncated}<D:sync-token>${escapeXml(run.token)}</D:sync-token></D:multistatus>`]);
  }
  return new Response(streamText(parts()), { status: 207, headers: { 'Content-Type': XML_TYPE } });
}

/** oc:id and OC-FileId: the numeric id zero-padded to eight digits, then the instance's id (as Nextcloud writes them). */
export const ocIdOf = (seq: number, instanceId: string) => `${String(seq).padStart(8, '0')}${instanceId}`;

/** What a PROPFIND says of the tree a request acts in (the walk's view), who acts, the instance (oc:id) and the sync tokens. */
type TreeView = DavTreeView & {
  principal: Principal;
  instanceId: string;
  /** A collection's DAV:sync-token (null: the tree's root); null for SHARED_WITH_ME, which has none. */
  syncToken: ((collectionId: string | null) => string) | null;
};

function treeView(sync: DavSync, place: Walked, instanceId: string): TreeView | null {
  if (!place.view) return null;
  const { principal } = place;
  const syncToken = place.kind === 'list' ? null : (collectionId: string | null) => sync.tokenOf(principal, collectionId);
  return { ...place.view, principal, instanceId, syncToken };
}

/**
 * oc:permissions: the letters of RGDNVWCKS this login may use on a resource, from its permissions and
 * its role: R share, G read, D delete, N rename, V move, W write (files), C and K create (folders), S shared
 * (with it, or by its owner with people or by a link).
 */
function permissionsOf(view: TreeView, item: Listed | null, sharedList: boolean): string {
  const p = view.principal;
  const read = can(p, 'files.download') ? 'G' : '';
  if (sharedList) return read;
  const role = (item && view.shareRoots.get(item.id)) || view.role;
  // The root and a shared item itself cannot be deleted, renamed or moved from here.
  const top = !item || view.shareRoots.has(item.id);
  const write = role !== 'viewer';
  const folder = !item || item.type === 'folder';
  let out = role === 'owner' && item && can(p, 'files.share') ? 'R' : '';
  out += read;
  if (write && !top && can(p, 'files.delete')) out += 'D';
  if (write && !top && can(p, 'files.edit')) out += 'NV';
  if (write && !folder && can(p, 'files.edit')) out += 'W';
  if (write && folder && can(p, 'files.upload')) out += 'CK';
  return role !== 'owner' || (item && view.sharedOut.has(item.id)) ? `${out}S` : out;
}

/** An item's dead properties by propKey. */
type Dead = Map<string, { ns: string; name: string; value: string }>;
const NO_DEAD: Dead = new Map();
/** A resource PROPFIND answers for: a listed child, or the target and shared items. */
type Listed = DavEntry | DavItem;
/** A resource's ETag as XML text (a listed child's is written with its row). */
const etagXml = (item: Listed) => ('etagXml' in item ? item.etagXml : escapeQuotedXml(item.etag));
const ALL_NAMES: PropName[] = ALLPROP.map((name) => ({ ns: DAV, name }));

/**
 * One PROPFIND's request and the rows' answers. Methods, not closures made per request: the JIT
 * recompiled those closures request after request once other traffic had run (never reaching its top tier).
 */
class PropfindAnswer {
  /** allprop without include: rows without dead properties (nearly all) take allpropXml. */
  private readonly plainAllprop: boolean;
  /** The files of the rows being written (a batch at a time) that nc:has-preview is true of. */
  private previews: ReadonlySet<string> = new Set();

  private readonly principal: Principal;
  /** oc:checksums of the rows being written (a batch at a time), by item id. */
  private checksums: ReadonlyMap<string, string> = new Map();

  constructor(
    private readonly view: TreeView,
    private readonly want: PropRequest,
    /** The resource is SHARED_WITH_ME (its displayname). */
    private readonly sharedList: boolean,
  ) {
    this.principal = view.principal;
    this.plainAllprop = want.kind === 'allprop' && want.include.length === 0;
  }

  /** Takes what a batch of rows about to be written brought beyond itself (previews, SHA1s); their dead properties by item id. */
  take(batch: DavRows<Listed>): Map<string, Dead> {
    this.previews = batch.previews;
    this.checksums = batch.checksums;
    const byId = new Map<string, Dead>();
    for (const [id, list] of batch.dead) {
      const props: Dead = new Map();
      for (const p of list) props.set(propKey(p.ns, p.name), p);
      byId.set(id, props);
    }
    return byId;
  }

  /** An ownCloud or Nextcloud property's value on a resource (null item: the root, or SHARED_WITH_ME with `shared`). */
  private ncValue(item: Listed | null, ns: string, name: string, shared: boolean): string | undefined {
    if (ns === NC) return name === 'has-preview' ? String(!!item && this.previews.has(item.id)) : undefined;
    switch (name) {
      // SHARED_WITH_ME is no item; the clients refuse a folder without an id, so it gets 0, which no item has.
      case 'fileid':
        return item ? String(item.seq) : shared ? '0' : undefined;
      case 'id':
        return item || shared ? escapeXml(ocIdOf(item?.seq ?? 0, this.view.instanceId)) : undefined;
      case 'permissions':
        return permissionsOf(this.view, item, shared);
      case 'checksums': {
        const sha1 = item && this.checksums.get(item.id);
        return sha1 ? `<x:checksum>SHA1:${sha1}</x:checksum>` : undefined;
      }
      case 'size':
        if (shared) return undefined;
        return String(!item ? this.view.rootSize : item.type === 'folder' ? item.treeSize : item.size);
    }
    return undefined;
  }

  /** A live property's value on a resource (`key`: its path key, for locks); undefined where it has none. */
  private liveValue(item: Listed | null, key: string, name: string, shared: boolean): string | undefined {
    const folder = !item || item.type === 'folder';
    switch (name) {
      case 'resourcetype':
        return folder ? '<D:collection/>' : '';
      case 'displayname':
        return item ? escapeXml(item.name) : this.sharedList ? escapeXml(SHARED_WITH_ME) : '';
      case 'creationdate':
        return item ? isoString(item.createdAt) : undefined;
      case 'getlastmodified':
        return item ? utcString(item.modifiedAt) : shared ? utcString(this.view.sharedModifiedAt) : undefined;
      case 'getcontentlength':
        return folder ? undefined : String(item!.size);
      case 'getcontenttype':
        return folder ? undefined : escapeXml(item!.mimeType ?? 'application/octet-stream');
      case 'getetag':
        return item ? etagXml(item) : escapeXml((shared ? this.view.sharedEtag : this.view.rootEtag) ?? '') || undefined;
      case 'supportedlock':
        return SUPPORTED_LOCK;
      case 'lockdiscovery':
        return locksCovering(this.view.locks, key).map(lockXml).join('');
      case 'quota-used-bytes':
        return String(this.view.usage.used);
      case 'quota-available-bytes':
        return this.view.usage.free === null ? undefined : String(this.view.usage.free);
      case 'supported-report-set':
        return folder && this.view.syncToken ? SUPPORTED_REPORTS : undefined;
      case 'sync-token':
        // A team folder listed at the root is another tree: its token comes from a PROPFIND on it.
        if (!folder || !this.view.syncToken || shared || (item && 'accountId' in item && item.accountId !== this.principal.accountId))
          return undefined;
        return escapeXml(this.view.syncToken(item?.id ?? null));
    }
    return undefined;
  }

  /** A row's allprop answer without dead properties: the general loop's elements in ALLPROP order, written out. */
  private allpropXml(item: Listed, key: string, href: string): string {
    const file = item.type !== 'folder';
    const locks = locksCovering(this.view.locks, key);
    let out = `<D:response><D:href>${escapeXml(href)}</D:href><D:propstat><D:prop><D:creationdate>${isoString(item.createdAt)}</D:creationdate>`;
    out += propXml(DAV, 'displayname', escapeXml(item.name));
    if (file) {
      out += `<D:getcontentlength>${item.size}</D:getcontentlength>`;
      out += propXml(DAV, 'getcontenttype', escapeXml(item.mimeType ?? 'application/octet-stream'));
    }
    out += `${propXml(DAV, 'getetag', etagXml(item))}<D:getlastmodified>${utcString(item.modifiedAt)}</D:getlastmodified>`;
    out += locks.length ? `<D:lockdiscovery>${locks.map(lockXml).join('')}</D:lockdiscovery>` : '<D:lockdiscovery/>';
    out += file ? '<D:resourcetype/>' : '<D:resourcetype><D:collection/></D:resourcetype>';
    return `${out}${ALLPROP_TAIL}`;
  }

  /** A resource's response element (`item` null: the account's root, or SHARED_WITH_ME with `shared`). */
  responseXml(item: Listed | null, key: string, href: string, dead: Dead = NO_DEAD, shared = this.sharedList && !item): string {
    const want = this.want;
    if (this.plainAllprop && item && dead.size === 0) return this.allpropXml(item, key, href);
    let found = '';
    let missing = '';
    if (want.kind === 'propname') {
      for (const name of ALLPROP) if (this.liveValue(item, key, name, shared) !== undefined) found += propXml(DAV, name);
      for (const p of dead.values()) found += propXml(p.ns, p.name);
    } else {
      const extra = want.kind === 'allprop' && (dead.size > 0 || want.include.length > 0);
      const names = want.kind === 'prop' ? want.names : extra ? [...ALL_NAMES, ...dead.values(), ...want.include] : ALL_NAMES;
      const seen = want.kind === 'prop' || extra ? new Set<string>() : null;
      for (const { ns, name } of names) {
        const id = propKey(ns, name);
        if (seen) {
          if (seen.has(id)) continue;
          seen.add(id);
        }
        const value =
          ns === DAV && LIVE.has(name)
            ? this.liveValue(item, key, name, shared)
            : isLive(ns, name)
              ? this.ncValue(item, ns, name, shared)
              : dead.get(id)?.value;
        if (value === undefined) {
          if (want.kind === 'prop') missing += propXml(ns, name);
        } else found += propXml(ns, name, value);
      }
    }
    let out = `<D:response><D:href>${escapeXml(href)}</D:href>`;
    if (found || !missing) out += `<D:propstat><D:prop>${found}</D:prop><D:status>${statusLine(200)}</D:status></D:propstat>`;
    if (missing) out += `<D:propstat><D:prop>${missing}</D:prop><D:status>${statusLine(404)}</D:status></D:propstat>`;
    return `${out}</D:response>`;
  }
}

/** A group of parts of a streamed answer, each built only when the stream asks for it. */
interface Parts {
  readonly count: number;
  part(i: number): string;
}

/** Parts already built. */
class ListParts implements Parts {
  readonly count: number;
  constructor(private readonly list: readonly string[]) {
    this.count = list.length;
  }
  part(i: number): string {
    return this.list[i]!;
  }
}

/** A batch of listed children's response elements, their dead properties read together. */
class ChildParts implements Parts {
  readonly count: number;
  private readonly rows: readonly DavEntry[];
  private readonly dead: Map<string, Dead>;
  constructor(
    private readonly answer: PropfindAnswer,
    batch: DavRows<DavEntry>,
    /** The folder's path key: a child's is it and the child's name key (stored names are already normalized). */
    private readonly folderKey: string,
    /** The folder's href, ending in '/'. */
    private readonly base: string,
  ) {
    this.rows = batch.rows;
    this.count = batch.rows.length;
    this.dead = answer.take(batch);
  }
  part(i: number): string {
    const c = this.rows[i]!;
    const href = this.base + encodeSegment(c.name) + (c.type === 'folder' ? '/' : '');
    return this.answer.responseXml(c, `${this.folderKey}/${c.nameKey}`, href, this.dead.get(c.id));
  }
}

/** Rows whose dead properties are read together while a listing streams. */
const DEAD_BATCH = 50;
/** Text is sent once this much is gathered (or the parts end). */
const STREAM_CHUNK = 64 * 1024;

/**
 * Streams groups of parts, a part (a response element) at a time, gathered into chunks of about
 * STREAM_CHUNK: a folder of any size (or a client asking for many properties) never has its answer built whole.
 * Chunks go out as text: Bun's response sink writes them as UTF-8 (the bytes TextEncoder made, lone surrogates
 * too) without the Uint8Array TextEncoder allocated for each.
 */
function streamText(groups: AsyncGenerator<Parts>): ReadableStream<string> {
  let group: Parts | null = null;
  let at = 0;
  return new ReadableStream<string>({
    async pull(controller) {
      let chunk = '';
      while (chunk.length < STREAM_CHUNK) {
        if (!group || at === group.count) {
          const next = await groups.next();
          if (next.done) {
            if (chunk) controller.enqueue(chunk);
            controller.close();
            return;
          }
          group = next.value;
          at = 0;
          continue;
        }
        chunk += group.part(at++);
      }
      controller.enqueue(chunk);
    },
    async cancel() {
      await groups.return(undefined);
    },
  });
}

async function proppatch(
  dav: DavService,
  principal: Principal,
  request: Request,
  target: DavTarget | null,
  res: Resource,
): Promise<Response> {
  const body = await xmlBody(request);
  if (!body || body.ns !== DAV || body.name !== 'propertyupdate') throw badRequest('A PROPPATCH body must be a DAV:propertyupdate element');
  if (!target) throw notFound(Messages.itemNotFound);
  checkWrite(dav, principal, request, res, target);
  const patches: PropPatch[] = [];
  for (const op of childElements(body, DAV)) {
    if (op.name !== 'set' && op.name !== 'remove') continue;
    for (const prop of childElements(op, DAV, 'prop')) {
      for (const el of childElements(prop)) {
        patches.push({ ns: el.ns, name: el.name, value: op.name === 'set' ? serializeNodes(el.children) : null });
      }
    }
  }
  if (patches.length === 0) throw badRequest('PROPPATCH names no property to set or remove');
  const protectedProp = (p: PropPatch) => isLive(p.ns, p.name);
  const refused = target.kind === 'root' || patches.some(protectedProp);
  if (!refused) dav.patchProperties(principal, target.item, patches);
  const stat = (list: PropPatch[], code: number) =>
    list.length
      ? `<D:propstat><D:prop>${list.map((p) => propXml(p.ns, p.name)).join('')}</D:prop><D:status>${statusLine(code)}</D:status></D:propstat>`
      : '';
  const propstats = refused
    ? stat(
        patches.filter((p) => target.kind === 'root' || protectedProp(p)),
        403,
      ) +
      stat(
        patches.filter((p) => target.kind !== 'root' && !protectedProp(p)),
        424,
      )
    : stat(patches, 200);
  return xmlResponse(
    207,
    `<D:multistatus xmlns:D="DAV:"><D:response><D:href>${escapeXml(res.href)}</D:href>${propstats}</D:response></D:multistatus>`,
  );
}

/** OC-Checksum's SHA1 (`SHA1:<hex>`, among others the header may list); undefined without one, 400 when malformed. */
function sha1Of(request: Request): string | undefined {
  const header = request.headers.get('oc-checksum');
  const sha1 = header?.split(/\s+/).find((c) => c.toUpperCase().startsWith('SHA1:'));
  if (!sha1) return undefined;
  const hex = sha1.slice(5);
  if (!/^[0-9a-fA-F]{40}$/.test(hex)) throw badRequest('OC-Checksum names a SHA1 of 40 hexadecimal digits: SHA1:<hex>');
  return hex;
}

/** Writes content that is not the request's body (a chunked upload's final MOVE), with what the request says of it. */
type PutFrom = (input: {
  modifiedMs: number | null;
  sha1?: string;
  signal: AbortSignal;
  lock: { tokens: ReadonlySet<string>; href: string };
}) => Promise<{ created: boolean; item: DavItem }>;

async function put(
  dav: DavService,
  principal: Principal,
  request: Request,
  target: DavTarget | null,
  res: Resource,
  instanceId: string,
  from?: PutFrom,
): Promise<Response> {
  if (request.headers.has('content-range')) throw badRequest('PUT with Content-Range is not supported; send the whole file');
  // The locks are the service's to check, with the write.
  const tokens = checkConditions(dav, principal, request, res, target);
  const mtime = request.headers.get('x-oc-mtime');
  const modifiedMs = mtime && /^\d{1,12}(\.\d+)?$/.test(mtime.trim()) ? Math.round(Number(mtime.trim()) * 1000) || null : null;
  const declared = Number(request.headers.get('content-length'));
  const input = { modifiedMs, sha1: sha1Of(request), signal: request.signal, lock: { tokens, href: res.href } };
  const { created, item } = from
    ? await from(input)
    : await dav.put(principal, res.path, {
        ...input,
        body: readBody(request),
        contentType: request.headers.get('content-type') ?? '',
        sizeHint: Number.isFinite(declared) ? declared : undefined,
      });
  // The Nextcloud clients read the new ETag and the file's id from these rather than PROPFIND again.
  const headers: Record<string, string> = { ETag: item.etag, 'OC-ETag': item.etag, 'OC-FileId': ocIdOf(item.seq, instanceId) };
  if (modifiedMs !== null) headers['X-OC-MTime'] = 'accepted';
  return new Response(null, { status: created ? 201 : 204, headers });
}

/** Where a chunked upload's final MOVE writes: the Destination's tree, resource and what is there. */
export interface DavDestination {
  principal: Principal;
  target: DavTarget | null;
  res: Resource;
}

/** The Destination header as a URL on this server; 400 without one (saying `missing`) or when it is no URL, 502 on another host. */
export function destinationUrl(request: Request, missing: string): URL {
  const destination = request.headers.get('destination');
  if (!destination) throw badRequest(missing);
  let url: URL;
  try {
    url = new URL(destination, requestMeta(request).origin);
  } catch {
    throw badRequest('The Destination header is not a URL');
  }
  if (url.host !== requestMeta(request).host) throw new AppError(502, 'The destination is on another server');
  return url;
}

/**
 * The final MOVE's Destination (any WebDAV door, "Shared with me" included), checked as a PUT there is
 * before anything is assembled: the viewer's 403, If-Match (412) and locks (423).
 */
export function davDestination(dav: DavService, request: Request): DavDestination {
  const url = destinationUrl(request, 'MOVE needs a Destination header');
  const place = walkTo(dav, requestMeta(request).principal!, url.pathname, { write: 'write' });
  if (place.kind === 'list')
    throw forbidden(`"${SHARED_WITH_ME}" lists what other accounts share with you: put files inside one of its folders.`);
  const { target } = place;
  const res: Resource = { path: place.path, href: hrefIn(place, place.path, false), item: target?.kind === 'item' ? target.item : null };
  checkWrite(dav, place.principal, request, res, target);
  return { principal: place.principal, target, res };
}

/** Writes a chunked upload at its Destination, as a PUT there would (X-OC-Mtime, OC-Checksum, the answer's headers). */
export function putAtDestination(dav: DavService, request: Request, dest: DavDestination, from: PutFrom, instanceId: string) {
  return put(dav, dest.principal, request, dest.target, dest.res, instanceId, from);
}

/**
 * The principal a Destination's writes act as: the owner of the share it points into when the caller
 * may write there (whose quota a file there takes), else the caller.
 */
export function destinationPrincipal(dav: DavService, request: Request): Principal {
  const destination = request.headers.get('destination');
  const caller = requestMeta(request).principal!;
  if (!destination) return caller;
  try {
    const place = walkTo(dav, caller, new URL(destination, requestMeta(request).origin).pathname);
    return place.kind === 'mount' && place.mount.role === 'editor' ? place.principal : caller;
  } catch {
    return caller;
  }
}

/** WebDAV's answers for service errors: 507 for the quota (RFC 4918 §9.7.1), XML conditions where a lock or precondition says so. */
export async function davErrors(serve: () => Promise<Response>): Promise<Response> {
  try {
    return await serve();
  } catch (err) {
    if (err instanceof StorageLimitError) throw new AppError(507, err.message);
    if (err instanceof AppError && err.extra?.davCondition) {
      return davError(err.status, String(err.extra.davCondition), err.message);
    }
    throw err;
  }
}

async function transfer(
  dav: DavService,
  place: Place,
  request: Request,
  method: 'COPY' | 'MOVE',
  target: DavTarget | null,
  res: Resource,
): Promise<Response> {
  const url = destinationUrl(request, `${method} needs a Destination header`);
  const { principal } = place;
  // A Destination in another tree (the caller's own, another share) would hand items to another account.
  const destPlace = walkTo(dav, requestMeta(request).principal!, url.pathname);
  const sameTree =
    destPlace.kind === place.kind &&
    (place.kind !== 'mount' || (destPlace.kind === 'mount' && destPlace.mount.prefix.join('/') === place.mount.prefix.join('/')));
  if (!sameTree || (destPlace.kind === 'mount' && destPlace.isRoot)) throw forbidden(Messages.shareBoundary);
  const dest = destPlace.path;
  const overwrite = (request.headers.get('overwrite') ?? 'T').trim().toUpperCase();
  if (overwrite !== 'T' && overwrite !== 'F') throw badRequest('Overwrite must be T or F');
  const depth = (request.headers.get('depth') ?? 'infinity').trim().toLowerCase();
  if (method === 'MOVE' ? depth !== 'infinity' : depth !== '0' && depth !== 'infinity')
    throw badRequest(method === 'MOVE' ? 'MOVE takes Depth: infinity' : 'COPY takes Depth 0 or infinity');
  if (!target) throw notFound(Messages.itemNotFound);
  if (target.kind === 'root') throw forbidden(`The root folder cannot be ${method === 'MOVE' ? 'moved' : 'copied'}`);
  const destTarget = destPlace.target;
  const destRes: Resource = {
    path: dest,
    href: hrefIn(place, dest, target.item.type === 'folder'),
    item: destTarget?.kind === 'item' ? destTarget.item : null,
  };
  const tokens = checkConditions(dav, principal, request, res, target);
  if (method === 'MOVE') dav.assertUnlocked(principal, res.path, { tokens }, res.href, true);
  dav.assertUnlocked(principal, dest, { tokens }, destRes.href, true);
  const { created } = await dav.transfer(principal, method === 'COPY' ? 'copy' : 'move', { path: res.path, item: target.item }, dest, {
    overwrite: overwrite === 'T',
    shallow: depth === '0',
  });
  return new Response(null, { status: created ? 201 : 204 });
}

async function lock(dav: DavService, principal: Principal, request: Request, target: DavTarget | null, res: Resource): Promise<Response> {
  const body = await xmlBody(request);
  const timeout = DavLockService.timeoutOf(request.headers.get('timeout'));
  if (!body) {
    // A refresh: the If header names the lock.
    const tokens = checkConditions(dav, principal, request, res, target);
    const held = dav.refreshLock(principal, res.path, tokens, timeout);
    if (!held) return davError(412, 'lock-token-submitted', 'A lock refresh names the lock in the If header');
    return xmlResponse(200, `<D:prop xmlns:D="DAV:"><D:lockdiscovery>${lockXml(held)}</D:lockdiscovery></D:prop>`);
  }
  if (body.ns !== DAV || body.name !== 'lockinfo') throw badRequest('A LOCK body must be a DAV:lockinfo element');
  const scopeEl = childElements(body, DAV, 'lockscope')[0];
  const scope = scopeEl ? childElements(scopeEl, DAV)[0]?.name : undefined;
  if (scope !== 'exclusive' && scope !== 'shared') throw badRequest('lockscope must be exclusive or shared');
  const typeEl = childElements(body, DAV, 'locktype')[0];
  if (!typeEl || childElements(typeEl, DAV)[0]?.name !== 'write') throw badRequest('locktype must be write');
  const owner = childElements(body, DAV, 'owner')[0];
  const depth = (request.headers.get('depth') ?? 'infinity').trim().toLowerCase();
  if (depth !== '0' && depth !== 'infinity') throw badRequest('LOCK takes Depth 0 or infinity');
  checkConditions(dav, principal, request, res, target);
  const { lock: made, created } = await dav.lock(principal, res.path, {
    href: res.href,
    depth: depth === '0' ? '0' : 'infinity',
    scope,
    ownerXml: owner ? serializeNodes(owner.children) : '',
    timeoutSeconds: timeout,
  });
  return xmlResponse(created ? 201 : 200, `<D:prop xmlns:D="DAV:"><D:lockdiscovery>${lockXml(made)}</D:lockdiscovery></D:prop>`, {
    'Lock-Token': `<${made.token}>`,
  });
}
