import { createHmac, timingSafeEqual } from 'node:crypto';
import { type Item, type ItemsRepo, nameKeyOf } from '../../db/repos/items.ts';
import type { Principal } from '../identity/principal.ts';
import type { ChangeRow } from '../../db/repos/changes.ts';
import type { ChangeLog } from '../changes/change-log.ts';
import { AppError, Messages, notFound } from '../../errors.ts';
import {
  type DavEntry,
  type DavItem,
  type DavListingNeeds,
  type DavPath,
  type DavRows,
  type DavService,
  type DavWalk,
  davItem,
  rightsTag,
  SHARED_WITH_ME,
} from './dav.ts';

/** How deep a sync-collection reports: the collection's children, or everything below it. */
export type SyncLevel = '1' | 'infinite';

/** One answer of a sync-collection: a member as it is now, or a member gone (`segments` from the collection down). */
export type SyncResult =
  | { kind: 'member'; item: DavEntry | DavItem; segments: string[] }
  | { kind: 'removed'; segments: string[]; folder: boolean };

/** A sync token that is garbled, forged, of another collection or account, or older than the change log keeps. */
class SyncTokenError extends Error {}

/** A position in a listing: the ids and name keys from the listed folder down to the last member sent. */
type Cursor = Array<[id: string, nameKey: string]>;

/**
 * What a token says: every change up to `s` was reported, except (with `f`) the listing of folder `f`'s
 * members after `p`, which goes on first (the first sync's listing of the collection, or a folder that
 * came into it whole).
 */
interface TokenState {
  s: number;
  f?: string;
  p?: Cursor;
}

const PREFIX = 'urn:coffer:sync:';
const MAC_BYTES = 16;
/** Responses one report sends at most (RFC 6578 §3.6 lets a server truncate); the token continues. */
const SYNC_MAX_RESULTS = 20_000;
/** Change log rows one report reads at most. */
const SCAN_MAX_ROWS = 20_000;
const SCAN_PAGE = 1000;
const MAX_DEPTH = 10_000;
const MAX_TOKEN_CHARS = 64 * 1024;
/** Results whose rows (dead properties, previews, SHA1s) are read together while a report streams. */
const ROWS_BATCH = 50;

/** What a sync-collection REPORT answers, a batch at a time: members and removals with their rows, then whether it stopped short and the next token. */
export type SyncAnswer =
  | { kind: 'results'; results: SyncResult[]; rows: DavRows<DavEntry | DavItem> }
  | { kind: 'end'; truncated: boolean; token: string };

const unsupported = (message: string) => new AppError(403, message, { davCondition: 'supported-report' });

const sameSegments = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((s, i) => s === b[i]);

/** A token for `state`, bound to the reader, the account and the collection: a computation, no visit to the store. */
function signToken(key: Uint8Array, principal: Principal, collectionId: string | null, state: TokenState): string {
  const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
  return `${PREFIX}${payload}.${macOf(key, principal, collectionId, payload)}`;
}

function macOf(key: Uint8Array, principal: Principal, collectionId: string | null, payload: string): string {
  const reader = principal.share?.memberAccountId ?? principal.accountId;
  return createHmac('sha256', key)
    .update(`${reader}\n${principal.accountId}\n${collectionId ?? ''}\n${payload}`)
    .digest()
    .subarray(0, MAC_BYTES)
    .toString('base64url');
}

/** What the first change after a token's seq says of an item then. */
interface Then {
  firstSeq: number;
  row: ChangeRow;
  /** null: it did not exist then (or lay elsewhere: created, uploaded, copied, dropped). */
  parentId: string | null | undefined;
  name: string | null;
}

/** One sync-collection report: built by DavSync.start, its results read once, then its next token. */
export class SyncRun {
  truncated = false;
  private next: TokenState;
  private sent = 0;
  private readonly emitted = new Set<string>();

  constructor(
    private readonly sync: DavSync,
    private readonly principal: Principal,
    private readonly collectionId: string | null,
    private readonly level: SyncLevel,
    private readonly state: TokenState,
    private readonly limit: number,
  ) {
    this.next = { s: state.s };
  }

  /** The token of the state the results reached (read after them). */
  get token(): string {
    return this.sync.sign(this.principal, this.collectionId, this.next);
  }

  private room(n: number): boolean {
    return this.sent + n <= this.limit || this.sent === 0;
  }

  async *results(): AsyncGenerator<SyncResult> {
    const { state } = this;
    let expanded: string | null = null;
    if (state.f !== undefined) {
      expanded = state.f;
      const base = state.f === (this.collectionId ?? '') ? [] : this.sync.currentSegments(this.principal, this.collectionId, state.f);
      if (base) {
        const folderId = state.f === '' ? null : state.f;
        const infinite = this.level === 'infinite' || state.f !== (this.collectionId ?? '');
        for await (const r of this.walk(folderId, base, state.p ?? [], infinite, state.s)) yield r;
        if (this.truncated) return;
      }
    }
    this.next = { s: state.s };
    const then = new Map<string, Then>();
    const page = this.sync.changesAfter(this.principal, state.s);
    for (const row of page.rows) {
      if (then.has(row.itemId)) continue;
      const existed = row.nameBefore !== null;
      then.set(row.itemId, { firstSeq: row.seq, row, parentId: existed ? row.parentBefore : undefined, name: row.nameBefore });
    }
    const plans = [...then].map(([id, t]) => {
      const was = t.name === null ? null : this.sync.segmentsThen(this.principal, this.collectionId, id, then);
      const now = this.sync.currentItem(this.principal, this.collectionId, id);
      const moved = !!now && (!was || !sameSegments(was, now.segments));
      return { id, t, was, now, moved, gone: !!was && (!now || moved) };
    });
    // An href that now names another member (a file deleted and another put in its place) is reported once, as it is.
    const present = new Set(plans.flatMap((p) => (p.now ? [p.now.segments.join('/')] : [])));
    const withinLevel = (segs: string[] | null) => !!segs && (this.level === 'infinite' || segs.length === 1);
    for (const { id, t, was, now, moved, gone } of plans) {
      const removes = gone && withinLevel(was) && !present.has(was!.join('/'));
      const lists = !!now && withinLevel(now.segments);
      const count = (removes ? 1 : 0) + (lists ? 1 : 0);
      if (count === 0) continue;
      if (!this.room(count)) {
        this.truncate({ s: t.firstSeq - 1 });
        return;
      }
      if (removes) {
        this.sent++;
        yield { kind: 'removed', segments: was!, folder: t.row.itemType === 'folder' };
      }
      if (now && lists && !this.emitted.has(id)) {
        this.sent++;
        this.emitted.add(id);
        yield { kind: 'member', item: davItem(now.item, rightsTag(this.principal)), segments: now.segments };
        if (this.level === 'infinite' && now.item.type === 'folder' && moved && expanded !== id) {
          for await (const r of this.walk(id, now.segments, [], true, t.firstSeq - 1)) yield r;
          if (this.truncated) return;
        }
      }
    }
    this.next = { s: page.nextAfterSeq };
    if (page.more) this.truncated = true;
  }

  private truncate(state: TokenState): void {
    this.truncated = true;
    this.next = state;
  }

  /**
   * The members below a folder in name order, depth first, from `cursor` on (the path to the next member
   * to send); truncates at the limit with the path to the member it did not send.
   */
  private async *walk(folderId: string | null, base: string[], cursor: Cursor, infinite: boolean, seq: number): AsyncGenerator<SyncResult> {
    const path: Cursor = [];
    // The folders being listed, innermost last (a generator per level stepped every member through each level
    // above it, and overflowed the call stack some thousands of levels down); `entered` when on `path`.
    const levels: Array<{
      parentId: string | null;
      segments: string[];
      after: string;
      entered: boolean;
      pages: AsyncIterator<DavEntry[]> | null;
      rows: DavEntry[];
      next: number;
    }> = [];
    const open = (parentId: string | null, segments: string[], after: string, entered: boolean) =>
      levels.push({ parentId, segments, after, entered, pages: null, rows: [], next: 0 });
    /** The member to send for `c` (null when sent already, or when the limit truncated: then `truncated`); a folder's level opens. */
    const visit = (c: DavEntry | DavItem, segments: string[]): SyncResult | null => {
      path.push([c.id, c.nameKey]);
      if (!this.room(1)) {
        this.truncate({ s: seq, f: folderId ?? '', p: [...path] });
        return null;
      }
      const segs = [...segments, c.name];
      let member: SyncResult | null = null;
      if (!this.emitted.has(c.id)) {
        this.sent++;
        this.emitted.add(c.id);
        member = { kind: 'member', item: c, segments: segs };
      }
      if (c.type === 'folder' && infinite && path.length < MAX_DEPTH) open(c.id, segs, '', true);
      else path.pop();
      return member;
    };
    // The cursor: the folders down to the member not sent yet, each continued after it once that is done.
    open(folderId, base, cursor[0]?.[1] ?? '', false);
    for (let at = 0, parentId = folderId, segments = base; at < cursor.length; at++) {
      const [id] = cursor[at]!;
      const child = this.sync.liveChild(this.principal, parentId, id);
      if (child && at === cursor.length - 1) {
        const member = visit(davItem(child, rightsTag(this.principal)), segments);
        if (member) yield member;
        if (this.truncated) return;
      } else if (child?.type === 'folder' && infinite) {
        path.push([child.id, child.nameKey]);
        segments = [...segments, child.name];
        parentId = child.id;
        open(child.id, segments, cursor[at + 1]![1], true);
        continue;
      }
      break;
    }
    while (levels.length > 0) {
      const level = levels.at(-1)!;
      if (level.next === level.rows.length) {
        level.pages ??= this.sync.children(this.principal, level.parentId, level.after)[Symbol.asyncIterator]();
        const page = await level.pages.next();
        if (page.done) {
          levels.pop();
          if (level.entered) path.pop();
        } else {
          level.rows = page.value;
          level.next = 0;
        }
        continue;
      }
      const member = visit(level.rows[level.next++]!, level.segments);
      if (member) yield member;
      if (this.truncated) return;
    }
  }
}

/**
 * WebDAV sync-collection (RFC 6578) over the change log: a first sync lists a collection, later ones
 * report what changed since a token, read through the log's one visibility rule. Tokens are signed and
 * bound to the account and the collection, so one cannot be made up or used for another.
 */
export class DavSync {
  private readonly key: Uint8Array;

  constructor(
    private readonly d: { dav: DavService; items: ItemsRepo; changes: ChangeLog },
    secret: Uint8Array,
  ) {
    this.key = new Uint8Array(createHmac('sha256', secret).update('coffer webdav sync tokens').digest());
  }

  /** A listing's walk (DavService.walk) with the collections' DAV:sync-tokens when it asks for them: the change log's position read once. */
  walk(caller: Principal, path: DavPath, opts: { listing?: DavListingNeeds } = {}): DavWalk {
    const walk = this.d.dav.walk(caller, path, opts);
    if (!walk.view || walk.kind === 'list' || !opts.listing?.syncTokens) return walk;
    const state = { s: this.d.changes.latestSeq() };
    const { principal } = walk;
    return { ...walk, view: { ...walk.view, syncToken: (collectionId) => signToken(this.key, principal, collectionId, state) } };
  }

  /**
   * A sync-collection REPORT in one visit: the walk (with what the answer needs), SHARED_WITH_ME refused,
   * what the door refuses of the request, 404 where nothing is, a file refused, the token checked (403);
   * the answer then streams its results with their rows, and ends with the next token.
   */
  report(
    caller: Principal,
    path: DavPath,
    req: {
      needs: DavListingNeeds;
      refuse: () => AppError | null;
      want: () => { level: SyncLevel; token: string; limit: number | null };
    },
  ): { walk: DavWalk; answer: AsyncGenerator<SyncAnswer> } {
    const walk = this.walk(caller, path, { listing: req.needs });
    if (walk.kind === 'list') throw unsupported(`"${SHARED_WITH_ME}" has no sync-collection: sync each of its folders`);
    const refused = req.refuse();
    if (refused) throw refused;
    const { target, view } = walk;
    if (!target || !view) throw notFound(Messages.itemNotFound);
    if (target.kind === 'item' && target.item.type !== 'folder') throw unsupported('sync-collection reports on a collection, not a file');
    const { level, token, limit } = req.want();
    let run: SyncRun;
    try {
      run = this.start(walk.principal, target.kind === 'root' ? null : target.item.id, level, token, limit);
    } catch (err) {
      if (err instanceof SyncTokenError) throw new AppError(403, err.message, { davCondition: 'valid-sync-token' });
      throw err;
    }
    const dav = this.d.dav;
    const rowsOf = (results: SyncResult[]) =>
      dav.rowsOf(
        results.flatMap((r) => (r.kind === 'member' ? [r.item] : [])),
        req.needs,
      );
    async function* answer(): AsyncGenerator<SyncAnswer> {
      let results: SyncResult[] = [];
      for await (const r of run.results()) {
        results.push(r);
        if (results.length === ROWS_BATCH) {
          yield { kind: 'results', results, rows: rowsOf(results) };
          results = [];
        }
      }
      if (results.length) yield { kind: 'results', results, rows: rowsOf(results) };
      yield { kind: 'end', truncated: run.truncated, token: run.token };
    }
    return { walk, answer: answer() };
  }

  /** A report on a collection; throws SyncTokenError for a token that is not valid for it. */
  start(principal: Principal, collectionId: string | null, level: SyncLevel, token: string, limit: number | null): SyncRun {
    const state =
      token === '' ? { s: this.d.changes.latestSeq(), f: collectionId ?? '', p: [] } : this.verify(principal, collectionId, token);
    const cap = Math.min(SYNC_MAX_RESULTS, limit ?? SYNC_MAX_RESULTS);
    return new SyncRun(this, principal, collectionId, level, state, cap);
  }

  sign(principal: Principal, collectionId: string | null, state: TokenState): string {
    return signToken(this.key, principal, collectionId, state);
  }

  private verify(principal: Principal, collectionId: string | null, token: string): TokenState {
    const invalid = () => new SyncTokenError('The sync token is not one this collection handed out; sync again without a token');
    if (token.length > MAX_TOKEN_CHARS || !token.startsWith(PREFIX)) throw invalid();
    const [payload, mac, extra] = token.slice(PREFIX.length).split('.');
    if (!payload || !mac || extra !== undefined) throw invalid();
    const expected = Buffer.from(macOf(this.key, principal, collectionId, payload));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    const state = JSON.parse(Buffer.from(payload, 'base64url').toString()) as TokenState;
    if (!Number.isSafeInteger(state.s) || state.s < 0) throw invalid();
    const check = this.d.changes.resumeCheck(state.s);
    if (check === 'unknown') throw invalid();
    if (check === 'thinned')
      throw new SyncTokenError('The sync token is older than the changes the server keeps; sync again without a token');
    return state;
  }

  /** The changes `principal` may see after `seq` in its tree, reading at most SCAN_MAX_ROWS rows' worth of pages. */
  changesAfter(principal: Principal, seq: number): { rows: ChangeRow[]; nextAfterSeq: number; more: boolean } {
    const latest = this.d.changes.latestSeq();
    const rows: ChangeRow[] = [];
    let after = seq;
    for (let read = 0; after < latest; read += SCAN_PAGE) {
      if (read >= SCAN_MAX_ROWS) return { rows, nextAfterSeq: after, more: true };
      const page = this.d.changes.changesFor(principal, { afterSeq: after, limit: SCAN_PAGE });
      for (const row of page.rows) if (row.accountId === principal.accountId) rows.push(row);
      if (page.nextAfterSeq === after) break;
      after = page.nextAfterSeq;
    }
    return { rows, nextAfterSeq: Math.max(after, latest), more: false };
  }

  children(principal: Principal, folderId: string | null, after: string): AsyncGenerator<DavEntry[]> {
    return this.d.dav.children(principal, folderId, after);
  }

  liveChild(principal: Principal, parentId: string | null, id: string): Item | null {
    const row = this.d.items.getLive(principal.accountId, id);
    return row && row.parentId === parentId ? this.named(principal, row) : null;
  }

  /** The row under its WebDAV name (DavService.davName). */
  private named(principal: Principal, row: Item): Item {
    const name = this.d.dav.davName(principal, row.parentId, row.name);
    return name === row.name ? row : { ...row, name, nameKey: nameKeyOf(name) };
  }

  /** A live item's names from the collection down to it; null when it is not below the collection (or not live). */
  currentSegments(principal: Principal, collectionId: string | null, id: string): string[] | null {
    return this.currentItem(principal, collectionId, id)?.segments ?? null;
  }

  currentItem(principal: Principal, collectionId: string | null, id: string): { item: Item; segments: string[] } | null {
    const live = this.d.items.getLive(principal.accountId, id);
    if (!live || live.id === collectionId) return null;
    const item = this.named(principal, live);
    const segments = [item.name];
    let parent = item.parentId;
    for (let depth = 0; parent !== collectionId; depth++) {
      if (parent === null || depth > MAX_DEPTH) return null;
      const row = this.d.items.getLive(principal.accountId, parent);
      if (!row) return null;
      segments.unshift(this.d.dav.davName(principal, row.parentId, row.name));
      parent = row.parentId;
    }
    return { item, segments };
  }

  /** An item's names from the collection down to it as they were at the token's seq; null when it was not below the collection. */
  segmentsThen(principal: Principal, collectionId: string | null, id: string, then: ReadonlyMap<string, Then>): string[] | null {
    const segments: string[] = [];
    let at: string | null = id;
    for (let depth = 0; at !== collectionId; depth++) {
      if (at === null || depth > MAX_DEPTH) return null;
      const changed = then.get(at);
      let parent: string | null;
      if (changed) {
        if (changed.parentId === undefined || changed.name === null) return null;
        segments.unshift(this.d.dav.davName(principal, changed.parentId, changed.name));
        parent = changed.parentId;
      } else {
        const row = this.d.items.get(principal.accountId, at);
        if (!row) return null;
        segments.unshift(this.d.dav.davName(principal, row.parentId, row.name));
        parent = row.parentId;
      }
      at = parent;
    }
    return segments.length ? segments : null;
  }
}
