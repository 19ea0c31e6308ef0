import type { Database } from 'bun:sqlite';
import { invitations } from '../schema/invitations.ts';
import { changesOf, selectList } from '../select.ts';

export type Invitation = typeof invitations.$inferSelect;
type NewInvitation = Omit<Invitation, 'usedAt' | 'userId'>;

const INVITATION = selectList(invitations, [
  'id',
  'tokenHash',
  'email',
  'emailKey',
  'name',
  'storageLimit',
  'createdBy',
  'createdAt',
  'expiresAt',
  'usedAt',
  'userId',
]);

/** The SQL of the admin's invitations. */
export class InvitationsRepo {
  constructor(private readonly sqlite: Database) {}

  insert(row: NewInvitation): void {
    this.sqlite
      .query(
        `INSERT INTO invitations (id, token_hash, email, email_key, name, storage_limit, created_by, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(row.id, row.tokenHash, row.email, row.emailKey, row.name, row.storageLimit, row.createdBy, row.createdAt, row.expiresAt);
  }

  byTokenHash(tokenHash: string): Invitation | null {
    return this.sqlite.query<Invitation, [string]>(`SELECT ${INVITATION} FROM invitations WHERE token_hash = ?`).get(tokenHash);
  }

  /** Unused and unexpired invitations, newest first. */
  pending(now: number): Invitation[] {
    return this.sqlite
      .query<Invitation, [number]>(
        `SELECT ${INVITATION} FROM invitations WHERE used_at IS NULL AND expires_at > ? ORDER BY created_at DESC, id`,
      )
      .all(now);
  }

  /** Whether an unused, unexpired invitation is out for this address. */
  pendingFor(emailKey: string, now: number): boolean {
    return (
      this.sqlite
        .query('SELECT 1 FROM invitations WHERE email_key = ? AND used_at IS NULL AND expires_at > ? LIMIT 1')
        .get(emailKey, now) !== null
    );
  }

  /** Marks it used by `userId`, only while it is still unused and unexpired: true when this call took it. */
  claim(id: string, userId: string, now: number): boolean {
    return (
      changesOf(
        this.sqlite
          .query('UPDATE invitations SET used_at = ?, user_id = ? WHERE id = ? AND used_at IS NULL AND expires_at > ?')
          .run(now, userId, id, now),
      ) === 1
    );
  }

  /** Withdraws an unused invitation: true when one was deleted. */
  deleteUnused(id: string): boolean {
    return changesOf(this.sqlite.query('DELETE FROM invitations WHERE id = ? AND used_at IS NULL').run(id)) === 1;
  }
}
