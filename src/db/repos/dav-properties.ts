import type { Database } from 'bun:sqlite';
import type { davProperties } from '../schema/dav.ts';

export type DavProperty = typeof davProperties.$inferSelect;

/** The SQL of WebDAV dead properties (`dav_properties`). */
export class DavPropertiesRepo {
  constructor(private readonly sqlite: Database) {}

  /** The properties of the given items, in item order then namespace and name. */
  ofItems(itemIds: readonly string[]): DavProperty[] {
    if (itemIds.length === 0) return [];
    return this.sqlite
      .query<DavProperty, string[]>(
        `SELECT item_id AS itemId, ns, name, value FROM dav_properties WHERE item_id IN (${itemIds.map(() => '?').join(',')}) ORDER BY item_id, ns, name`,
      )
      .all(...itemIds);
  }

  set(row: DavProperty): void {
    this.sqlite
      .query('INSERT INTO dav_properties (item_id, ns, name, value) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET value = excluded.value')
      .run(row.itemId, row.ns, row.name, row.value);
  }

  remove(itemId: string, ns: string, name: string): void {
    this.sqlite.query('DELETE FROM dav_properties WHERE item_id = ? AND ns = ? AND name = ?').run(itemId, ns, name);
  }

  /** Copies every property of one item to another (COPY keeps dead properties). */
  copy(fromId: string, toId: string): void {
    this.sqlite
      .query(
        'INSERT OR REPLACE INTO dav_properties (item_id, ns, name, value) SELECT ?, ns, name, value FROM dav_properties WHERE item_id = ?',
      )
      .run(toId, fromId);
  }
}
