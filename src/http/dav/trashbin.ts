import type { AppContext } from '../../context.ts';
import { forbidden, Messages, notFound } from '../../errors.ts';
import { utcString } from '../../lib/dates.ts';
import { escapeXml } from '../../lib/xml.ts';
import type { Principal } from '../../services/identity/principal.ts';
import type { DavTrashbin, TrashbinEntry } from '../../services/dav/trashbin.ts';
import { segmentsAfter } from './paths.ts';
import { DAV, NC, OC, ocIdOf, type PropName, propRequestOf, xmlBody } from './xml.ts';
import { collectionValue, multistatus, responseXml } from './multistatus.ts';
import { doorOptions, methodNotServed, requireRestoreDestination, shallowDepth } from './restore.ts';
import { readText } from '../body.ts';
import { requestMeta } from '../request-meta.ts';
import { route, routes } from '../route.ts';

const DOOR = '/remote.php/dav/trashbin/';
const METHODS = 'OPTIONS, PROPFIND, MOVE, DELETE';

/** What a trashbin path names: the login's trashbin, its `trash` or `restore` folder, or one trash entry. */
type Target = { kind: 'home' } | { kind: 'trash' } | { kind: 'restore' } | { kind: 'entry'; name: string };

/** The path under /remote.php/dav/trashbin/<login id>/; another login's id, or a deeper path, is 404. */
function targetOf(urlPath: string, principal: Principal): { target: Target; base: string } {
  const [user, folder, entry, ...rest] = segmentsAfter(DOOR, urlPath);
  if (user !== principal.loginId || rest.length > 0) throw notFound(Messages.itemNotFound);
  const base = `${DOOR}${encodeURIComponent(user)}/`;
  if (folder === undefined) return { target: { kind: 'home' }, base };
  if (folder === 'restore' && entry === undefined) return { target: { kind: 'restore' }, base };
  if (folder !== 'trash') throw notFound(Messages.itemNotFound);
  return { target: entry === undefined ? { kind: 'trash' } : { kind: 'entry', name: entry }, base };
}

/** The properties of a trash entry the clients read, by namespace and name. */
function entryValue(entry: TrashbinEntry, instanceId: string, ns: string, name: string): string | undefined {
  const { item } = entry;
  const folder = item.type === 'folder';
  if (ns === DAV) {
    switch (name) {
      case 'resourcetype':
        return folder ? '<D:collection/>' : '';
      case 'displayname':
        return escapeXml(item.name);
      case 'getlastmodified':
        return utcString(item.modifiedAt);
      case 'getetag':
        return escapeXml(item.etag);
      case 'getcontentlength':
        return folder ? undefined : String(item.size);
      case 'getcontenttype':
        return folder ? undefined : escapeXml(item.mimeType ?? 'application/octet-stream');
    }
  } else if (ns === OC) {
    switch (name) {
      case 'fileid':
        return String(item.seq);
      case 'id':
        return escapeXml(ocIdOf(item.seq, instanceId));
      case 'size':
        return String(entry.size);
    }
  } else if (ns === NC) {
    switch (name) {
      case 'trashbin-filename':
        return escapeXml(item.name);
      case 'trashbin-original-location':
        return escapeXml(entry.originalLocation);
      case 'trashbin-deletion-time':
        return String(entry.deletedAt);
      case 'has-preview':
        return 'false';
    }
  }
  return undefined;
}

const ENTRY_PROPS: PropName[] = [
  ...['resourcetype', 'displayname', 'getlastmodified', 'getetag', 'getcontentlength', 'getcontenttype'].map((name) => ({ ns: DAV, name })),
  ...['fileid', 'id', 'size'].map((name) => ({ ns: OC, name })),
  ...['trashbin-filename', 'trashbin-original-location', 'trashbin-deletion-time'].map((name) => ({ ns: NC, name })),
];

async function propfind(trashbin: DavTrashbin, principal: Principal, request: Request, target: Target, base: string, instanceId: string) {
  const depth = shallowDepth(request, 'the trash');
  const want = propRequestOf(await xmlBody(request));
  const entryXml = (e: TrashbinEntry) =>
    responseXml(`${base}trash/${encodeURIComponent(e.entryName)}${e.item.type === 'folder' ? '/' : ''}`, want, ENTRY_PROPS, (ns, name) =>
      entryValue(e, instanceId, ns, name),
    );
  switch (target.kind) {
    case 'home': {
      const self = responseXml(base, want, ENTRY_PROPS, collectionValue(principal.loginId));
      if (depth === '0') return multistatus(self, null);
      const children = ['trash', 'restore'].map((n) => responseXml(`${base}${n}/`, want, ENTRY_PROPS, collectionValue(n))).join('');
      return multistatus(self + children, null);
    }
    case 'restore':
      return multistatus(responseXml(`${base}restore/`, want, ENTRY_PROPS, collectionValue('restore')), null);
    case 'trash': {
      const self = responseXml(`${base}trash/`, want, ENTRY_PROPS, collectionValue('trash'));
      if (depth === '0') return multistatus(self, null);
      async function* pages() {
        for await (const page of trashbin.entries(principal)) yield page.map(entryXml);
      }
      return multistatus(self, pages());
    }
    case 'entry':
      return multistatus(entryXml(trashbin.entry(principal, target.name)), null);
  }
}

/**
 * The Nextcloud clients' trashbin (/remote.php/dav/trashbin/<login id>/): PROPFIND lists the trash with
 * where each entry was and when it was deleted, MOVE of an entry into `restore/` restores it, DELETE of
 * an entry deletes it for good (of `trash/` itself, empties the trash). Signed in as WebDAV is.
 */
export function davTrashbinRoutes(ctx: AppContext) {
  const trashbin = ctx.services.davTrashbin;
  const handle = async ({ request }: { request: Request }): Promise<Response> => {
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS') return doorOptions(METHODS);
    const meta = requestMeta(request);
    const principal = meta.principal!;
    // A member acting inside a share has no trash of its own there: the trashbin is the login's account's.
    const { target, base } = targetOf(meta.path, principal);
    switch (method) {
      case 'PROPFIND':
        return propfind(trashbin, principal, request, target, base, ctx.instanceId);
      case 'MOVE': {
        if (target.kind !== 'entry') throw forbidden('Only a trash entry can be moved: into restore/ to restore it');
        const entry = trashbin.entry(principal, target.name);
        requireRestoreDestination(request, base, { what: 'A trash entry', example: '<name>' });
        await readText(request);
        await trashbin.restore(principal, entry);
        return new Response(null, { status: 201 });
      }
      case 'DELETE': {
        if (target.kind === 'entry') await trashbin.purge(principal, trashbin.entry(principal, target.name));
        else if (target.kind === 'trash') await trashbin.empty(principal);
        else throw forbidden('Delete a trash entry, or trash/ to empty the trash');
        return new Response(null, { status: 204 });
      }
      default:
        return methodNotServed(method, 'the trashbin', METHODS);
    }
  };
  return routes([
    route('GET /remote.php/dav/trashbin/*', { handler: handle }),
    route('ALL /remote.php/dav/trashbin/*', { handler: handle }),
  ]);
}
