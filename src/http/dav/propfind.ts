import { edenGC } from 'bun:jsc';
import { AppError, badRequest, Messages, notFound } from '../../errors.ts';
import { isoString, utcString } from '../../lib/dates.ts';
import { childElements, escapeQuotedXml, escapeXml, type XmlElement } from '../../lib/xml.ts';
import { nextTurn } from '../../lib/steps.ts';
import { locksCovering } from '../../services/dav/dav-locks.ts';
import { type DavSync, type SyncLevel, type SyncResult } from '../../services/dav/dav-sync.ts';
import {
  type DavEntry,
  type DavItem,
  type DavListingNeeds,
  type DavPath,
  davPath,
  type DavRows,
  type DavTreeView,
  SHARED_WITH_ME,
} from '../../services/dav/dav.ts';
import { can, type Principal } from '../../services/identity/principal.ts';
import { requestMeta } from '../request-meta.ts';
import { type Place, type Resource, SHARED_KEY, type Walked, addressOf, encodeSegment, hrefIn } from './paths.ts';
import {
  ALLPROP,
  ALLPROP_TAIL,
  DAV,
  LIVE,
  NC,
  OC,
  type PropName,
  type PropRequest,
  SUPPORTED_LOCK,
  SUPPORTED_REPORTS,
  XML_HEAD,
  XML_TYPE,
  davError,
  isLive,
  lockXml,
  ocIdOf,
  propKey,
  propNamesOf,
  propRequestOf,
  propXml,
  statusLine,
  textOf,
  xmlBody,
} from './xml.ts';

/** What a PROPFIND asks: its depth, its properties and so what the walk brings back with the rows. */
export interface Propfind {
  depth: '0' | '1';
  want: PropRequest;
  needs: DavListingNeeds;
}

/** The PROPFIND's Depth and body; Depth: infinity is answered (403) rather than walked. */
export async function propfindOf(request: Request): Promise<Propfind | Response> {
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
    syncTokens: want.kind !== 'prop' || named(DAV, 'sync-token'),
  };
}

export function propfind(place: Walked, view: TreeView | null, asked: Propfind, res: Resource): Response {
  if (!place.target || !view) throw notFound(Messages.itemNotFound);
  const { depth, want } = asked;
  const tree = place.view!;
  const listsShares = place.kind === 'list';
  const answer = new PropfindAnswer(view, want, listsShares);
  // A mount's root answers under its WebDAV name (numbered, or with its owner's name), as its href does.
  const self = res.item && place.kind === 'mount' && place.isRoot ? { ...res.item, name: place.mount.name } : res.item;
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
            { ...s.item, name: s.name },
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
          answer.responseXml({ ...t.item, name: t.name }, davPath([t.name]).key, `${base}${encodeSegment(t.name)}/`, dead.get(t.item.id)),
        ),
      );
    }
    for await (const batch of tree.children ?? []) yield new ChildParts(answer, batch, res.path.key, base);
    yield new ListParts(['</D:multistatus>']);
  }
  return new Response(streamText(parts()), { status: 207, headers: { 'Content-Type': XML_TYPE } });
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
/** A REPORT's body, read before the walk (what it asks for comes back with the rows); its errors wait for the walk's, in the order they had. */
export interface ReportAsked {
  want: SyncRequest | null;
  needs: DavListingNeeds;
  error: AppError | null;
}

export async function reportOf(request: Request): Promise<ReportAsked> {
  try {
    const want = syncRequestOf(await xmlBody(request));
    return { want, needs: needsOf({ kind: 'prop', names: want?.names ?? [] }, false), error: null };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { want: null, needs: needsOf({ kind: 'prop', names: [] }, false), error };
  }
}

/** REPORT: its body read before the walk; one visit to the service (walk, checks, the run), then the answer streams. */
export function report(sync: DavSync, request: Request, reported: ReportAsked, instanceId: string): Response {
  const meta = requestMeta(request);
  const { prefix, path } = addressOf(meta.principal!, meta.path);
  const depth = (request.headers.get('depth') ?? '0').trim();
  const want = reported.want;
  const { walk, answer: results } = sync.report(meta.principal!, path, {
    needs: reported.needs,
    refuse: () => {
      if (depth !== '0') return badRequest('A sync-collection REPORT takes Depth: 0 (DAV:sync-level says how deep)');
      if (reported.error) return reported.error;
      return want ? null : new AppError(403, 'The only REPORT served here is DAV:sync-collection', { davCondition: 'supported-report' });
    },
    want: () => want!,
  });
  const place: Walked = { ...walk, prefix };
  const target = walk.target!;
  const res: Resource = { path: walk.path, href: hrefIn(place, walk.path, true), item: target.kind === 'item' ? target.item : null };
  const answer = new PropfindAnswer(treeView(place, instanceId)!, { kind: 'prop', names: want!.names }, false);
  async function* parts(): AsyncGenerator<Parts> {
    yield new ListParts([`${XML_HEAD}<D:multistatus xmlns:D="DAV:">`]);
    for await (const part of results) {
      if (part.kind === 'results') {
        yield new SyncParts(answer, part.results, part.rows, place, res.path);
        continue;
      }
      const truncated = part.truncated
        ? `<D:response><D:href>${escapeXml(res.href)}</D:href><D:status>${statusLine(507)}</D:status></D:response>`
        : '';
      yield new ListParts([`${truncated}<D:sync-token>${escapeXml(part.token)}</D:sync-token></D:multistatus>`]);
    }
  }
  return new Response(streamText(parts()), { status: 207, headers: { 'Content-Type': XML_TYPE } });
}

/** What a PROPFIND says of the tree a request acts in (the walk's view), who acts, the instance (oc:id) and the sync tokens. */
type TreeView = DavTreeView & {
  principal: Principal;
  instanceId: string;
};

export function treeView(place: Walked, instanceId: string): TreeView | null {
  return place.view ? { ...place.view, principal: place.principal, instanceId } : null;
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
type Dead = Map<string, { ns: string; name: string; value: string; lang: string | null }>;
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
  /** The properties allprop's include names: answered 404 where a resource has none, as prop's are (RFC 4918 §9.1). */
  private readonly included: ReadonlySet<string>;
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
    this.included = new Set(want.kind === 'allprop' ? want.include.map((n) => propKey(n.ns, n.name)) : []);
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
        return String(!item ? (shared ? this.view.sharedSize : this.view.rootSize) : item.type === 'folder' ? item.treeSize : item.size);
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
        return item ? escapeXml(item.name) : shared ? escapeXml(SHARED_WITH_ME) : '';
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
        const stored = isLive(ns, name) ? undefined : dead.get(id);
        const value =
          ns === DAV && LIVE.has(name)
            ? this.liveValue(item, key, name, shared)
            : isLive(ns, name)
              ? this.ncValue(item, ns, name, shared)
              : stored?.value;
        if (value === undefined) {
          if (want.kind === 'prop' || this.included.has(id)) missing += propXml(ns, name);
        } else found += propXml(ns, name, value, stored?.lang);
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
/** Text is sent once this much is gathered (or the parts end). */
const STREAM_CHUNK = 64 * 1024;
/** Characters of a streamed answer past which the garbage it left is collected when it ends. */
const BIG_ANSWER = 1024 * 1024;
/** Building time after which a streamed answer lets the event loop turn: the sink asks for the next chunk at once while a fast client reads. */
const TURN_MS = 10;

/**
 * Streams groups of parts, a part (a response element) at a time, gathered into chunks of about
 * STREAM_CHUNK: a folder of any size (or a client asking for many properties) never has its answer built whole.
 * Chunks go out as text: Bun's response sink writes them as UTF-8 (the bytes TextEncoder made, lone surrogates
 * too) without the Uint8Array TextEncoder allocated for each.
 */
function streamText(groups: AsyncGenerator<Parts>): ReadableStream<string> {
  let group: Parts | null = null;
  let at = 0;
  let sent = 0;
  let turned = performance.now();
  return new ReadableStream<string>({
    async pull(controller) {
      if (performance.now() - turned > TURN_MS) {
        await nextTurn();
        turned = performance.now();
      }
      let chunk = '';
      while (chunk.length < STREAM_CHUNK) {
        if (!group || at === group.count) {
          const next = await groups.next();
          if (next.done) {
            if (chunk) controller.enqueue(chunk);
            controller.close();
            // A young-generation collection, at once, once a big answer is out: asked for later (Bun.gc(false) after
            // 10 ms), it ran into the next request's allocations and 7 PROPFINDs of 10,000 items peaked at 120-146 MiB, 110-115 at once.
            if (sent + chunk.length >= BIG_ANSWER) edenGC();
            return;
          }
          group = next.value;
          at = 0;
          continue;
        }
        chunk += group.part(at++);
      }
      sent += chunk.length;
      controller.enqueue(chunk);
    },
    async cancel() {
      await groups.return(undefined);
    },
  });
}
