import type { AppContext } from '../../context.ts';
import { AppError, badRequest, forbidden, notFound } from '../../errors.ts';
import { utcString } from '../../lib/dates.ts';
import { escapeXml } from '../../lib/xml.ts';
import { ASSEMBLED, type ChunkedUploadService, type ChunkedUploadView } from '../../services/dav/chunked-uploads.ts';
import type { DavService } from '../../services/dav/dav.ts';
import { readBody, readText } from '../body.ts';
import { davDestination, davErrors, destinationPrincipal, putAtDestination } from './dav.ts';
import { segmentsAfter } from './paths.ts';
import { requestMeta } from '../request-meta.ts';
import { route, routes } from '../route.ts';

const UPLOADS_DOOR = '/remote.php/dav/uploads/';
const XML_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n';

/** OC-Total-Length as a byte count; null without one, 400 when it is not one. */
function totalLengthOf(request: Request): number | null {
  const header = request.headers.get('oc-total-length');
  if (header === null) return null;
  const n = Number(header.trim());
  if (!/^\d{1,16}$/.test(header.trim()) || !Number.isSafeInteger(n)) throw badRequest('OC-Total-Length is a number of bytes');
  return n;
}

function folderXml(href: string, modifiedAt: number): string {
  return (
    `<d:response><d:href>${escapeXml(href)}</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype>` +
    `<d:getlastmodified>${utcString(modifiedAt)}</d:getlastmodified></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`
  );
}

function chunkXml(href: string, chunk: ChunkedUploadView['chunks'][number]): string {
  return (
    `<d:response><d:href>${escapeXml(href)}</d:href><d:propstat><d:prop><d:resourcetype/>` +
    `<d:getcontentlength>${chunk.size}</d:getcontentlength><d:getetag>${escapeXml(chunk.etag)}</d:getetag>` +
    `<d:getlastmodified>${utcString(chunk.createdAt)}</d:getlastmodified></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`
  );
}

function multistatus(responses: string[]): Response {
  return new Response(`${XML_HEAD}<d:multistatus xmlns:d="DAV:">${responses.join('')}</d:multistatus>`, {
    status: 207,
    headers: { 'Content-Type': 'application/xml; charset=utf-8' },
  });
}

const notAllowed = (method: string, where: string) => new AppError(405, `${method} is not served on ${where} of a chunked upload`);

/**
 * The Nextcloud clients' chunked upload (`/remote.php/dav/uploads/<login id>/<folder>/<chunk>`): MKCOL
 * of the folder, PUT of each chunk, MOVE of `<folder>/.file` to the file's WebDAV address, DELETE of
 * the folder to abandon it, PROPFIND to see which chunks arrived. Another login's id is 404.
 */
async function serveUploads(chunked: ChunkedUploadService, dav: DavService, request: Request, instanceId: string): Promise<Response> {
  const meta = requestMeta(request);
  const method = request.method.toUpperCase();
  // The WebDAV guard lets an OPTIONS without credentials through, as clients probe before signing in.
  if (method === 'OPTIONS')
    return new Response(null, { headers: { DAV: '1, 2', Allow: 'OPTIONS, PROPFIND, MKCOL, PUT, MOVE, DELETE', 'Content-Length': '0' } });
  const principal = meta.principal!;
  const [user, transfer, chunk, ...rest] = segmentsAfter(UPLOADS_DOOR, meta.path);
  if (user !== principal.loginId || rest.length > 0) throw notFound('No such upload');
  const base = `${UPLOADS_DOOR}${encodeURIComponent(user)}/`;
  if (transfer === undefined) {
    if (method !== 'PROPFIND') throw notAllowed(method, 'the uploads folder');
    return multistatus([
      folderXml(base, Date.now()),
      ...chunked.list(principal).map((u) => folderXml(`${base}${encodeURIComponent(u.transfer)}/`, u.modifiedAt)),
    ]);
  }
  if (chunk === undefined) {
    switch (method) {
      case 'MKCOL': {
        if ((await readText(request)).length > 0) throw new AppError(415, 'MKCOL takes no body');
        chunked.begin(principal, transfer, totalLengthOf(request), destinationPrincipal(dav, request));
        return new Response(null, { status: 201 });
      }
      case 'PROPFIND': {
        const view = chunked.view(principal, transfer);
        const folder = `${base}${encodeURIComponent(transfer)}/`;
        const depth = request.headers.get('depth') ?? 'infinity';
        const chunks = depth === '0' ? [] : view.chunks.map((c) => chunkXml(folder + encodeURIComponent(c.name), c));
        return multistatus([folderXml(folder, view.modifiedAt), ...chunks]);
      }
      case 'DELETE':
        await chunked.abort(principal, transfer);
        return new Response(null, { status: 204 });
      default:
        throw notAllowed(method, 'the folder');
    }
  }
  switch (method) {
    case 'PUT': {
      const { created } = await chunked.putChunk(principal, transfer, chunk, readBody(request));
      return new Response(null, { status: created ? 201 : 204 });
    }
    case 'MOVE': {
      if (chunk !== ASSEMBLED) throw forbidden(`Only ${ASSEMBLED} is moved: it is the file the chunks make`);
      const dest = davDestination(dav, request);
      const declared = totalLengthOf(request);
      return putAtDestination(
        request,
        dest,
        (input) => dav.putAssembled(principal, transfer, dest.principal, dest.res.path, { ...input, declared }),
        instanceId,
      );
    }
    case 'GET':
    case 'HEAD':
      throw forbidden('Chunks cannot be downloaded');
    default:
      throw notAllowed(method, 'a chunk');
  }
}

export function nextcloudUploadRoutes(ctx: AppContext) {
  const handle = ({ request }: { request: Request }) =>
    davErrors(() => serveUploads(ctx.services.chunkedUploads, ctx.services.dav, request, ctx.instanceId));
  return routes([route('GET /remote.php/dav/uploads/*', { handler: handle }), route('ALL /remote.php/dav/uploads/*', { handler: handle })]);
}
