import type { ActivityLine, ActivityPage, ActivityPerson, ActivityQuery } from '../../contract/activity.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { badRequest, Messages, notFound } from '../../errors.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import type { ChangeRow } from '../../db/repos/changes.ts';
import { CHANGE_KINDS, type ChangeLog, type ChangeReader, type TreeReach } from './change-log.ts';

const DEFAULT_LIMIT = 50;
const DEFAULT_PEOPLE = 100;
const MAX_LIMIT = 200;
const MAX_DEPTH = 10_000;
const ACTOR_NAMES = { link: 'Link visitor', docserver: 'Document server', system: 'Coffer' } as const;

/** The Activity view and an item's history: the change log, newest first, through its visibility rule, with names and paths. */
export class ActivityService {
  constructor(
    private readonly d: {
      changes: ChangeLog;
      items: ItemsRepo;
      members: MembersRepo;
      users: UsersRepo;
      tree: Pick<TreeReach, 'reachesShared'>;
    },
  ) {}

  list(reader: ChangeReader, q: ActivityQuery): ActivityPage {
    const kind = q.kind ? CHANGE_KINDS.find((k) => k === q.kind) : undefined;
    if (q.kind && !kind) throw badRequest(`Unknown kind: use one of ${CHANGE_KINDS.join(', ')}`);
    const before = q.cursor ? decodeCursor(q.cursor, ['number'])?.[0] : Number.MAX_SAFE_INTEGER;
    if (typeof before !== 'number') throw badRequest(Messages.invalidCursor);
    for (const id of [q.itemId, q.folderId]) if (id && !this.mayRead(reader, id)) throw notFound(Messages.itemNotFound);
    const limit = Math.max(1, Math.min(MAX_LIMIT, q.limit ?? DEFAULT_LIMIT));
    const page = this.d.changes.changesFor(reader, {
      afterSeq: before,
      newestFirst: true,
      limit: limit + 1,
      itemId: q.itemId,
      folderId: q.folderId,
      kind,
      actor: q.actor,
    });
    const rows = page.rows.slice(0, limit);
    const names = new Map<string, string>();
    const paths = new Map<string, string | null>();
    const next = page.rows.length > limit ? rows.at(-1)!.seq : page.end ? null : page.nextAfterSeq;
    return {
      items: rows.map((row) => this.line(reader, row, names, paths)),
      nextCursor: next === null ? null : encodeCursor([next]),
    };
  }

  /** The people whose changes `reader` may see, the most recently active first: the person filter's choices. */
  people(reader: ChangeReader, limit = DEFAULT_PEOPLE): ActivityPerson[] {
    const names = new Map<string, string>();
    return this.d.changes.actorsFor(reader, limit).map((row) => ({
      id: row.actorId!,
      kind: row.actorKind === 'link' ? 'link' : 'login',
      name: this.actorName(row, {}, names),
      lastAt: new Date(row.at).toISOString(),
    }));
  }

  private mayRead(reader: ChangeReader, itemId: string): boolean {
    const own = reader.share?.memberAccountId ?? reader.accountId;
    const owner = this.d.members.accountOf(itemId);
    if (owner === null) return false;
    return owner === own || this.d.tree.reachesShared(own, itemId);
  }

  private line(reader: ChangeReader, row: ChangeRow, names: Map<string, string>, paths: Map<string, string | null>): ActivityLine {
    const details = row.details ? (JSON.parse(row.details) as Record<string, unknown>) : {};
    const sides = this.d.changes.sidesFor(reader, row);
    // The shared item itself keeps its names, its folders being the owner's; another item shows no side outside the share.
    const root = (!sides.before || !sides.after) && this.isSharedRoot(reader, row.itemId);
    const side = (shown: boolean, name: string | null, folder: string | null) =>
      name === null ? null : shown ? { name, folderId: folder } : root ? { name, folderId: null } : null;
    const before = side(sides.before, row.nameBefore, row.parentBefore);
    const after = side(sides.after, row.nameAfter, row.parentAfter);
    // Moved out of what the reader sees: gone from its view.
    const gone = after === null;
    const folderId = (gone ? before?.folderId : after?.folderId) ?? null;
    const folderPath = this.pathOf(reader, row.accountId, folderId, paths);
    return {
      seq: row.seq,
      at: new Date(row.at).toISOString(),
      kind: row.kind,
      actor: { kind: row.actorKind, id: row.actorId, name: this.actorName(row, details, names) },
      item: {
        id: row.itemId,
        type: row.itemType,
        name: after?.name ?? before?.name ?? row.nameAfter ?? row.nameBefore,
        path: gone ? null : this.pathOf(reader, row.accountId, row.itemId, paths),
      },
      folder: { id: folderId, path: folderPath },
      before,
      after,
      details,
    };
  }

  private isSharedRoot(reader: ChangeReader, itemId: string): boolean {
    return this.d.members.membershipOf(reader.share?.memberAccountId ?? reader.accountId, itemId)?.itemId === itemId;
  }

  private actorName(row: ChangeRow, details: Record<string, unknown>, names: Map<string, string>): string {
    const loginId =
      row.actorKind === 'login' ? row.actorId : row.actorKind === 'docserver' ? (details.loginId as string | undefined) : null;
    if (!loginId) return ACTOR_NAMES[row.actorKind as keyof typeof ACTOR_NAMES] ?? 'Someone';
    let name = names.get(loginId);
    if (name === undefined) {
      const user = this.d.users.nameAndEmail(loginId);
      name = user ? user.name || user.email : 'A removed user';
      names.set(loginId, name);
    }
    return name;
  }

  /**
   * Where an item is now, as the reader sees it: from the top of its own tree, or from the shared item
   * for a member; null when it is in the trash, gone, or outside what the reader can see. '' is the top.
   */
  private pathOf(reader: ChangeReader, accountId: string, id: string | null, paths: Map<string, string | null>): string | null {
    const own = reader.share?.memberAccountId ?? reader.accountId;
    if (id === null) return accountId === own ? '' : null;
    const cached = paths.get(id);
    if (cached !== undefined) return cached;
    const root = accountId === own ? null : (this.d.members.membershipOf(own, id)?.itemId ?? undefined);
    let path: string | null = null;
    if (root !== undefined) {
      const names: string[] = [];
      let current: string | null = id;
      for (let depth = 0; current !== null && depth < MAX_DEPTH; depth++) {
        const item = this.d.items.getLive(accountId, current);
        if (!item) break;
        names.unshift(item.name);
        if (item.id === root || item.parentId === null) {
          if (item.id === root || root === null) path = names.join('/');
          break;
        }
        current = item.parentId;
      }
    }
    paths.set(id, path);
    return path;
  }
}
