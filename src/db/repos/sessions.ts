import { and, desc, asc, count, eq, lt, ne } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { sessions } from '../schema/users.ts';
import { selectList, changesOf } from '../select.ts';

export type Session = typeof sessions.$inferSelect;
/** What every request reads of its session: one primary-key lookup. */
export type AuthSession = Pick<Session, 'lastActivityAt' | 'ipAddress'>;

const AUTH = selectList(sessions, ['lastActivityAt', 'ipAddress']);

/** The SQL of sign-in sessions (`sessions`). */
export class SessionsRepo {
  constructor(private readonly db: Db) {}

  insert(row: Session): void {
    this.db.insert(sessions).values(row).run();
  }

  /** Hot: every authenticated request. */
  authSession(id: string, userId: string): AuthSession | null {
    return this.db.$client
      .query<AuthSession, [string, string]>(`SELECT ${AUTH} FROM sessions WHERE id = ? AND user_id = ?`)
      .get(id, userId);
  }

  /** When the session was signed in, or null when it is gone. */
  startedAt(id: string, userId: string): number | null {
    return (
      this.db.$client
        .query<{ createdAt: number }, [string, string]>('SELECT created_at AS createdAt FROM sessions WHERE id = ? AND user_id = ?')
        .get(id, userId)?.createdAt ?? null
    );
  }

  touch(id: string, at: number, ip: string): void {
    this.db.$client.query('UPDATE sessions SET last_activity_at = ?, ip_address = ? WHERE id = ?').run(at, ip, id);
  }

  delete(userId: string, id: string): boolean {
    return (
      changesOf(
        this.db
          .delete(sessions)
          .where(and(eq(sessions.id, id), eq(sessions.userId, userId)))
          .run(),
      ) > 0
    );
  }

  deleteAll(userId: string): number {
    return changesOf(this.db.delete(sessions).where(eq(sessions.userId, userId)).run());
  }

  deleteOthers(userId: string, keepId: string): number {
    return changesOf(
      this.db
        .delete(sessions)
        .where(and(eq(sessions.userId, userId), ne(sessions.id, keepId)))
        .run(),
    );
  }

  countOthers(userId: string, exceptId: string): number {
    return this.db
      .select({ n: count() })
      .from(sessions)
      .where(and(eq(sessions.userId, userId), ne(sessions.id, exceptId)))
      .get()!.n;
  }

  /** The login's `limit` sessions used last, most recent first. */
  list(userId: string, limit: number): Session[] {
    return this.db
      .select()
      .from(sessions)
      .where(eq(sessions.userId, userId))
      .orderBy(desc(sessions.lastActivityAt), asc(sessions.id))
      .limit(limit)
      .all();
  }

  /** Deletes the login's sessions past the `keep` used last; their ids. */
  deleteBeyond(userId: string, keep: number): string[] {
    return this.db.$client
      .query<{ id: string }, [string, number]>(
        `DELETE FROM sessions WHERE id IN (
           SELECT id FROM sessions WHERE user_id = ?1 ORDER BY last_activity_at DESC, id LIMIT -1 OFFSET ?2
         ) RETURNING id`,
      )
      .all(userId, keep)
      .map((r) => r.id);
  }

  deleteInactiveSince(cutoff: number): number {
    return changesOf(this.db.delete(sessions).where(lt(sessions.lastActivityAt, cutoff)).run());
  }
}
