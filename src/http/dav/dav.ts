import { Elysia } from 'elysia';
import type { AppContext } from '../../context.ts';
import { AppError, badRequest, forbidden, Messages, notFound, StorageLimitError } from '../../errors.ts';
import { childElements, escapeXml, serializeNodes } from '../../lib/xml.ts';
import { DavLockService } from '../../services/dav/dav-locks.ts';
import { type DavSync } from '../../services/dav/dav-sync.ts';
import { type DavItem, type DavPath, type DavService, type DavTarget, type PropPatch, SHARED_WITH_ME } from '../../services/dav/dav.ts';
import { type Principal } from '../../services/identity/principal.ts';
import { readBody, readText } from '../body.ts';
import { fileResponse } from '../download-responses.ts';
import { davAuthenticate } from '../guard.ts';
import type { Limits } from '../limits.ts';
import { requestMeta } from '../request-meta.ts';
import { route, routes } from '../route.ts';
import {
  type Place,
  type Resource,
  type Walked,
  destinationUrl,
  doorOf,
  encodeSegment,
  hrefIn,
  hrefOf,
  pathOfUrlPath,
  walkTo,
} from './paths.ts';
import { type Propfind, propfind, propfindOf, report, reportOf, treeView } from './propfind.ts';
import { DAV, davError, isLive, lockXml, ocIdOf, propXml, statusLine, xmlBody, xmlResponse } from './xml.ts';

const METHODS = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK, REPORT';
/** The paths WebDAV serves, every door. */
const DAV_PATH = /^\/(dav|remote\.php\/webdav)(\/|$)|^\/remote\.php\/dav\/files\//;

const WRITES = new Set(['PUT', 'MKCOL', 'DELETE', 'MOVE', 'COPY', 'PROPPATCH', 'LOCK']);

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
  const reported = method === 'REPORT' ? await reportOf(request) : null;
  const write = WRITES.has(method) ? (method === 'COPY' ? 'copy' : 'write') : undefined;
  const place = walkTo(dav, meta.principal!, meta.path, { write, listing: asked?.needs ?? reported?.needs });
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
      return report(dav, sync, request, place, reported!, res, instanceId);
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
