import type { Database } from 'bun:sqlite';
import { type CredentialInsert, insertCredential } from './login-credentials.ts';
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

  /** Adds the passkey unless its login is gone or already holds `max` (insertCredential). */
  insert(row: Passkey, max: number): CredentialInsert {
    return insertCredential(
      this.sqlite,
      'passkeys',
      {
        id: row.id,
        user_id: row.userId,
        credential_id: row.credentialId,
        public_key: row.publicKey,
        counter: row.counter,
        transports: row.transports,
        name: row.name,
        backed_up: row.backedUp ? 1 : 0,
        created_at: row.createdAt,
        last_used_at: row.lastUsedAt,
      },
      max,
    );
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
