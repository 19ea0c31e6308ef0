import type { Database } from 'bun:sqlite';
import { changes } from '../schema/changes.ts';
import { selectList } from '../select.ts';

export type ChangeRow = Omit<typeof changes.$inferSelect, 'itemRow'>;
export type NewChangeRow = Omit<ChangeRow, 'seq'>;

const ROW = selectList(changes, [
  'seq',
  'at',
  'accountId',
  'actorKind',
  'actorId',
  'kind',
  'itemId',
  'itemType',
  'nameBefore',
  'parentBefore',
  'nameAfter',
  'parentAfter',
  'details',
]);

/** The SQL of the change log (`changes`): appends, keyset pages by seq, and thinning. */
export class ChangesRepo {
  constructor(private readonly sqlite: Database) {}

  /** Whether a transaction is open on the connection: an append outside one would not commit with its change. */
  inTransaction(): boolean {
    return this.sqlite.inTransaction;
  }

  /** Hot: one insert per change, inside the change's transaction; answers the row's seq. */
  append(row: NewChangeRow): number {
    const result = this.sqlite
      .query(
        `INSERT INTO changes (at, account_id, actor_kind, actor_id, kind, item_id, item_row, item_type, name_before, parent_before, name_after, parent_after, details)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, (SELECT seq FROM items WHERE id = ?6), ?7, ?8, ?9, ?10, ?11, ?12)`,
      )
      .run(
        row.at,
        row.accountId,
        row.actorKind,
        row.actorId,
        row.kind,
        row.itemId,
        row.itemType,
        row.nameBefore,
        row.parentBefore,
        row.nameAfter,
        row.parentAfter,
        row.details,
      );
    return Number(result.lastInsertRowid);
  }

  /** Up to `limit` rows after `afterSeq` of any of `accountIds`, in seq order. */
  pageOfAccounts(accountIds: readonly string[], afterSeq: number, limit: number): ChangeRow[] {
    if (accountIds.length === 0) return [];
    if (accountIds.length === 1)
      return this.sqlite
        .query<ChangeRow, [string, number, number]>(`SELECT ${ROW} FROM changes WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?`)
        .all(accountIds[0]!, afterSeq, limit);
    return this.sqlite
      .query<ChangeRow, [string, number, number]>(
        `SELECT ${ROW} FROM changes WHERE account_id IN (SELECT value FROM json_each(?)) AND seq > ? ORDER BY seq LIMIT ?`,
      )
      .all(JSON.stringify(accountIds), afterSeq, limit);
  }

  /** Up to `limit` rows of every account after `afterSeq`, in seq order (the webhook dispatcher's and desktop push's read of each new row). */
  pageAfter(afterSeq: number, limit: number): ChangeRow[] {
    return this.sqlite
      .query<ChangeRow, [number, number]>(`SELECT ${ROW} FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`)
      .all(afterSeq, limit);
  }

  /** Up to `limit` rows of one item after `afterSeq`, in seq order: those of its row, none once the row is gone. */
  pageOfItem(itemId: string, afterSeq: number, limit: number): ChangeRow[] {
    const itemRow = this.rowOf(itemId);
    if (itemRow === null) return [];
    return this.sqlite
      .query<ChangeRow, [number, number, number]>(`SELECT ${ROW} FROM changes WHERE item_row = ? AND seq > ? ORDER BY seq LIMIT ?`)
      .all(itemRow, afterSeq, limit);
  }

  /** The item's row number, which its changes are indexed by (a separate lookup costs fewer instructions than a subquery). */
  private rowOf(itemId: string): number | null {
    return this.sqlite.query<{ seq: number }, [string]>('SELECT seq FROM items WHERE id = ?').get(itemId)?.seq ?? null;
  }

  /** Up to `limit` rows before `beforeSeq` of any of `accountIds` (by `actorId` only, when given), newest first (the Activity view's order). */
  pageOfAccountsBefore(accountIds: readonly string[], beforeSeq: number, limit: number, actorId?: string): ChangeRow[] {
    if (accountIds.length === 0) return [];
    if (actorId !== undefined)
      return this.sqlite
        .query<ChangeRow, [string, string, number, number]>(
          `SELECT ${ROW} FROM changes WHERE account_id IN (SELECT value FROM json_each(?)) AND actor_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
        )
        .all(JSON.stringify(accountIds), actorId, beforeSeq, limit);
    return this.sqlite
      .query<ChangeRow, [string, number, number]>(
        `SELECT ${ROW} FROM changes WHERE account_id IN (SELECT value FROM json_each(?)) AND seq < ? ORDER BY seq DESC LIMIT ?`,
      )
      .all(JSON.stringify(accountIds), beforeSeq, limit);
  }

  /**
   * Up to `limit` of the distinct actors (logins, links) of an account's rows: one seek on the actor index
   * per actor (a skip scan), however many rows each has.
   */
  actorsOf(accountId: string, limit: number): string[] {
    return this.sqlite
      .query<{ id: string }, [string, number]>(
        `WITH RECURSIVE actor(id) AS (
           SELECT (SELECT MIN(actor_id) FROM changes WHERE account_id = ?1 AND actor_id IS NOT NULL)
           UNION ALL
           SELECT (SELECT MIN(actor_id) FROM changes WHERE account_id = ?1 AND actor_id > actor.id) FROM actor WHERE actor.id IS NOT NULL
           LIMIT ?2 + 1
         )
         SELECT id FROM actor WHERE id IS NOT NULL`,
      )
      .all(accountId, limit)
      .map((r) => r.id);
  }

  /** Up to `limit` rows of one item before `beforeSeq`, newest first (the rows pageOfItem reads). */
  pageOfItemBefore(itemId: string, beforeSeq: number, limit: number): ChangeRow[] {
    const itemRow = this.rowOf(itemId);
    if (itemRow === null) return [];
    return this.sqlite
      .query<ChangeRow, [number, number, number]>(`SELECT ${ROW} FROM changes WHERE item_row = ? AND seq < ? ORDER BY seq DESC LIMIT ?`)
      .all(itemRow, beforeSeq, limit);
  }

  /** The folder the item was in at `atSeq`, when a move or restore after it took it elsewhere: that change's folder before. */
  parentBeforeMoveAfter(itemId: string, atSeq: number): { parentBefore: string | null } | null {
    const itemRow = this.rowOf(itemId);
    if (itemRow === null) return null;
    return (
      this.sqlite
        .query<{ parentBefore: string | null }, [number, number]>(
          `SELECT parent_before AS parentBefore FROM changes WHERE item_row = ? AND seq > ? AND kind IN ('item.moved', 'item.restored') ORDER BY seq LIMIT 1`,
        )
        .get(itemRow, atSeq) ?? null
    );
  }

  /** The oldest seq still kept; null while the log is empty. */
  oldestSeq(): number | null {
    return this.sqlite.query<{ seq: number | null }, []>('SELECT MIN(seq) AS seq FROM changes').get()?.seq ?? null;
  }

  /** The newest seq handed out (kept or thinned); 0 before the first change. */
  latestSeq(): number {
    return this.sqlite.query<{ seq: number }, []>(`SELECT seq FROM sqlite_sequence WHERE name = 'changes'`).get()?.seq ?? 0;
  }

  /** Makes the next seq handed out follow `seq` (never lowers it): a restored log numbers on past every seq the old server may have handed out. */
  numberOnAfter(seq: number): void {
    // A database from before the change log (restored from an old backup): no seq of it was ever handed out.
    if (!this.sqlite.query(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'changes'`).get()) return;
    this.sqlite.transaction(() => {
      this.sqlite
        .query(
          `INSERT INTO sqlite_sequence (name, seq) SELECT 'changes', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'changes')`,
        )
        .run();
      this.sqlite.query(`UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'changes' AND seq < ?1`).run(seq);
    })();
  }

  /** The newest seq of a row written at or before `at` (epoch ms), 0 for none: a scan of the table, for the rare look after a restore. */
  lastSeqUpTo(at: number): number {
    return this.sqlite.query<{ seq: number | null }, [number]>('SELECT MAX(seq) AS seq FROM changes WHERE at <= ?').get(at)?.seq ?? 0;
  }

  /** Deletes up to `limit` of the oldest rows older than `before` (epoch ms); answers how many went. */
  thinBatch(before: number, limit: number): number {
    return this.sqlite
      .query('DELETE FROM changes WHERE seq IN (SELECT seq FROM changes WHERE at < ? ORDER BY seq LIMIT ?)')
      .run(before, limit).changes;
  }
}
