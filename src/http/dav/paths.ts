import { AppError, badRequest, Messages, notFound } from '../../errors.ts';
import {
  type DavItem,
  type DavPath,
  davPath,
  type DavPlace,
  type DavService,
  type DavWalk,
  SHARED_WITH_ME,
} from '../../services/dav/dav.ts';
import { type Principal } from '../../services/identity/principal.ts';
import { requestMeta } from '../request-meta.ts';
import { strictUtf8 } from '../../lib/utf8.ts';

/** The Nextcloud clients' doors: the login's id (cloud/user's `id`) follows FILES_DOOR. */
const WEBDAV_DOOR = '/remote.php/webdav';
const FILES_DOOR = '/remote.php/dav/files/';
/** A resource as the protocol sees it: its path, href and row (null: the account's root). */
export interface Resource {
  path: DavPath;
  href: string;
  item: DavItem | null;
}

const RESERVED = /[!'()*]/;
/** A path segment percent-encoded, RFC 3986's reserved !'()* too; the replace only where one is (a PROPFIND encodes every row's name). */
export function encodeSegment(s: string): string {
  const encoded = encodeURIComponent(s);
  return RESERVED.test(encoded) ? encoded.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`) : encoded;
}

export function hrefOf(prefix: string, path: DavPath, folder: boolean): string {
  const base = prefix + path.segments.map((s) => `/${encodeSegment(s)}`).join('');
  return folder ? `${base}/` : base;
}

/** Where a request path points (the service's walk) and the door it came in by (hrefs are written under it). */
export type Place = DavPlace & { prefix: string };
export type Walked = DavWalk & { prefix: string };

export const SHARED_KEY = davPath([SHARED_WITH_ME]).key;

/** The request's walk into the tree: the door and path are read here, the rest is the service's (one visit). */
export function walkTo(dav: DavService, caller: Principal, urlPath: string, opts: Parameters<DavService['walk']>[2] = {}): Walked {
  const { prefix, path } = addressOf(caller, urlPath);
  return { ...dav.walk(caller, path, opts), prefix };
}

/** The door a request path enters by and the path below it. */
export function addressOf(caller: Principal, urlPath: string): { prefix: string; path: DavPath } {
  const prefix = doorOf(urlPath, caller);
  return { prefix, path: pathOfUrlPath(prefix, urlPath) };
}

/** The href of a path of `place`'s tree: inside a share, under its mount (SHARED_WITH_ME/<name>, or a team folder's name) rather than the owner's path. */
export function hrefIn(place: Place, path: DavPath, folder: boolean): string {
  if (place.kind !== 'mount') return hrefOf(place.prefix, path, folder);
  const rest = path.segments.slice(place.mount.ownerSegments.length);
  return hrefOf(place.prefix, davPath([...place.mount.prefix, ...rest]), folder);
}

const under = (urlPath: string, prefix: string) => urlPath === prefix || urlPath.startsWith(`${prefix}/`);

/**
 * The prefix a WebDAV path enters by (hrefs are written under it): /dav, or the Nextcloud clients'
 * /remote.php/webdav and /remote.php/dav/files/<login id>, where another login's id is 404.
 */
export function doorOf(urlPath: string, principal: Principal): string {
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
export function pathOfUrlPath(prefix: string, urlPath: string): DavPath {
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
  return davPath(segments, prefix !== '/dav');
}

/**
 * A header naming paths (Destination, If), with the UTF-8 a client sent unencoded read as UTF-8: header bytes arrive as
 * Latin-1, so `café` became `cafÃ©` (the request's own path is read as UTF-8). Bytes that are not UTF-8 stay Latin-1.
 */
export function pathHeader(request: Request, name: 'destination' | 'if'): string | null {
  const value = request.headers.get(name);
  if (value === null || !/[\x80-\xff]/.test(value) || /[^\x00-\xff]/.test(value)) return value;
  return strictUtf8(Buffer.from(value, 'latin1')) ?? value;
}

/** The Destination header as a URL on this server; 400 without one (saying `missing`), when it is no URL or has a query or fragment, 502 on another host. */
export function destinationUrl(request: Request, missing: string): URL {
  const destination = pathHeader(request, 'destination');
  if (!destination) throw badRequest(missing);
  let url: URL;
  try {
    url = new URL(destination, requestMeta(request).origin);
  } catch {
    throw badRequest('The Destination header is not a URL');
  }
  if (url.host !== requestMeta(request).host) throw new AppError(502, 'The destination is on another server');
  // A name's unencoded # or ? would be cut off there: acted on without it, the request would replace another item.
  if (url.hash || url.search || destination.includes('#') || destination.includes('?'))
    throw badRequest('The Destination header must not contain a query (?) or a fragment (#); a # in a name is sent as %23');
  return url;
}
