import { Elysia } from 'elysia';
import type { AppContext } from '../../context.ts';
import { AppError, badRequest, StorageLimitError } from '../../errors.ts';
import { childElements, escapeXml, serializeNodes } from '../../lib/xml.ts';
import { DavLockService } from '../../services/dav/dav-locks.ts';
import { type DavSync } from '../../services/dav/dav-sync.ts';
import {
  type DavConditions,
  type DavEntry,
  type DavHref,
  type DavWrite,
  type DavItem,
  type DavPath,
  type DavService,
  type DavTarget,
  type PropPatch,
  SHARED_WITH_ME,
  sharedListReadOnly,
  assertNotSharedListName,
} from '../../services/dav/dav.ts';
import { type Principal } from '../../services/identity/principal.ts';
import { readBody, readText } from '../body.ts';
import { notModifiedResponse, openedFileResponse } from '../download-responses.ts';
import { readConditionsOf } from '../../lib/etags.ts';
import { davAuthenticate } from '../guard.ts';
import type { Limits } from '../limits.ts';
import { requestMeta } from '../request-meta.ts';
import { route, routes } from '../route.ts';
import {
  type Resource,
  type Walked,
  addressOf,
  destinationUrl,
  pathHeader,
  doorOf,
  encodeSegment,
  hrefIn,
  hrefOf,
  pathOfUrlPath,
  segmentsAfter,
  walkTo,
} from './paths.ts';
import { type Propfind, propfind, propfindOf, report, reportOf, treeView } from './propfind.ts';
import { DAV, davError, isLive, langIn, lockXml, ocIdOf, propXml, statusLine, xmlBody, xmlResponse } from './xml.ts';

const METHODS = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK, REPORT';

/** OPTIONS of a WebDAV door, or of the server's root with the methods it serves: Windows and Office want MS-Author-Via. */
const davOptions = (allow: string) =>
  new Response(null, { headers: { DAV: '1, 2', 'MS-Author-Via': 'DAV', Allow: allow, 'Content-Length': '0' } });
/** The paths WebDAV serves, every door. */
const DAV_PATH = /^\/(dav|remote\.php\/webdav)(\/|$)|^\/remote\.php\/dav\/files\//;

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
  return routes([
    // Windows' WebClient and Office ask the server's root whatever folder is mapped, and give up without MS-Author-Via.
    route('OPTIONS /', { handler: () => davOptions('OPTIONS, GET, HEAD') }),
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
  ])(app);
}

async function serve(dav: DavService, sync: DavSync, request: Request, instanceId: string): Promise<Response> {
  const meta = requestMeta(request);
  const method = request.method.toUpperCase();
  if (method === 'OPTIONS') {
    return davOptions(METHODS);
  }
  // A fragment is never part of a request target (RFC 9110 §7.1); acting on the path without it could delete the wrong thing.
  if (request.url.includes('#')) throw badRequest('The request URL must not contain a fragment (#)');
  // A PROPFIND is read before the walk: what it asks for is what the walk brings back with the rows.
  const asked = method === 'PROPFIND' ? await propfindOf(request) : null;
  if (asked instanceof Response) return asked;
  if (method === 'REPORT') return report(sync, request, await reportOf(request), instanceId);
  if (method === 'GET' || method === 'HEAD') return get(dav, request, method === 'HEAD');
  if (method === 'PUT') return put(dav, request, instanceId);
  if (Object.hasOwn(ONCE, method)) return ONCE[method]!(dav, request, instanceId);
  const address = addressOf(meta.principal!, meta.path);
  const place: Walked = { ...sync.walk(meta.principal!, address.path, { listing: asked?.needs }), prefix: address.prefix };
  if (place.kind === 'list') return sharedList(method, place, instanceId, asked);
  const { path, target } = place;
  const folder = target?.kind === 'root' || target?.item.type === 'folder' || (!target && meta.path.endsWith('/'));
  const res: Resource = { path, href: hrefIn(place, path, folder), item: target?.kind === 'item' ? target.item : null };
  switch (method) {
    case 'PROPFIND':
      return propfind(place, treeView(place, instanceId), asked!, res);
    default:
      return new Response(JSON.stringify({ message: `${method} is not a WebDAV method served here` }), {
        status: 405,
        headers: { Allow: METHODS, 'Content-Type': 'application/json' },
      });
  }
}

/** What a request's body says, or the 4xx it earns, refused where the method always refused it (after the walk). */
async function deferred<T>(read: () => Promise<T> | T): Promise<{ value: T; error: null } | { value: null; error: AppError }> {
  try {
    return { value: await read(), error: null };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { value: null, error: err };
  }
}

/** A write's request for the service: its preconditions, its href, and what the door refuses once the walk found what is there. */
function writeOf(request: Request, refuse?: DavWrite['refuse']): { path: DavPath; write: DavWrite } {
  const meta = requestMeta(request);
  const { prefix, path } = addressOf(meta.principal!, meta.path);
  return { path, write: { conditions: conditionsOf(request, meta.principal!), href: hrefFor(prefix, meta.path), refuse } };
}

/** The methods that cross into the service once, each a single call that walks, checks and acts. */
const ONCE: Record<string, (dav: DavService, request: Request, instanceId: string) => Promise<Response>> = {
  async MKCOL(dav, request, instanceId) {
    const body = await deferred(() => readText(request));
    const refused = body.error ?? (body.value.length > 0 ? new AppError(415, 'MKCOL takes no body') : null);
    const { path, write } = writeOf(request, () => refused);
    const created = dav.mkcolAt(requestMeta(request).principal!, path, write);
    return new Response(null, { status: 201, headers: { ETag: created.etag, 'OC-FileId': ocIdOf(created.seq, instanceId) } });
  },
  async DELETE(dav, request) {
    const depth = request.headers.get('depth');
    const { path, write } = writeOf(request, (target) =>
      target?.kind === 'item' && target.item.type === 'folder' && depth !== null && depth.toLowerCase() !== 'infinity'
        ? badRequest('DELETE of a folder takes Depth: infinity')
        : null,
    );
    await dav.removeAt(requestMeta(request).principal!, path, write);
    return new Response(null, { status: 204 });
  },
  async UNLOCK(dav, request) {
    const meta = requestMeta(request);
    const { path } = addressOf(meta.principal!, meta.path);
    const token = /^\s*<([^>]+)>\s*$/.exec(request.headers.get('lock-token') ?? '')?.[1] ?? null;
    if (!dav.unlockAt(meta.principal!, path, token, badRequest('UNLOCK needs a Lock-Token header: <token>')))
      return davError(409, 'lock-token-matches-request-uri', 'No such lock on this resource');
    return new Response(null, { status: 204 });
  },
  PROPPATCH: proppatch,
  LOCK: lock,
  COPY: (dav, request) => transfer(dav, request, 'COPY'),
  MOVE: (dav, request) => transfer(dav, request, 'MOVE'),
};

/** SHARED_WITH_ME itself: read-only, its children are the shares. */
function sharedList(method: string, place: Walked & { kind: 'list' }, instanceId: string, asked: Propfind | null): Response {
  const res: Resource = { path: place.path, href: hrefOf(place.prefix, place.path, true), item: null };
  if (method === 'PROPFIND') return propfind(place, treeView(place, instanceId), asked!, res);
  throw sharedListReadOnly();
}

/** GET of SHARED_WITH_ME: its shares as a plain list of links. */
function sharedPage(place: Walked & { kind: 'list' }, head: boolean): Response {
  const headers = { 'Content-Type': 'text/html; charset=utf-8' };
  if (head) return new Response(null, { headers });
  const href = hrefOf(place.prefix, place.path, true);
  const items = place.shares.map((s) => {
    const link = href + encodeSegment(s.name) + (s.item.type === 'folder' ? '/' : '');
    return `<li><a href="${escapeXml(link)}">${escapeXml(s.name)}${s.item.type === 'folder' ? '/' : ''}</a></li>`;
  });
  const title = escapeXml(SHARED_WITH_ME);
  return new Response(`<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><ul>${items.join('')}</ul>`, {
    headers,
  });
}

/** GET and HEAD: one visit to the service (walk, 403, then 304 / 412, the bytes); the page or the file's headers written here. */
async function get(dav: DavService, request: Request, head: boolean): Promise<Response> {
  const meta = requestMeta(request);
  const { prefix, path } = addressOf(meta.principal!, meta.path);
  const read = await dav.read(meta.principal!, path, { head, conditions: readConditionsOf(request) });
  if (read.kind === 'list') return sharedPage({ ...read.walk, prefix }, head);
  const place = { ...read.walk, prefix };
  if (read.kind === 'folder') {
    const item = place.target?.kind === 'item' ? place.target.item : null;
    return folderPage(read.pages, { path: place.path, href: hrefIn(place, place.path, true), item });
  }
  const row = read.item;
  if (read.kind === 'not-modified') return notModifiedResponse(row);
  return openedFileResponse(row, request, read.range, read.body, { validators: row });
}

/** GET of a folder: a plain list of links, for a person who opens the mount URL in a browser (HEAD: no pages, no body). */
function folderPage(pages: AsyncGenerator<DavEntry[]> | null, res: Resource): Response {
  const headers = { 'Content-Type': 'text/html; charset=utf-8' };
  if (!pages) return new Response(null, { headers });
  const encoder = new TextEncoder();
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

/** PROPPATCH: the body read first, refused (400) where it always was, after the walk; one visit to the service. */
async function proppatch(dav: DavService, request: Request): Promise<Response> {
  const read = await deferred(async () => {
    const body = await xmlBody(request);
    if (!body || body.ns !== DAV || body.name !== 'propertyupdate')
      throw badRequest('A PROPPATCH body must be a DAV:propertyupdate element');
    return body;
  });
  const patches: PropPatch[] = [];
  const rootLang = read.value ? langIn(read.value, '') : '';
  for (const op of read.value ? childElements(read.value, DAV) : []) {
    if (op.name !== 'set' && op.name !== 'remove') continue;
    const opLang = langIn(op, rootLang);
    for (const prop of childElements(op, DAV, 'prop')) {
      const propLang = langIn(prop, opLang);
      for (const el of childElements(prop)) {
        const set = op.name === 'set';
        // RFC 4918 §4.3: the xml:lang in scope on a dead property's element is part of it.
        patches.push({
          ns: el.ns,
          name: el.name,
          value: set ? serializeNodes(el.children) : null,
          lang: (set && langIn(el, propLang)) || null,
        });
      }
    }
  }
  const { path, write } = writeOf(request, () => read.error);
  // As on Nextcloud, a DAV:lastmodified set in Unix seconds sets the modified time (rclone's touch, and its sync when only the time changed).
  const touched = unixMsOf(patches.findLast((p) => p.ns === DAV && p.name === 'lastmodified')?.value);
  const patched = dav.patchAt(requestMeta(request).principal!, path, write, patches, (p) => isLive(p.ns, p.name), touched);
  const { walk } = patched;
  const target = walk.target!;
  const protectedProp = (p: PropPatch) => patched.refused.includes(p);
  const refused = target.kind === 'root' || patched.refused.length > 0;
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
  const href = write.href(walk, target);
  return xmlResponse(
    207,
    `<D:multistatus xmlns:D="DAV:"><D:response><D:href>${escapeXml(href)}</D:href>${propstats}</D:response></D:multistatus>`,
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
  heldEtag?: string;
}) => Promise<{ created: boolean; item: DavItem }>;

/**
 * Unix seconds as the Nextcloud clients send a modified time (X-OC-Mtime, a PROPPATCH of DAV:lastmodified), in
 * milliseconds; null when it is no time. The epoch and times before it count (rclone sends a file's Unix seconds as
 * they are): left out, such a file got the upload time and was sent again at every sync.
 */
function unixMsOf(text: string | null | undefined): number | null {
  const seconds = text?.trim();
  // Math.round(-0.4) is -0, stored as 0.
  return seconds && /^-?\d{1,12}(\.\d+)?$/.test(seconds) ? Math.round(Number(seconds) * 1000) + 0 : null;
}

/** X-OC-Mtime in milliseconds; null without one or when it is no time. */
function modifiedMsOf(request: Request): number | null {
  return unixMsOf(request.headers.get('x-oc-mtime'));
}

/** The answer to a write of a file's content: 201 or 204, with what the Nextcloud clients read rather than PROPFIND again. */
function written(created: boolean, item: DavItem, modifiedMs: number | null, instanceId: string): Response {
  const headers: Record<string, string> = { ETag: item.etag, 'OC-ETag': item.etag, 'OC-FileId': ocIdOf(item.seq, instanceId) };
  if (modifiedMs !== null) headers['X-OC-MTime'] = 'accepted';
  return new Response(null, { status: created ? 201 : 204, headers });
}

/** PUT: one visit to the service (walk, preconditions, locks, the write); what the protocol refuses is handed down to be refused in the order it always was. */
async function put(dav: DavService, request: Request, instanceId: string): Promise<Response> {
  const meta = requestMeta(request);
  const caller = meta.principal!;
  const { prefix, path } = addressOf(caller, meta.path);
  const modifiedMs = modifiedMsOf(request);
  let sha1: string | undefined;
  let malformed: AppError | null = null;
  try {
    sha1 = sha1Of(request);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    malformed = err;
  }
  const declared = Number(request.headers.get('content-length'));
  const { created, item } = await dav.putAt(caller, path, {
    conditions: conditionsOf(request, caller),
    href: hrefFor(prefix, meta.path),
    refused: request.headers.has('content-range') ? badRequest('PUT with Content-Range is not supported; send the whole file') : null,
    malformed,
    modifiedMs,
    sha1,
    signal: request.signal,
    body: readBody(request),
    contentType: request.headers.get('content-type') ?? '',
    sizeHint: Number.isFinite(declared) ? declared : undefined,
  });
  return written(created, item, modifiedMs, instanceId);
}

/** The request's own resource's href, as the walk found it: a folder's (or, when nothing is there, a path ending in /) with its slash. */
function hrefFor(prefix: string, urlPath: string): DavHref {
  return (place, target) =>
    hrefIn(
      { ...place, prefix },
      place.path,
      target?.kind === 'root' || target?.item.type === 'folder' || (!target && urlPath.endsWith('/')),
    );
}

/** The precondition headers as the service evaluates them; an If header that does not parse is refused where it is evaluated. */
function conditionsOf(request: Request, principal: Principal): DavConditions {
  const conditions: DavConditions = {
    ifMatch: request.headers.get('if-match'),
    ifUnmodifiedSince: request.headers.get('if-unmodified-since'),
    ifNoneMatch: request.headers.get('if-none-match'),
    lists: [],
    malformed: null,
  };
  const header = pathHeader(request, 'if');
  if (!header) return conditions;
  let lists: IfList[];
  try {
    lists = parseIf(header);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { ...conditions, malformed: err };
  }
  conditions.lists = lists.map((list) => ({
    tagged: list.tag !== null,
    path: list.tag === null ? null : tagPathOf(list.tag, principal),
    conditions: list.conditions,
  }));
  return conditions;
}

/** The path an If header's tag names on this server, null when it names none (the list then fails). */
function tagPathOf(tag: string, principal: Principal): DavPath | null {
  try {
    const tagUrlPath = new URL(tag, 'http://x').pathname;
    return pathOfUrlPath(doorOf(tagUrlPath, principal), tagUrlPath);
  } catch {
    return null;
  }
}

/** Where a chunked upload's final MOVE writes: the Destination's tree, resource and what is there, and the lock tokens its request proved. */
export interface DavDestination {
  principal: Principal;
  target: DavTarget | null;
  res: Resource;
  tokens: ReadonlySet<string>;
  /** The ETag the preconditions hold the write to (see DavService.heldEtag). */
  heldEtag?: string;
}

/**
 * The final MOVE's Destination (any WebDAV door, "Shared with me" included), checked as a PUT there is
 * before anything is assembled: the viewer's 403, If-Match and the If header (412), and locks (423).
 */
export function davDestination(dav: DavService, request: Request): DavDestination {
  const caller = requestMeta(request).principal!;
  const url = destinationUrl(request, 'MOVE needs a Destination header');
  const place = walkTo(dav, caller, url.pathname, { write: 'content', creates: true });
  if (place.kind === 'list') throw sharedListReadOnly();
  const { target } = place;
  if (!target) assertNotSharedListName(place);
  const res: Resource = { path: place.path, href: hrefIn(place, place.path, false), item: target?.kind === 'item' ? target.item : null };
  const conditions = conditionsOf(request, caller);
  const tokens = dav.preconditions(caller, place, conditions);
  dav.assertUnlocked(place.principal, res.path, { tokens }, res.href);
  return { principal: place.principal, target, res, tokens, heldEtag: dav.heldEtag(target, conditions) };
}

/** Writes a chunked upload at its Destination, as a PUT there would (X-OC-Mtime, OC-Checksum, the answer's headers). */
export async function putAtDestination(request: Request, dest: DavDestination, from: PutFrom, instanceId: string): Promise<Response> {
  if (request.headers.has('content-range')) throw badRequest('PUT with Content-Range is not supported; send the whole file');
  const modifiedMs = modifiedMsOf(request);
  const { created, item } = await from({
    modifiedMs,
    sha1: sha1Of(request),
    signal: request.signal,
    lock: { tokens: dest.tokens, href: dest.res.href },
    heldEtag: dest.heldEtag,
  });
  return written(created, item, modifiedMs, instanceId);
}

/**
 * The principal a Destination's writes act as: the owner of the share it points into when the caller
 * may write there (whose quota a file there takes), else the caller.
 */
export function destinationPrincipal(dav: DavService, request: Request): Principal {
  const destination = pathHeader(request, 'destination');
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
      const href = typeof err.extra.href === 'string' ? err.extra.href : undefined;
      return davError(err.status, String(err.extra.davCondition), err.message, href);
    }
    throw err;
  }
}

/** COPY and MOVE: the Destination read here (its 4xx refused where it always was, after the source's walk); one visit to the service. */
async function transfer(dav: DavService, request: Request, method: 'COPY' | 'MOVE'): Promise<Response> {
  const caller = requestMeta(request).principal!;
  const dest = await deferred(() => {
    const urlPath = destinationUrl(request, `${method} needs a Destination header`).pathname;
    return { ...addressOf(caller, urlPath), urlPath };
  });
  const overwrite = (request.headers.get('overwrite') ?? 'T').trim().toUpperCase();
  const depth = (request.headers.get('depth') ?? 'infinity').trim().toLowerCase();
  const { path, write } = writeOf(request, () => {
    if (overwrite !== 'T' && overwrite !== 'F') return badRequest('Overwrite must be T or F');
    if (method === 'MOVE' ? depth !== 'infinity' : depth !== '0' && depth !== 'infinity')
      return badRequest(method === 'MOVE' ? 'MOVE takes Depth: infinity' : 'COPY takes Depth 0 or infinity');
    return null;
  });
  // The Destination's hrefs (a 423 there) are under its own door, which may not be the request's.
  const here = addressOf(caller, requestMeta(request).path).prefix;
  const prefix = dest.value?.prefix ?? here;
  // Byte for byte the request's own URL (its segments decoded, not normalized): RFC 4918's "same resource" refusal applies only then.
  const sameUrl =
    dest.value?.prefix === here &&
    segmentsAfter(here, dest.value.urlPath).join('/') === segmentsAfter(here, requestMeta(request).path).join('/');
  const { created } = await dav.transferAt(
    caller,
    method === 'COPY' ? 'copy' : 'move',
    path,
    { ...write, dest: dest.error ?? dest.value.path, hrefAt: (place, at, folder) => hrefIn({ ...place, prefix }, at, folder) },
    { overwrite: overwrite === 'T', shallow: depth === '0', sameUrl },
  );
  return new Response(null, { status: created ? 201 : 204 });
}

/** LOCK: the body and headers read first, refused (400) where they always were, after the walk; one visit to the service. */
async function lock(dav: DavService, request: Request): Promise<Response> {
  const read = await deferred(async () => {
    const body = await xmlBody(request);
    const timeout = DavLockService.timeoutOf(request.headers.get('timeout'));
    if (!body) return { refresh: timeout } as const;
    if (body.ns !== DAV || body.name !== 'lockinfo') throw badRequest('A LOCK body must be a DAV:lockinfo element');
    const scopeEl = childElements(body, DAV, 'lockscope')[0];
    const scope = scopeEl ? childElements(scopeEl, DAV)[0]?.name : undefined;
    if (scope !== 'exclusive' && scope !== 'shared') throw badRequest('lockscope must be exclusive or shared');
    const typeEl = childElements(body, DAV, 'locktype')[0];
    if (!typeEl || childElements(typeEl, DAV)[0]?.name !== 'write') throw badRequest('locktype must be write');
    const owner = childElements(body, DAV, 'owner')[0];
    const depth = (request.headers.get('depth') ?? 'infinity').trim().toLowerCase();
    if (depth !== '0' && depth !== 'infinity') throw badRequest('LOCK takes Depth 0 or infinity');
    return {
      depth: depth === '0' ? ('0' as const) : ('infinity' as const),
      scope: scope as 'exclusive' | 'shared',
      ownerXml: owner ? serializeNodes(owner.children) : '',
      ownerLang: (owner && langIn(owner, langIn(body, ''))) || null,
      timeoutSeconds: timeout ?? DavLockService.defaultSeconds,
    };
  });
  const { path, write } = writeOf(request, () => read.error);
  const { lock: made, created } = await dav.lockAt(requestMeta(request).principal!, path, write, read.value ?? { refresh: null });
  // A refresh: the If header names the lock.
  if (!made) return davError(412, 'lock-token-submitted', 'A lock refresh names the lock in the If header');
  if (read.value && 'refresh' in read.value)
    return xmlResponse(200, `<D:prop xmlns:D="DAV:"><D:lockdiscovery>${lockXml(made)}</D:lockdiscovery></D:prop>`);
  return xmlResponse(created ? 201 : 200, `<D:prop xmlns:D="DAV:"><D:lockdiscovery>${lockXml(made)}</D:lockdiscovery></D:prop>`, {
    'Lock-Token': `<${made.token}>`,
  });
}
