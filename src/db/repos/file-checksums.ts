import type { Database } from 'bun:sqlite';

/** The SQL of files' known SHA1s (`file_checksums`). */
export class FileChecksumsRepo {
  constructor(private readonly sqlite: Database) {}

  /** Records the SHA1 of the content stored under `storageKey` (replacing what the file had). */
  set(itemId: string, storageKey: string, sha1: string): void {
    this.sqlite
      .query(
        `INSERT INTO file_checksums (item_id, storage_key, sha1) VALUES (?, ?, ?)
         ON CONFLICT (item_id) DO UPDATE SET storage_key = excluded.storage_key, sha1 = excluded.sha1`,
      )
      .run(itemId, storageKey, sha1);
  }

  /**
   * The SHA1 `from` has for its content under `fromKey`, recorded for `to` under `toKey`: a byte copy of that
   * content (a copy's object, or the object a MOVE hands over). Nothing when `from` has none for that content.
   */
  carry(from: { id: string; storageKey: string }, to: { id: string; storageKey: string }): void {
    this.sqlite
      .query(
        `INSERT INTO file_checksums (item_id, storage_key, sha1)
         SELECT ?, ?, sha1 FROM file_checksums WHERE item_id = ? AND storage_key = ?
         ON CONFLICT (item_id) DO UPDATE SET storage_key = excluded.storage_key, sha1 = excluded.sha1`,
      )
      .run(to.id, to.storageKey, from.id, from.storageKey);
  }

  /** The SHA1s of those of `ids` whose current content is the one it was recorded for. */
  ofItems(ids: readonly string[]): Map<string, string> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const rows = this.sqlite
      .query<{ itemId: string; sha1: string }, [string]>(
        `SELECT c.item_id AS itemId, c.sha1 FROM file_checksums c JOIN items i ON i.id = c.item_id AND i.storage_key = c.storage_key
         WHERE c.item_id IN (SELECT value FROM json_each(?))`,
      )
      .all(JSON.stringify(ids));
    for (const r of rows) out.set(r.itemId, r.sha1);
    return out;
  }
}
