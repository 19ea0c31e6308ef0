import type { Database } from 'bun:sqlite';
import type { davProperties } from '../schema/dav.ts';

export type DavProperty = typeof davProperties.$inferSelect;

/** What a property takes: the UTF-8 bytes of its namespace, name, value and language. */
const PROPERTY_BYTES =
  'length(CAST(ns AS BLOB)) + length(CAST(name AS BLOB)) + length(CAST(value AS BLOB)) + coalesce(length(CAST(lang AS BLOB)), 0)';

/** The SQL of WebDAV dead properties (`dav_properties`). */
export class DavPropertiesRepo {
  constructor(private readonly sqlite: Database) {}

  /** The properties of the given items, in item order then namespace and name. */
  ofItems(itemIds: readonly string[]): DavProperty[] {
    if (itemIds.length === 0) return [];
    return this.sqlite
      .query<DavProperty, string[]>(
        `SELECT item_id AS itemId, ns, name, value, lang FROM dav_properties WHERE item_id IN (${itemIds.map(() => '?').join(',')}) ORDER BY item_id, ns, name`,
      )
      .all(...itemIds);
  }

  /** How many properties an item has and their bytes. */
  usage(itemId: string): { count: number; bytes: number } {
    return this.sqlite
      .query<{ count: number; bytes: number }, [string]>(
        `SELECT count(*) AS count, coalesce(sum(${PROPERTY_BYTES}), 0) AS bytes FROM dav_properties WHERE item_id = ?`,
      )
      .get(itemId)!;
  }

  /**
   * The bytes of an account's properties beyond the first `freePerItem` of each item, live or trashed
   * (found through the trash entries, by index: the work is the account's, not the instance's).
   */
  accountBytesBeyond(accountId: string, freePerItem: number): number {
    return this.sqlite
      .query<{ bytes: number }, [number, string]>(
        `SELECT coalesce(sum(max(0, b - ?1)), 0) AS bytes FROM (
           SELECT sum(${PROPERTY_BYTES}) AS b FROM dav_properties WHERE item_id IN (
             SELECT id FROM items WHERE account_id = ?2 AND deleted_at IS NULL
             UNION ALL
             SELECT d.id FROM items r JOIN items d ON d.deleted_root_id = r.id
             WHERE r.account_id = ?2 AND r.deleted_at IS NOT NULL AND r.deleted_root_id = r.id
           ) GROUP BY item_id)`,
      )
      .get(freePerItem, accountId)!.bytes;
  }

  set(row: DavProperty): void {
    this.sqlite
      .query(
        'INSERT INTO dav_properties (item_id, ns, name, value, lang) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET value = excluded.value, lang = excluded.lang',
      )
      .run(row.itemId, row.ns, row.name, row.value, row.lang);
  }

  remove(itemId: string, ns: string, name: string): void {
    this.sqlite.query('DELETE FROM dav_properties WHERE item_id = ? AND ns = ? AND name = ?').run(itemId, ns, name);
  }

  /** Copies every property of one item to another (COPY keeps dead properties). */
  copy(fromId: string, toId: string): void {
    this.sqlite
      .query(
        'INSERT OR REPLACE INTO dav_properties (item_id, ns, name, value, lang) SELECT ?, ns, name, value, lang FROM dav_properties WHERE item_id = ?',
      )
      .run(toId, fromId);
  }
}
