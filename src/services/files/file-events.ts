import type { EventHub, HubEvent } from '../../events/hub.ts';
import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import { AuditActions, type AuditAction, type AuditPrincipal, type AuditService } from '../admin/audit.ts';
import { type FileEventName, FileEventType } from '../../contract/events.ts';
import { PageCache } from './page-cache.ts';

const MAX_DEPTH = 10_000;

export { FileEventType, type FileEventName } from '../../contract/events.ts';

// The changes the audit log keeps (issue: uploads, moves, renames, trash, restore, permanent delete, copy).
const AUDITED: Partial<Record<FileEventName, AuditAction>> = {
  'file.uploaded': AuditActions.fileUpload,
  'file.updated': AuditActions.fileUpload,
  'file.renamed': AuditActions.fileRename,
  'file.moved': AuditActions.fileMove,
  'file.copied': AuditActions.fileCopy,
  'file.deleted': AuditActions.fileTrash,
  'file.restored': AuditActions.fileRestore,
  'file.permanently_deleted': AuditActions.fileDeletePermanent,
};

// Events of a folder that end or bring back access to the shares inside it.
const SHARES_GO_ALONG = new Set<FileEventName>(['file.deleted', 'file.restored']);

// Events after which a file has new content.
const CONTENT_CHANGES = new Set<FileEventName>(['file.uploaded', 'file.updated', 'file.copied']);

/** Reports file-system changes: to the account's event streams, the audit log, and whoever follows new content. */
export class FileEvents {
  private readonly contentListeners: Array<(mimeType: string | null) => void> = [];
  /** An owner's shared items and the member accounts of each, read once per access version rather than per event. */
  private readonly sharesByRoot: PageCache<Map<string, string[]>>;

  constructor(
    private readonly hub: EventHub,
    private readonly audit: AuditService,
    private readonly members: MembersRepo,
    private readonly items: ItemsRepo,
    /** The change log's seq of the item's change just committed, and the id its event carries (see ChangeLog.claimSeq). */
    private readonly claimSeq: (itemId: string) => { seq: number; resumeId: number } | undefined,
    accessVersion: () => string,
    /** The admin switch of sharing with people: while off, no member hears of a share. */
    private readonly peopleSharingOn: () => boolean,
  ) {
    this.sharesByRoot = new PageCache(accessVersion, (byRoot) => byRoot.size);
  }

  /**
   * `{id, name, type, parentId, userId}` plus the type's own fields; `actor` is the request's principal or a
   * job's login. `audit` records the change under a more specific action than the event's own, with more details.
   */
  item(
    actor: AuditPrincipal,
    type: FileEventName,
    row: Pick<Item, 'id' | 'name' | 'type' | 'parentId'>,
    extra: Record<string, unknown> = {},
    audit?: { action: AuditAction; details: Record<string, unknown> },
  ): void {
    this.announce(actor, type, row, extra);
    this.recordAudit(actor, type, row, extra, audit);
  }

  /**
   * `item` of a move (or of the rename that went with it): also to the members who reached the item where it
   * was, `fromParentId`, so those it left hear it go, as a stream resumed over the change replays it.
   */
  moved(
    actor: AuditPrincipal,
    type: FileEventName,
    row: Pick<Item, 'id' | 'name' | 'type' | 'parentId'>,
    fromParentId: string | null,
    extra: Record<string, unknown> = {},
  ): void {
    this.announceWith(this.sharesOf(actor.accountId), actor, type, row, extra, fromParentId);
    this.recordAudit(actor, type, row, extra);
  }

  /** `item` without its audit record: for a change whose record was written in the transaction that committed it (`recordAudit`). */
  announce(
    actor: AuditPrincipal,
    type: FileEventName,
    row: Pick<Item, 'id' | 'name' | 'type' | 'parentId'>,
    extra: Record<string, unknown> = {},
  ): void {
    this.announceWith(this.sharesOf(actor.accountId), actor, type, row, extra);
  }

  /** `announce` of each of `rows`, changes committed together: the owner's shares are read once for all of them. */
  announceEach<R extends Pick<Item, 'id' | 'name' | 'type' | 'parentId'>>(
    actor: AuditPrincipal,
    type: FileEventName,
    rows: readonly R[],
    extra: (row: R) => Record<string, unknown>,
  ): void {
    if (rows.length === 0) return;
    const byRoot = this.sharesOf(actor.accountId);
    for (const row of rows) this.announceWith(byRoot, actor, type, row, extra(row));
  }

  private announceWith(
    byRoot: ReadonlyMap<string, string[]>,
    actor: AuditPrincipal,
    type: FileEventName,
    row: Pick<Item, 'id' | 'name' | 'type' | 'parentId'>,
    extra: Record<string, unknown>,
    fromParentId: string | null = null,
  ): void {
    if (CONTENT_CHANGES.has(type)) {
      const mimeType = typeof extra.mimeType === 'string' ? extra.mimeType : null;
      for (const listener of this.contentListeners) listener(mimeType);
    }
    const data = { id: row.id, name: row.name, type: row.type, parentId: row.parentId, userId: actor.loginId, ...extra };
    const claimed = type === FileEventType.starred ? undefined : this.claimSeq(row.id);
    const at = new Date();
    this.hub.publish(actor.accountId, type, data, at, claimed?.seq, claimed?.resumeId);
    const reached = this.membersReaching(byRoot, row.id, [row.parentId, fromParentId]);
    for (const accountId of reached) this.hub.publish(accountId, type, data, at, claimed?.seq, claimed?.resumeId);
    if (row.type === 'folder' && SHARES_GO_ALONG.has(type)) this.announceSharesInside(byRoot, actor, type, row.id, reached, at);
  }

  /**
   * A folder trashed or restored takes the shares inside it along: their members (who do not know the folder)
   * hear it of the shared item they know, as when that item itself is trashed or restored.
   */
  private announceSharesInside(
    byRoot: ReadonlyMap<string, string[]>,
    actor: AuditPrincipal,
    type: FileEventName,
    folderId: string,
    reached: ReadonlySet<string>,
    at: Date,
  ): void {
    const inside = this.sharedRootsBelow(byRoot, folderId);
    if (inside.length === 0) return;
    for (const root of this.items.getMany(actor.accountId, inside)) {
      // One trashed on its own before stays in the trash: its members heard of it then, and it does not come back.
      const wentAlong = type === FileEventType.deleted ? root.deletedRootId === folderId : root.deletedAt === null;
      if (!wentAlong) continue;
      const data = { id: root.id, name: root.name, type: root.type, parentId: root.parentId, userId: actor.loginId };
      for (const accountId of byRoot.get(root.id) ?? []) if (!reached.has(accountId)) this.hub.publish(accountId, type, data, at);
    }
  }

  /** The owner's shared items strictly below `folderId`: one query per level, walking up from all of them at once. */
  private sharedRootsBelow(byRoot: ReadonlyMap<string, string[]>, folderId: string): string[] {
    const found: string[] = [];
    // Each folder reached on the way up, with the shared items it was reached from.
    let frontier = new Map<string, string[]>([...byRoot.keys()].filter((id) => id !== folderId).map((id) => [id, [id]]));
    for (let depth = 0; frontier.size > 0 && depth < MAX_DEPTH; depth++) {
      const parents = this.items.parentsOf([...frontier.keys()]);
      const next = new Map<string, string[]>();
      for (const [id, from] of frontier) {
        const parent = parents.get(id);
        if (!parent) continue;
        if (parent === folderId) found.push(...from);
        else next.set(parent, [...(next.get(parent) ?? []), ...from]);
      }
      frontier = next;
    }
    return found;
  }

  /**
   * An event of a change another process committed (the CLI), rebuilt from its log row: to the account and the
   * members reaching the item where it is or was, as the change's own process would have announced it; `resumeId`
   * is the id it carries when an earlier change is still to be announced (see ChangeLog.claimSeq).
   */
  relay(accountId: string, itemId: string, parents: ReadonlyArray<string | null>, event: HubEvent, resumeId = event.seq): void {
    const at = new Date(event.timestamp);
    const id = event.seq === undefined ? undefined : resumeId;
    this.hub.publish(accountId, event.type, event.data, at, event.seq, id);
    for (const member of this.membersReaching(this.sharesOf(accountId), itemId, parents))
      this.hub.publish(member, event.type, event.data, at, event.seq, id);
  }

  /** The change's audit record, if its type is audited; inside the change's transaction it commits with it, in the same commit. */
  recordAudit(
    actor: AuditPrincipal,
    type: FileEventName,
    row: Pick<Item, 'id' | 'name' | 'type' | 'parentId'>,
    extra: Record<string, unknown> = {},
    audit?: { action: AuditAction; details: Record<string, unknown> },
  ): void {
    const action = audit?.action ?? AUDITED[type];
    if (!action) return;
    this.audit.record({
      action,
      principal: actor,
      targetType: row.type,
      targetId: row.id,
      details: { name: row.name, parentId: row.parentId, ...extra, ...audit?.details },
    });
  }

  /**
   * The audit record of a trash emptied: one row, however large the trash, with how many trashed items (and
   * items in all) went for good and the first of them by id and name (`listed`, bounded by the caller).
   */
  trashEmptied(
    actor: AuditPrincipal,
    emptied: { count: number; items: number; listed: ReadonlyArray<Pick<Item, 'id' | 'name' | 'type'>> },
    system = false,
  ): void {
    this.audit.record({
      action: AuditActions.fileTrashEmpty,
      principal: actor,
      ...(system ? { actor: 'system' as const } : {}),
      targetType: 'trash',
      targetId: actor.accountId,
      details: {
        count: emptied.count,
        items: emptied.items,
        purged: emptied.listed.map((r) => ({ id: r.id, name: r.name, type: r.type })),
        more: emptied.count - emptied.listed.length,
      },
    });
  }

  /** `ownerId`'s shared items, each with the member accounts it reaches; none while sharing with people is off. */
  private sharesOf(ownerId: string): ReadonlyMap<string, string[]> {
    if (!this.peopleSharingOn()) return new Map();
    return this.sharesByRoot.get(ownerId, () => {
      const byRoot = new Map<string, string[]>();
      for (const m of this.members.ofOwner(ownerId)) byRoot.set(m.itemId, [...(byRoot.get(m.itemId) ?? []), m.accountId]);
      return byRoot;
    });
  }

  /**
   * The member accounts of the owner's shares (`byRoot`, sharesOf) that contain `itemId`: its own share, and
   * those of the folders `parents` (where it is, as the changed row says: a purged item is no longer in the
   * tree to ask; where it was moved from).
   */
  private membersReaching(byRoot: ReadonlyMap<string, string[]>, itemId: string, parents: ReadonlyArray<string | null>): Set<string> {
    const out = new Set<string>();
    if (byRoot.size === 0) return out;
    for (const accountId of byRoot.get(itemId) ?? []) out.add(accountId);
    for (const start of new Set(parents)) {
      let current: string | null | undefined = start;
      for (let depth = 0; current && depth < MAX_DEPTH; depth++) {
        for (const accountId of byRoot.get(current) ?? []) out.add(accountId);
        current = this.items.parentOf(current);
      }
    }
    return out;
  }

  /**
   * `listener` runs after a file got new content (an upload, a replacement, a copy, a document save), with
   * the file's type when the change is one file's (null when unknown: a copy may hold a whole folder).
   */
  onContentChange(listener: (mimeType: string | null) => void): void {
    this.contentListeners.push(listener);
  }

  /**
   * One event for many changes not reported one by one (a library scan's): `{userId, action, count}` as a
   * job's, to the account and the members reaching `itemId`, so their clients list again.
   */
  many(accountId: string, itemId: string, data: { action: string; count: number }): void {
    const payload = { userId: accountId, id: itemId, ...data };
    this.hub.publish(accountId, FileEventType.updated, payload);
    for (const member of this.membersReaching(this.sharesOf(accountId), itemId, [this.items.parentOf(itemId) ?? null]))
      this.hub.publish(member, FileEventType.updated, payload);
  }

  /** One event per finished background job, `{userId, action, count}`: to the account, and to the starting member's. */
  jobDone(
    job: { accountId: string; memberAccountId?: string },
    type: FileEventName,
    data: { userId: string; action: string; count: number; jobId: string },
  ): void {
    this.hub.publish(job.accountId, type, data);
    if (job.memberAccountId && job.memberAccountId !== job.accountId) this.hub.publish(job.memberAccountId, type, data);
  }
}
