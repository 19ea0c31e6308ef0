import type { Database, SQLQueryBindings } from 'bun:sqlite';

/** What adding a credential of a login came to: added, or nothing written because the login is gone or holds its most. */
export type CredentialInsert = 'added' | 'gone' | 'full';

/**
 * Adds a login's credential (an app password, a passkey; `row` by column) unless the login is gone (deleted meanwhile)
 * or already holds `max`, checked in the same statement so requests finishing together cannot pass it.
 */
export function insertCredential(
  sqlite: Database,
  table: 'app_passwords' | 'passkeys',
  row: { user_id: string } & Record<string, SQLQueryBindings>,
  max: number,
): CredentialInsert {
  const columns = Object.keys(row);
  const added =
    sqlite
      .query(
        `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${columns.map(() => '?').join(', ')} ` +
          `WHERE EXISTS (SELECT 1 FROM users WHERE id = ?) AND (SELECT count(*) FROM ${table} WHERE user_id = ?) < ?`,
      )
      .run(...Object.values(row), row.user_id, row.user_id, max).changes === 1;
  if (added) return 'added';
  return sqlite.query('SELECT 1 FROM users WHERE id = ?').get(row.user_id) ? 'full' : 'gone';
}
