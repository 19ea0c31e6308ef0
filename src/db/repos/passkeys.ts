import type { Database } from 'bun:sqlite';
import type { passkeys } from '../schema/passkeys.ts';

export type Passkey = typeof passkeys.$inferSelect;

const COLUMNS =
  'id, user_id AS userId, credential_id AS credentialId, public_key AS publicKey, counter, transports, name, ' +
  'backed_up AS backedUp, created_at AS createdAt, last_used_at AS lastUsedAt';

type Row = Omit<Passkey, 'backedUp'> & { backedUp: number };
const fromRow = (row: Row): Passkey => ({ ...row, backedUp: row.backedUp === 1 });

/** The SQL of passkeys (`passkeys`). */
export class PasskeysRepo {
  constructor(private readonly sqlite: Database) {}

  /**
   * Adds the passkey unless its login is gone (deleted meanwhile) or already holds `max`, checked in the same
   * statement so ceremonies finishing together cannot pass it: 'gone' or 'full' then, and nothing is written.
   */
  insert(row: Passkey, max: number): 'added' | 'gone' | 'full' {
    const added =
      this.sqlite
        .query(
          'INSERT INTO passkeys (id, user_id, credential_id, public_key, counter, transports, name, backed_up, created_at, last_used_at) ' +
            'SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM users WHERE id = ?) ' +
            'AND (SELECT count(*) FROM passkeys WHERE user_id = ?) < ?',
        )
        .run(
          row.id,
          row.userId,
          row.credentialId,
          row.publicKey,
          row.counter,
          row.transports,
          row.name,
          row.backedUp ? 1 : 0,
          row.createdAt,
          row.lastUsedAt,
          row.userId,
          row.userId,
          max,
        ).changes === 1;
    if (added) return 'added';
    return this.sqlite.query('SELECT 1 FROM users WHERE id = ?').get(row.userId) ? 'full' : 'gone';
  }

  byCredentialId(credentialId: string): Passkey | null {
    const row = this.sqlite.query<Row, [string]>(`SELECT ${COLUMNS} FROM passkeys WHERE credential_id = ?`).get(credentialId);
    return row ? fromRow(row) : null;
  }

  list(userId: string): Passkey[] {
    return this.sqlite
      .query<Row, [string]>(`SELECT ${COLUMNS} FROM passkeys WHERE user_id = ? ORDER BY created_at DESC, id`)
      .all(userId)
      .map(fromRow);
  }

  count(userId: string): number {
    return this.sqlite.query<{ n: number }, [string]>('SELECT count(*) AS n FROM passkeys WHERE user_id = ?').get(userId)!.n;
  }

  /**
   * Records a use: the new counter and the time, only while the stored counter is still the one the assertion
   * was checked against, so two racing uses of one signature cannot both pass. False when another won.
   */
  recordUse(id: string, expectedCounter: number, counter: number, at: number): boolean {
    return (
      this.sqlite
        .query('UPDATE passkeys SET counter = ?, last_used_at = ? WHERE id = ? AND counter = ?')
        .run(counter, at, id, expectedCounter).changes > 0
    );
  }

  /** Deletes one passkey of the login; null when it has none with that id. */
  delete(userId: string, id: string): Passkey | null {
    const row = this.sqlite
      .query<Row, [string, string]>(`DELETE FROM passkeys WHERE user_id = ? AND id = ? RETURNING ${COLUMNS}`)
      .get(userId, id);
    return row ? fromRow(row) : null;
  }

  deleteAll(userId: string): number {
    return this.sqlite.query('DELETE FROM passkeys WHERE user_id = ?').run(userId).changes;
  }
}
