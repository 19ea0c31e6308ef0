import type { Database } from 'bun:sqlite';
import { documentKeys } from '../schema/docserver.ts';
import { deleteInBatches, selectList } from '../select.ts';

export type DocumentKey = Omit<typeof documentKeys.$inferSelect, 'createdAt' | 'updatedAt'>;

const KEY = selectList(documentKeys, ['key', 'itemId', 'accountId', 'storageKey', 'editors', 'closedAt']);

/** The SQL of document-server sessions: their keys (`document_keys`) and the versions saved under them (`document_saves`). */
export class DocserverRepo {
  constructor(private readonly sqlite: Database) {}

  /** The open key of a file's content, creating `candidate` as that key when there is none. */
  openKey(candidate: Omit<DocumentKey, 'editors' | 'closedAt'>, at: number): DocumentKey {
    this.sqlite
      .query(
        `INSERT INTO document_keys (key, item_id, account_id, storage_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
      )
      .run(candidate.key, candidate.itemId, candidate.accountId, candidate.storageKey, at, at);
    return this.sqlite
      .query<DocumentKey, [string, string]>(`SELECT ${KEY} FROM document_keys WHERE item_id = ? AND storage_key = ? AND closed_at IS NULL`)
      .get(candidate.itemId, candidate.storageKey)!;
  }

  get(key: string): DocumentKey | null {
    return this.sqlite.query<DocumentKey, [string]>(`SELECT ${KEY} FROM document_keys WHERE key = ?`).get(key);
  }

  setEditors(key: string, editors: string, at: number): void {
    this.sqlite.query('UPDATE document_keys SET editors = ?, updated_at = ? WHERE key = ?').run(editors, at, key);
  }

  /** The session's content is now `storageKey` (a save committed under it). */
  moveTo(key: string, storageKey: string, at: number): void {
    this.sqlite.query('UPDATE document_keys SET storage_key = ?, updated_at = ? WHERE key = ?').run(storageKey, at, key);
  }

  /** The session ended: the next opening of the file gets a new key. */
  close(key: string, at: number): void {
    this.sqlite.query('UPDATE document_keys SET closed_at = ?, updated_at = ? WHERE key = ? AND closed_at IS NULL').run(at, at, key);
  }

  isSaved(key: string, url: string): boolean {
    return this.sqlite.query('SELECT 1 FROM document_saves WHERE key = ? AND url = ?').get(key, url) !== null;
  }

  /** Records a save of `url` under `key`; false when it was saved already. */
  recordSave(key: string, url: string, at: number): boolean {
    return (
      this.sqlite.query('INSERT INTO document_saves (key, url, saved_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(key, url, at)
        .changes > 0
    );
  }

  /** Keys untouched since `before` whose session has no auto-save schedule left (closed, or never opened in an editor). */
  purgeIdleBefore(before: number, schedulePrefix: string, batch = 500): number {
    return deleteInBatches(
      batch,
      (limit) =>
        this.sqlite
          .query(
            `DELETE FROM document_keys WHERE key IN (
               SELECT k.key FROM document_keys k
               WHERE k.updated_at < ? AND NOT EXISTS (SELECT 1 FROM schedules s WHERE s.name = ? || k.key)
               LIMIT ?)`,
          )
          .run(before, schedulePrefix, limit).changes,
    );
  }
}
