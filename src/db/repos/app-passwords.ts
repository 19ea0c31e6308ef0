import type { Database } from 'bun:sqlite';
import { type CredentialInsert, insertCredential } from './login-credentials.ts';
import type { appPasswords } from '../schema/dav.ts';

export type AppPassword = typeof appPasswords.$inferSelect;

const COLUMNS =
  'id, user_id AS userId, name, secret_hash AS secretHash, created_at AS createdAt, last_used_at AS lastUsedAt, last_ip AS lastIp';

/** The SQL of app passwords (`app_passwords`). */
export class AppPasswordsRepo {
  constructor(private readonly sqlite: Database) {}

  /** Adds the password unless its login is gone or already holds `max` (insertCredential). */
  insert(row: AppPassword, max: number): CredentialInsert {
    return insertCredential(
      this.sqlite,
      'app_passwords',
      {
        id: row.id,
        user_id: row.userId,
        name: row.name,
        secret_hash: row.secretHash,
        created_at: row.createdAt,
        last_used_at: row.lastUsedAt,
        last_ip: row.lastIp,
      },
      max,
    );
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
