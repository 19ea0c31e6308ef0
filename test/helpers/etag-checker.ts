import { expect } from 'bun:test';
import { createHash } from 'node:crypto';
import type { DavClient } from './dav.ts';
import { propfindRows } from './dav.ts';

const PROPS = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>
  <d:getetag/><d:resourcetype/><oc:fileid/><oc:size/></d:prop></d:propfind>`;

/** One resource as a sync client sees it; `sha1` of a file's bytes. */
interface Seen {
  folder: boolean;
  etag: string;
  fileid: string;
  size: number;
  sha1: string | null;
}

type Snapshot = Map<string, Seen>;

const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');

/** Someone syncing: a WebDAV login and where its tree is served (`/remote.php/dav/files/<id>/`, `/dav/`...). */
export class SyncViewer {
  constructor(
    readonly name: string,
    readonly dav: DavClient,
    readonly base: string,
  ) {}

  url(rel: string): string {
    return `${this.dav.baseUrl}${this.base}${rel}`;
  }

  send(method: string, rel: string, headers: Record<string, string> = {}, body?: RequestInit['body']): Promise<Response> {
    return fetch(this.url(rel), { method, headers: { authorization: this.dav.authorization, ...headers }, body });
  }

  /** Every resource of the tree by path ('' the root, folders ending in '/'), walked with Depth 1 as the clients do, each file's bytes hashed. */
  async snapshot(): Promise<Snapshot> {
    const out: Snapshot = new Map();
    const prefix = new URL(this.url('')).pathname;
    const walk = async (rel: string) => {
      const res = await this.send('PROPFIND', encodePath(rel), { depth: '1' }, PROPS);
      expect(res.status).toBe(207);
      for (const row of propfindRows(await res.text())) {
        const path = row.href.slice(prefix.length);
        const folder = row.props.resourcetype!.includes('collection');
        const seen: Seen = { folder, etag: row.props.getetag!, fileid: row.props.fileid!, size: Number(row.props.size), sha1: null };
        if (!folder) {
          const bytes = await (await this.send('GET', encodePath(path))).arrayBuffer();
          seen.sha1 = createHash('sha1').update(new Uint8Array(bytes)).digest('hex');
        }
        out.set(path, seen);
        if (folder && path !== rel) await walk(path);
      }
    };
    await walk('');
    return out;
  }
}

/** What a folder holds, to any depth: names, fileids, files' ETags and bytes. Its ETag must move exactly when this does. */
function signature(snap: Snapshot, path: string): string {
  const lines: string[] = [];
  for (const [p, s] of snap)
    if (p !== path && p.startsWith(path) && !p.slice(path.length, -1).includes('/'))
      lines.push(`${p.slice(path.length)}|${s.fileid}|${s.folder ? signature(snap, p) : `${s.etag}|${s.sha1}`}`);
  return lines.sort().join('\n');
}

/** Bytes of the files below a folder, as the listing shows them. */
function filesBelow(snap: Snapshot, path: string): number {
  let n = 0;
  for (const [p, s] of snap) if (p !== path && p.startsWith(path) && !s.folder) n += s.size;
  return n;
}

/**
 * The invariants one operation broke in one viewer's tree: a folder's ETag moved exactly when something below it
 * changed; its oc:size is the bytes below it (the root's only where `ownRoot`: elsewhere it holds mounts); a file's
 * ETag moved when its bytes did, and not otherwise unless the operation wrote content (`content` in its name).
 */
function broken(op: string, viewer: SyncViewer, before: Snapshot, after: Snapshot, ownRoot: boolean): string[] {
  const out: string[] = [];
  const at = `${op} / ${viewer.name}`;
  for (const [path, a] of after) {
    const b = before.get(path);
    if (a.folder && (path !== '' || ownRoot) && !Number.isNaN(a.size) && a.size !== filesBelow(after, path))
      out.push(`${at}: oc:size of '${path}' is ${a.size}, the files below weigh ${filesBelow(after, path)}`);
    if (!b || b.folder !== a.folder) continue;
    if (a.folder) {
      const changed = signature(before, path) !== signature(after, path);
      if (changed && a.etag === b.etag) out.push(`${at}: '${path}' changed below but its ETag did not`);
      if (!changed && a.etag !== b.etag) out.push(`${at}: '${path}' ETag moved with nothing changed below`);
    } else if (a.sha1 !== b.sha1 && a.etag === b.etag) out.push(`${at}: file '${path}' has new bytes under its old ETag`);
  }
  const byId = new Map([...before.values()].filter((s) => !s.folder).map((s) => [s.fileid, s]));
  for (const [path, a] of after) {
    const b = byId.get(a.fileid);
    if (!a.folder && b && b.sha1 === a.sha1 && b.etag !== a.etag && !op.includes('content'))
      out.push(`${at}: file '${path}' got a new ETag with the same bytes`);
  }
  return out;
}

/**
 * A page of a sync-collection REPORT (RFC 6578) from `token` (empty: the first): its next token and how many members
 * it reported; null while the folder is not in the viewer's tree (a share ended, sharing turned off).
 */
async function syncReport(viewer: SyncViewer, rel: string, token: string): Promise<{ token: string; count: number } | null> {
  const body = `<?xml version="1.0"?><D:sync-collection xmlns:D="DAV:"><D:sync-token>${token}</D:sync-token><D:sync-level>infinite</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>`;
  const res = await viewer.send('REPORT', rel, { 'content-type': 'application/xml' }, body);
  if (res.status === 404) return null;
  expect(res.status).toBe(207);
  const xml = await res.text();
  return { token: /<D:sync-token>([^<]*)<\/D:sync-token>/.exec(xml)![1]!, count: [...xml.matchAll(/<D:response>/g)].length };
}

/** A collection whose change feed (sync-collection) is followed: `rel` as it goes on the wire. */
export interface Feed {
  viewer: SyncViewer;
  rel: string;
}

/**
 * Snapshots every viewer's tree after each operation and collects what it broke: the ETag and size invariants, the
 * same tree through each of `sameTree` (the first viewer's, at other addresses or by a sub-user), and each feed
 * reporting something whenever its folder's content changed.
 */
export class EtagChecker {
  readonly problems: string[] = [];
  readonly checked: string[] = [];
  private snaps: Snapshot[] = [];
  private readonly tokens: string[] = [];

  constructor(
    private readonly viewers: SyncViewer[],
    private readonly opts: { ownRoot: Set<SyncViewer>; sameTree: SyncViewer[]; feeds: Feed[] },
  ) {}

  async start(): Promise<void> {
    for (const f of this.opts.feeds) this.tokens.push((await syncReport(f.viewer, f.rel, ''))!.token);
    this.snaps = await Promise.all(this.viewers.map((v) => v.snapshot()));
  }

  async step(op: string, act: () => Promise<unknown>): Promise<void> {
    const rels = this.opts.feeds.map((f) => f.rel);
    await act();
    const next = await Promise.all(this.viewers.map((v) => v.snapshot()));
    this.viewers.forEach((v, i) => this.problems.push(...broken(op, v, this.snaps[i]!, next[i]!, this.opts.ownRoot.has(v))));
    const first = next[0]!;
    for (const v of this.opts.sameTree) {
      const other = next[this.viewers.indexOf(v)]!;
      const same =
        other.size === first.size && [...first].every(([p, s]) => other.get(p)?.etag === s.etag && other.get(p)?.size === s.size);
      if (!same) this.problems.push(`${op}: ${v.name} does not see the tree ${this.viewers[0]!.name} sees`);
    }
    for (const [i, f] of this.opts.feeds.entries()) {
      const at = this.viewers.indexOf(f.viewer);
      const [was, is] = [decodeURIComponent(rels[i]!), decodeURIComponent(f.rel)];
      // A folder that came back into the tree (sharing turned on again) is as its feed left it.
      const moved = this.snaps[at]!.has(was) && signature(this.snaps[at]!, was) !== signature(next[at]!, is);
      const report = await syncReport(f.viewer, f.rel, this.tokens[i]!);
      if (!report) continue;
      if (moved && report.count === 0) this.problems.push(`${op}: the change feed of ${f.viewer.name} at '${f.rel}' reports nothing`);
      this.tokens[i] = report.token;
    }
    this.snaps = next;
    this.checked.push(op);
  }
}
