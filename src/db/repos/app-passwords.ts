import type { Database } from 'bun:sqlite';
import type { appPasswords } from '../schema/dav.ts';

export type AppPassword = typeof appPasswords.$inferSelect;

const COLUMNS =
  'id, user_id AS userId, name, secret_hash AS secretHash, created_at AS createdAt, last_used_at AS lastUsedAt, last_ip AS lastIp';

/** The SQL of app passwords (`app_passwords`). */
export class AppPasswordsRepo {
  constructor(private readonly sqlite: Database) {}

  /**
   * Adds the password unless its login is gone (deleted meanwhile) or already holds `max`, checked in the same
   * statement so requests confirmed together cannot pass it: 'gone' or 'full' then, and nothing is written.
   */
  insert(row: AppPassword, max: number): 'added' | 'gone' | 'full' {
    const added =
      this.sqlite
        .query(
          'INSERT INTO app_passwords (id, user_id, name, secret_hash, created_at, last_used_at, last_ip) ' +
            'SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM users WHERE id = ?) ' +
            'AND (SELECT count(*) FROM app_passwords WHERE user_id = ?) < ?',
        )
        .run(row.id, row.userId, row.name, row.secretHash, row.createdAt, row.lastUsedAt, row.lastIp, row.userId, row.userId, max)
        .changes === 1;
    if (added) return 'added';
    return this.sqlite.query('SELECT 1 FROM users WHERE id = ?').get(row.userId) ? 'full' : 'gone';
  }

  bySecretHash(hash: string): AppPassword | null {
    return this.sqlite.query<AppPassword, [string]>(`SELECT ${COLUMNS} FROM app_passwords WHERE secret_hash = ?`).get(hash) ?? null;
  }

  list(userId: string): AppPassword[] {
    return this.sqlite
      .query<AppPassword, [string]>(`SELECT ${COLUMNS} FROM app_passwords WHERE user_id = ? ORDER BY created_at DESC, id`)
      .all(userId);
  }

  /** Whether the login still has this app password (not revoked). */
  has(userId: string, id: string): boolean {
    return (
      this.sqlite
        .query<{ one: number }, [string, string]>('SELECT 1 AS one FROM app_passwords WHERE user_id = ? AND id = ?')
        .get(userId, id) !== null
    );
  }

  count(userId: string): number {
    return this.sqlite.query<{ n: number }, [string]>('SELECT count(*) AS n FROM app_passwords WHERE user_id = ?').get(userId)!.n;
  }

  touch(id: string, at: number, ip: string): void {
    this.sqlite.query('UPDATE app_passwords SET last_used_at = ?, last_ip = ? WHERE id = ?').run(at, ip, id);
  }

  /** Deletes one password of the login; false when it has none with that id. */
  delete(userId: string, id: string): boolean {
    return this.sqlite.query('DELETE FROM app_passwords WHERE user_id = ? AND id = ?').run(userId, id).changes > 0;
  }

  deleteAll(userId: string): number {
    return this.sqlite.query('DELETE FROM app_passwords WHERE user_id = ?').run(userId).changes;
  }
}
