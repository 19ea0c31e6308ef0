import type { Database } from 'bun:sqlite';

/** The SQL of objects being written before their row exists (`upload_intents`). */
export class UploadIntentsRepo {
  constructor(private readonly sqlite: Database) {}

  record(key: string, at: number): void {
    this.sqlite.query('INSERT OR IGNORE INTO upload_intents (storage_key, created_at) VALUES (?, ?)').run(key, at);
  }

  clear(key: string): void {
    this.sqlite.query('DELETE FROM upload_intents WHERE storage_key = ?').run(key);
  }

  clearMany(keys: readonly string[]): void {
    this.sqlite.query('DELETE FROM upload_intents WHERE storage_key IN (SELECT value FROM json_each(?))').run(JSON.stringify(keys));
  }

  /** Intents in key order after `afterKey`, each with whether a row points at its object by now. */
  page(afterKey: string, limit: number): Array<{ storageKey: string; referenced: number }> {
    return this.sqlite
      .query<{ storageKey: string; referenced: number }, [string, number]>(
        `SELECT u.storage_key AS storageKey, EXISTS (SELECT 1 FROM items i WHERE i.storage_key = u.storage_key) AS referenced
         FROM upload_intents u WHERE u.storage_key > ? ORDER BY u.storage_key LIMIT ?`,
      )
      .all(afterKey, limit);
  }
}
