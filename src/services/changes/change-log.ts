import type { Clock } from '../../clock.ts';
import type { ChangeRow, ChangesRepo } from '../../db/repos/changes.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import type { CHANGE_ACTOR_KINDS } from '../../db/schema/changes.ts';
import { deleteInBatches } from '../../db/select.ts';
import type { Principal } from '../identity/principal.ts';

/** The kinds of change the log records, one const table for every consumer. */
export const ChangeKinds = {
  created: 'item.created',
  uploaded: 'item.uploaded',
  replaced: 'item.replaced',
  renamed: 'item.renamed',
  moved: 'item.moved',
  trashed: 'item.trashed',
  restored: 'item.restored',
  purged: 'item.purged',
  copied: 'item.copied',
  versionRestored: 'item.version_restored',
  linkCreated: 'link.created',
  linkRemoved: 'link.removed',
  memberAdded: 'member.added',
  memberRemoved: 'member.removed',
  dropped: 'item.dropped',
  touched: 'item.touched',
} as const;

export type ChangeKind = (typeof ChangeKinds)[keyof typeof ChangeKinds];
export const CHANGE_KINDS: readonly ChangeKind[] = Object.values(ChangeKinds);
type ChangeActorKind = (typeof CHANGE_ACTOR_KINDS)[number];

/** Who changed an account's tree: `accountId` is the tree's owner (the sharing owner's when a member acts in a share). */
export type ChangeBy =
  | { accountId: string; loginId: string }
  | { accountId: string; actor: { kind: Exclude<ChangeActorKind, 'login'>; id: string | null } };

/** The item a change is about, as it is after the change (before it, for a purge). */
export interface ChangedItem {
  id: string;
  type: 'file' | 'folder';
  name: string;
  parentId: string | null;
}

export interface ChangeOptions {
  /** The item's name and parent before the change; defaults to none for a new item, to the item's own for others. */
  before?: { name: string; parentId: string | null } | null;
  /** Whether the item is gone after the change (a purge): no name or parent after. */
  gone?: boolean;
  details?: Record<string, unknown>;
}

/** What the log asks of the file tree (files/tree.ts's Tree answers it): who reaches a shared item, what is inside a folder. */
export interface TreeReach {
  reachesShared(accountId: string, itemId: string): boolean;
  sharesRoot(accountId: string, itemId: string): boolean;
  sharedRootOf(accountId: string, itemId: string): string | null;
  parentOf(id: string): string | null;
  isInside(ancestors: ReadonlySet<string>, id: string | null): boolean;
}

/** Who asks for changes: a request's principal (one Tree.actor scoped to a share reads as its own account). */
export type ChangeReader = Pick<Principal, 'accountId' | 'share'>;

export interface ChangeQuery {
  /** The seq to read after (in seq order), or with `newestFirst` before. */
  afterSeq: number;
  /** Newest first, before `afterSeq` (the Activity view); seq order otherwise. */
  newestFirst?: boolean;
  /** Only changes whose item, or its folder before or after, lies in this folder (at any depth, as it is now). */
  folderId?: string;
  limit: number;
  itemId?: string;
  kind?: ChangeKind;
  /** A login id or share link id. */
  actor?: string;
}

export interface ChangePage {
  rows: ChangeRow[];
  /** The seq to continue after: the last row looked at, shown or not (rows the reader may not see are skipped). */
  nextAfterSeq: number;
  /** Whether the reads reached the end of the log (none left after nextAfterSeq), rather than stopping at the limit or the scan's bound. */
  end: boolean;
}

// What tells this process's row at a seq from another process's there: when, of which item, what.
const fingerprint = (row: Pick<ChangeRow, 'at' | 'itemId' | 'kind'>) => `${row.at} ${row.itemId} ${row.kind}`;

const ownAccount = (reader: ChangeReader): string => reader.share?.memberAccountId ?? reader.accountId;

// Kinds the live stream announces no event for: their seq is never claimed.
const NO_LIVE_EVENT = new Set<ChangeKind>([ChangeKinds.memberAdded, ChangeKinds.memberRemoved]);
const NEW_ITEM = new Set<ChangeKind>([ChangeKinds.created, ChangeKinds.uploaded, ChangeKinds.copied, ChangeKinds.dropped]);
const MAX_LIMIT = 1000;
// Rows read per round while filtering a page; a page ends after this many rounds even if short.
const SCAN_ROUNDS = 8;
const THIN_BATCH = 1000;
// The person filter: people per account, and the rows of each (newest first, a page at a time) looked at for one the reader may see.
const MAX_ACTORS = 500;
const ACTOR_SCAN = 2000;
const ACTOR_PAGE = 200;
const MAX_DEPTH = 10_000;
// Seqs recorded but not yet claimed by their live event; a change whose event never comes ages out.
const MAX_UNCLAIMED = 10_000;
// How long a change's live event may lag its commit before later events' ids stop waiting for it.
const ANNOUNCE_WAIT_MS = 60_000;
const DAY_MS = 24 * 3600_000;
// A restored database numbers its changes on from the next multiple of this: seqs the old server handed out past the restored state are never handed out again.
const EPOCH = 2 ** 40;
const epochStart = (seq: number) => Math.floor(seq / EPOCH) * EPOCH;

/** The seq a restored log numbers on after: the start of the epoch after `latest`'s. */
export const restoredLogNumbersAfter = (latest: number): number => epochStart(latest) + EPOCH;

/** Whether a consumer may resume after a seq: `unknown` when it was never handed out here (from the future, or from before a restore), `thinned` when changes after it are gone. */
export type ResumeCheck = 'ok' | 'unknown' | 'thinned';

/**
 * The durable change log: every change to an item is appended by the service that makes it, in the
 * change's own transaction, and read back by the consumers (streams, sync, push, webhooks, activity)
 * through one visibility rule.
 */
export class ChangeLog {
  private readonly unclaimed = new Map<string, number>();
  /** Seqs of this process's changes whose live event is still to come, with when each was recorded. */
  private readonly unannounced = new Map<number, number>();
  /** Runs of seqs this process recorded, oldest first: a row of the log outside them was written by another process. */
  private readonly ownRuns: Array<{ from: number; to: number }> = [];
  /** What this process recorded at its latest seqs: a seq its rolled-back transaction handed out may be another process's row. */
  private readonly ownRows = new Map<number, string>();
  private summarized = false;

  constructor(
    private readonly d: {
      clock: Clock;
      retentionClock: Pick<Clock, 'now'>;
      repo: ChangesRepo;
      members: MembersRepo;
      tree: TreeReach;
      retentionDays: number;
    },
  ) {}

  /** Appends one change and answers its seq; must run inside the transaction that makes the change (throws otherwise). */
  record(by: ChangeBy, kind: ChangeKind, item: ChangedItem, options: ChangeOptions = {}): number {
    if (!this.d.repo.inTransaction()) throw new Error(`change ${kind} of ${item.id} recorded outside its transaction`);
    const before = options.before !== undefined ? options.before : NEW_ITEM.has(kind) ? null : item;
    const actor = 'loginId' in by ? { kind: 'login' as const, id: by.loginId } : by.actor;
    const at = this.d.clock.now();
    const seq = this.d.repo.append({
      at,
      accountId: by.accountId,
      actorKind: actor.kind,
      actorId: actor.id,
      kind,
      itemId: item.id,
      itemType: item.type,
      nameBefore: before?.name ?? null,
      parentBefore: before?.parentId ?? null,
      nameAfter: options.gone ? null : item.name,
      parentAfter: options.gone ? null : item.parentId,
      details: options.details ? JSON.stringify(options.details) : null,
    });
    this.noteOwn(seq, fingerprint({ at, itemId: item.id, kind }));
    const superseded = this.unclaimed.get(item.id);
    if (superseded !== undefined) this.unannounced.delete(superseded);
    this.unclaimed.delete(item.id);
    if (!NO_LIVE_EVENT.has(kind) && !this.summarized) {
      this.unclaimed.set(item.id, seq);
      // A seq handed out again after its transaction rolled back starts afresh.
      this.unannounced.delete(seq);
      this.unannounced.set(seq, this.d.clock.now());
    }
    if (this.unclaimed.size > MAX_UNCLAIMED) this.unclaimed.delete(this.unclaimed.keys().next().value as string);
    if (this.unannounced.size > MAX_UNCLAIMED) this.unannounced.delete(this.unannounced.keys().next().value as number);
    return seq;
  }

  private noteOwn(seq: number, row: string): void {
    this.ownRows.delete(seq);
    this.ownRows.set(seq, row);
    if (this.ownRows.size > MAX_UNCLAIMED) this.ownRows.delete(this.ownRows.keys().next().value as number);
    const last = this.ownRuns.at(-1);
    // A seq handed out again after a rollback is inside the last run already (one below it follows a restore: a run of its own).
    if (last && seq >= last.from && seq <= last.to) return;
    if (last && seq === last.to + 1) last.to = seq;
    else this.ownRuns.push({ from: seq, to: seq });
    if (this.ownRuns.length > MAX_UNCLAIMED) this.ownRuns.shift();
  }

  /**
   * Whether this process recorded the change (its live event is this process's to publish), as far as not yet forgotten:
   * its seq is one this process was handed, and the row is the one it wrote there (not another process's, committed at
   * a seq this process's rolled-back transaction had been handed).
   */
  recordedHere(row: Pick<ChangeRow, 'seq' | 'at' | 'itemId' | 'kind'>): boolean {
    const own = this.ownRows.get(row.seq);
    if (own !== undefined && own !== fingerprint(row)) return false;
    return this.ownRuns.some((r) => row.seq >= r.from && row.seq <= r.to);
  }

  /** Forgets which changes up to `seq` this process recorded: a reader of the log past them asks no more. */
  forgetRecordedThrough(seq: number): void {
    while (this.ownRuns.length > 0 && this.ownRuns[0]!.to <= seq) this.ownRuns.shift();
    const first = this.ownRuns[0];
    if (first && first.from <= seq) first.from = seq + 1;
    for (const own of this.ownRows.keys()) if (own <= seq) this.ownRows.delete(own);
  }

  /** Runs `fn`, whose changes one summary event stands in for (a large library scan's): none waits for a live event of its own. */
  summarizing<T>(fn: () => T): T {
    this.summarized = true;
    try {
      return fn();
    } finally {
      this.summarized = false;
    }
  }

  /**
   * The seq of the item's latest change not yet claimed, once, and the id its live event carries: its seq,
   * or just below the oldest change of this process still waiting for its event. Events are published after
   * their commit, not always in seq order (a bulk upload announces its files once all are written), and a
   * stream resumes after the last id it got: with that id it replays the late one rather than skip it.
   */
  claimSeq(itemId: string): { seq: number; resumeId: number } | undefined {
    const seq = this.unclaimed.get(itemId);
    if (seq === undefined) return undefined;
    this.unclaimed.delete(itemId);
    this.unannounced.delete(seq);
    const now = this.d.clock.now();
    let oldest = seq;
    for (const [waiting, at] of this.unannounced) {
      // A change whose event never came (its write failed after the row, or it announces nothing) stops holding ids back.
      if (now - at > ANNOUNCE_WAIT_MS) this.unannounced.delete(waiting);
      else if (waiting < oldest) oldest = waiting;
    }
    return { seq, resumeId: oldest === seq ? seq : oldest - 1 };
  }

  /**
   * The changes `reader` may see after `q.afterSeq`, in seq order: its account's (a login of the account
   * lists the whole live tree, so a sub-user sees them all), and those of accounts sharing with it whose
   * item, or the item's parent before or after, lies under a share it is still a member of (in person,
   * by a group or a team folder, as Tree.reachesShared decides), so nothing shows after its removal.
   */
  changesFor(reader: ChangeReader, q: ChangeQuery): ChangePage {
    const own = ownAccount(reader);
    const limit = Math.max(1, Math.min(MAX_LIMIT, q.limit));
    const accounts = [own, ...this.d.members.ownersSharingWith(own)];
    const rows: ChangeRow[] = [];
    let after = q.afterSeq;
    let end = false;
    for (let round = 0; round < SCAN_ROUNDS && rows.length < limit; round++) {
      const batch = this.batch(accounts, q, after, limit);
      for (const row of batch) {
        after = row.seq;
        if (this.matches(row, q) && this.visible(own, row)) rows.push(row);
        if (rows.length === limit) break;
      }
      if (batch.length < limit) {
        end = batch.length === 0 || batch.at(-1)!.seq === after;
        break;
      }
    }
    return { rows, nextAfterSeq: after, end };
  }

  private batch(accounts: string[], q: ChangeQuery, after: number, limit: number): ChangeRow[] {
    if (q.newestFirst)
      return q.itemId
        ? this.d.repo.pageOfItemBefore(q.itemId, after, limit)
        : this.d.repo.pageOfAccountsBefore(accounts, after, limit, q.actor);
    return q.itemId ? this.d.repo.pageOfItem(q.itemId, after, limit) : this.d.repo.pageOfAccounts(accounts, after, limit);
  }

  /**
   * The latest change `reader` may see of each person (login or link) who changed its account's tree or
   * what is shared with it, newest first: the Activity view's person filter. Bounded: at most MAX_ACTORS
   * people per account, and for a sharing account at most ACTOR_SCAN rows of each looked at, newest first.
   */
  actorsFor(reader: ChangeReader, limit: number): ChangeRow[] {
    const own = ownAccount(reader);
    const latest = new Map<string, ChangeRow>();
    for (const accountId of [own, ...this.d.members.ownersSharingWith(own)]) {
      for (const actorId of this.d.repo.actorsOf(accountId, MAX_ACTORS)) {
        const row = this.latestVisible(own, accountId, actorId);
        if (row && row.seq > (latest.get(actorId)?.seq ?? 0)) latest.set(actorId, row);
      }
    }
    return [...latest.values()].sort((a, b) => b.seq - a.seq).slice(0, Math.max(1, Math.min(MAX_LIMIT, limit)));
  }

  private latestVisible(own: string, accountId: string, actorId: string): ChangeRow | undefined {
    if (accountId === own) return this.d.repo.pageOfAccountsBefore([accountId], Number.MAX_SAFE_INTEGER, 1, actorId)[0];
    let before = Number.MAX_SAFE_INTEGER;
    for (let looked = 0; looked < ACTOR_SCAN; looked += ACTOR_PAGE) {
      const rows = this.d.repo.pageOfAccountsBefore([accountId], before, ACTOR_PAGE, actorId);
      const row = rows.find((r) => this.visible(own, r));
      if (row || rows.length < ACTOR_PAGE) return row;
      before = rows.at(-1)!.seq;
    }
    return undefined;
  }

  /** Whether `reader` may see one row (the rule of changesFor, for a consumer that is handed rows live). */
  maySee(reader: ChangeReader, row: ChangeRow): boolean {
    return this.visible(ownAccount(reader), row);
  }

  /** Which of a visible change's folders, before and after, `reader` may see: another account's only where they lay in a share with it then. */
  sidesFor(reader: ChangeReader, row: ChangeRow): { before: boolean; after: boolean } {
    const own = ownAccount(reader);
    if (row.accountId === own) return { before: true, after: true };
    return { before: this.sharedSide(own, row, row.parentBefore), after: this.sharedSide(own, row, row.parentAfter) };
  }

  private sharedSide(accountId: string, row: ChangeRow, folderId: string | null): boolean {
    return (
      folderId !== null &&
      this.d.members.accountOf(folderId) === row.accountId &&
      this.d.tree.reachesShared(accountId, folderId) &&
      this.wasShared(accountId, folderId, row.seq)
    );
  }

  private visible(accountId: string, row: ChangeRow): boolean {
    if (row.accountId === accountId) return true;
    // Where the change was made, not where the item is now: what it went through in the owner's own folders before it was moved into a share stays the owner's.
    if (this.sharedSide(accountId, row, row.parentBefore) || this.sharedSide(accountId, row, row.parentAfter)) return true;
    // The shared item itself, whose own changes are made in the owner's folders above it.
    return row.itemId !== null && this.d.members.accountOf(row.itemId) === row.accountId && this.d.tree.sharesRoot(accountId, row.itemId);
  }

  /**
   * Whether `folderId`, inside a share with `accountId` now, was inside it already at `seq`: the folders it was in then, read
   * back through the moves and restores made since, lead up to the shared item (a folder moved into a share brings no history
   * of the owner's own tree).
   */
  private wasShared(accountId: string, folderId: string, seq: number): boolean {
    const root = this.d.tree.sharedRootOf(accountId, folderId);
    let id: string | null = folderId;
    for (let depth = 0; id !== null && depth < MAX_DEPTH; depth++) {
      if (id === root) return true;
      const moved = this.d.repo.parentBeforeMoveAfter(id, seq);
      id = moved ? moved.parentBefore : this.d.tree.parentOf(id);
    }
    return false;
  }

  private matches(row: ChangeRow, q: ChangeQuery): boolean {
    if (q.kind && row.kind !== q.kind) return false;
    if (q.actor && row.actorId !== q.actor) return false;
    if (!q.folderId) return true;
    const folder = new Set([q.folderId]);
    return [row.itemId, row.parentBefore, row.parentAfter].some((id) => id !== null && this.d.tree.isInside(folder, id));
  }

  /**
   * Every account's rows after `afterSeq`, unfiltered: for a consumer that applies its own rule per row
   * (the webhook dispatcher: an account's hooks take its account's rows, the instance's all of them).
   */
  after(afterSeq: number, limit: number): ChangeRow[] {
    return this.d.repo.pageAfter(afterSeq, Math.max(1, Math.min(MAX_LIMIT, limit)));
  }

  /** The oldest seq still kept (a consumer resuming before it has lost changes); null while the log is empty. */
  oldestSeq(): number | null {
    return this.d.repo.oldestSeq();
  }

  /** The newest seq handed out; 0 before the first change. */
  latestSeq(): number {
    return this.d.repo.latestSeq();
  }

  /**
   * Whether a consumer that has seen the changes up to `seq` may read on after it. A seq below the latest's
   * epoch is from before a restore: the old server may have handed it out for a change the restored log does not hold.
   */
  resumeCheck(seq: number): ResumeCheck {
    const latest = this.latestSeq();
    if (seq > latest || seq < epochStart(latest)) return 'unknown';
    return (this.oldestSeq() ?? latest + 1) > seq + 1 ? 'thinned' : 'ok';
  }

  /**
   * Where a reader that has read the log up to `seen` (`last` its row, null before any) goes on when the log was put back
   * beneath the server (a restore into the live database: its numbering went back below `seen`, or another change stands
   * at `last`'s seq): after the restored log's newest change made by `last`'s time, those before being its history, announced
   * long ago. Null when it was not.
   */
  restartAfterRestore(seen: number, last: Pick<ChangeRow, 'seq' | 'at' | 'itemId' | 'kind'> | null): number | null {
    const latest = this.latestSeq();
    const now = last && this.d.repo.pageAfter(last.seq - 1, 1)[0];
    const replaced = !!last && !!now && now.seq === last.seq && fingerprint(now) !== fingerprint(last);
    if (latest >= seen && !replaced) return null;
    return last ? this.lastSeqUpTo(last.at) : latest;
  }

  /** The newest seq of a change made at or before `at` (epoch ms); 0 for none. */
  lastSeqUpTo(at: number): number {
    return this.d.repo.lastSeqUpTo(at);
  }

  /** Retention: rows older than CHANGES_RETENTION_DAYS go, in batches. */
  thin(): number {
    const cutoff = this.d.retentionClock.now() - this.d.retentionDays * DAY_MS;
    return deleteInBatches(THIN_BATCH, (limit) => this.d.repo.thinBatch(cutoff, limit));
  }
}
