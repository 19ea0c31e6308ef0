import type { AppContext } from '../../context.ts';
import { AppError, forbidden, Messages, notFound } from '../../errors.ts';
import { isoString, utcString } from '../../lib/dates.ts';
import { escapeXml } from '../../lib/xml.ts';
import type { Principal } from '../../services/identity/principal.ts';
import type { DavVersion, DavVersions } from '../../services/dav/versions.ts';
import { readText } from '../body.ts';
import { segmentsAfter } from './paths.ts';
import { DAV, OC, type PropName, type PropRequest, propRequestOf, xmlBody } from './xml.ts';
import { collectionValue, multistatus, responseXml } from './multistatus.ts';
import { doorOptions, methodNotServed, requireRestoreDestination, shallowDepth } from './restore.ts';
import { fileResponse } from '../download-responses.ts';
import { requestMeta } from '../request-meta.ts';
import { route, routes } from '../route.ts';

const DOOR = '/remote.php/dav/versions/';
const METHODS = 'OPTIONS, PROPFIND, GET, HEAD, MOVE';

/** What a versions path names: the login's home, `versions/`, one file's versions, one version, or `restore/`. */
type Target =
  | { kind: 'home' }
  | { kind: 'root' }
  | { kind: 'file'; fileId: number }
  | { kind: 'version'; fileId: number; name: string }
  | { kind: 'restore' };

/** The path under /remote.php/dav/versions/<login id>/; another login's id, or a path that names nothing, is 404. */
function targetOf(urlPath: string, principal: Principal): { target: Target; base: string } {
  const [user, folder, fileId, name, ...rest] = segmentsAfter(DOOR, urlPath);
  if (user !== principal.loginId || rest.length > 0) throw notFound(Messages.itemNotFound);
  const base = `${DOOR}${encodeURIComponent(user)}/`;
  if (folder === undefined) return { target: { kind: 'home' }, base };
  if (folder === 'restore' && name === undefined) return { target: { kind: 'restore' }, base };
  if (folder !== 'versions') throw notFound(Messages.itemNotFound);
  if (fileId === undefined) return { target: { kind: 'root' }, base };
  if (!/^\d{1,15}$/.test(fileId)) throw notFound(Messages.itemNotFound);
  const id = Number(fileId);
  return { target: name === undefined ? { kind: 'file', fileId: id } : { kind: 'version', fileId: id, name }, base };
}

const versionEtag = (v: DavVersion) => `"v-${v.id}"`;

/** The properties of a version the apps read (Android names a version by its getlastmodified second). */
function versionValue(v: DavVersion, fileId: number, ns: string, name: string): string | undefined {
  if (ns === DAV) {
    switch (name) {
      case 'resourcetype':
        return '';
      case 'displayname':
        return v.name;
      case 'getlastmodified':
        return utcString(v.modifiedAt);
      case 'creationdate':
        return isoString(v.modifiedAt);
      case 'getetag':
        return escapeXml(versionEtag(v));
      case 'getcontentlength':
        return String(v.size);
      case 'getcontenttype':
        return escapeXml(v.mimeType ?? 'application/octet-stream');
    }
  } else if (ns === OC) {
    switch (name) {
      case 'id':
      case 'fileid':
        return String(fileId);
      case 'size':
        return String(v.size);
    }
  }
  return undefined;
}

const VERSION_PROPS: PropName[] = [
  ...['resourcetype', 'displayname', 'getlastmodified', 'creationdate', 'getetag', 'getcontentlength', 'getcontenttype'].map((name) => ({
    ns: DAV,
    name,
  })),
  ...['fileid', 'size'].map((name) => ({ ns: OC, name })),
];

function versionXml(base: string, fileId: number, v: DavVersion, want: PropRequest): string {
  return responseXml(`${base}versions/${fileId}/${encodeURIComponent(v.name)}`, want, VERSION_PROPS, (ns, name) =>
    versionValue(v, fileId, ns, name),
  );
}

async function propfind(versions: DavVersions, principal: Principal, request: Request, target: Target, base: string) {
  const depth = shallowDepth(request, 'versions');
  const want = propRequestOf(await xmlBody(request));
  const collection = (href: string, name: string) => responseXml(href, want, VERSION_PROPS, collectionValue(name));
  switch (target.kind) {
    case 'home': {
      const self = collection(base, principal.loginId);
      if (depth === '0') return multistatus(self, null);
      return multistatus(self + collection(`${base}versions/`, 'versions') + collection(`${base}restore/`, 'restore'), null);
    }
    // As Nextcloud's, the versions root is not listed: a file's versions are reached by its fileid.
    case 'root':
      return multistatus(collection(`${base}versions/`, 'versions'), null);
    case 'restore':
      return multistatus(collection(`${base}restore/`, 'restore'), null);
    case 'file': {
      const { versions: list } = versions.list(principal, target.fileId);
      const self = collection(`${base}versions/${target.fileId}/`, String(target.fileId));
      if (depth === '0') return multistatus(self, null);
      return multistatus(self + list.map((v) => versionXml(base, target.fileId, v, want)).join(''), null);
    }
    case 'version':
      return multistatus(versionXml(base, target.fileId, versions.entry(principal, target.fileId, target.name).version, want), null);
  }
}

/**
 * The Nextcloud clients' file versions (/remote.php/dav/versions/<login id>/): PROPFIND of
 * versions/<fileid> lists a file's kept versions, GET of one downloads it, MOVE of one into restore/
 * restores it. Signed in as WebDAV is; the versions service's rules apply.
 */
export function davVersionRoutes(ctx: AppContext) {
  const { davVersions: versions, downloads } = ctx.services;
  const handle = async ({ request }: { request: Request }): Promise<Response> => {
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS') return doorOptions(METHODS);
    const meta = requestMeta(request);
    const principal = meta.principal!;
    const { target, base } = targetOf(meta.path, principal);
    switch (method) {
      case 'PROPFIND':
        return propfind(versions, principal, request, target, base);
      case 'GET':
      case 'HEAD': {
        if (target.kind !== 'version') throw new AppError(405, 'Only a version can be downloaded', undefined, { Allow: METHODS });
        const { file, version } = versions.download(principal, target.fileId, target.name);
        return fileResponse(downloads, file, request, { inline: false, reader: principal, validators: { etag: versionEtag(version) } });
      }
      case 'MOVE': {
        if (target.kind !== 'version') throw forbidden('Only a version can be moved: into restore/ to restore it');
        versions.entry(principal, target.fileId, target.name);
        requireRestoreDestination(request, base, { what: 'A version', example: 'target' });
        await readText(request);
        await versions.restore(principal, target.fileId, target.name);
        return new Response(null, { status: 201 });
      }
      default:
        return methodNotServed(method, 'versions', METHODS);
    }
  };
  return routes([
    route('GET /remote.php/dav/versions/*', { handler: handle }),
    route('ALL /remote.php/dav/versions/*', { handler: handle }),
  ]);
}
