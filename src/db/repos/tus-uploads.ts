import { and, eq, inArray, lt, ne } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { changesOf } from '../select.ts';
import { tusUploads } from '../schema/tus-uploads.ts';

export type TusUpload = typeof tusUploads.$inferSelect;

/** The SQL of resumable uploads (`tus_uploads`). */
export class TusUploadsRepo {
  constructor(private readonly db: Db) {}

  insert(row: TusUpload): void {
    this.db.insert(tusUploads).values(row).run();
  }

  get(id: string): TusUpload | null {
    return this.db.select().from(tusUploads).where(eq(tusUploads.id, id)).get() ?? null;
  }

  /** Bytes reserved by the account's uploads not yet completed (hot: every quota check). */
  reserved(accountId: string): number {
    return (
      this.db.$client
        .query<{ n: number }, [string]>(
          "SELECT COALESCE(SUM(length), 0) AS n FROM tus_uploads WHERE account_id = ? AND state != 'completed'",
        )
        .get(accountId)?.n ?? 0
    );
  }

  /** Records acknowledged progress (and a new expiry) of an upload still receiving. */
  progress(id: string, p: { offset: number; tail: Buffer | null; sealed: boolean; at: number; expiresAt: number }): void {
    this.db
      .update(tusUploads)
      .set({ offset: p.offset, tail: p.tail, state: p.sealed ? 'sealed' : 'receiving', updatedAt: p.at, expiresAt: p.expiresAt })
      .where(and(eq(tusUploads.id, id), eq(tusUploads.state, 'receiving')))
      .run();
  }

  /** Inside the transaction that creates the item: the reservation ends and the item is remembered. */
  completed(id: string, itemId: string, at: number, expiresAt: number): void {
    this.db.update(tusUploads).set({ state: 'completed', itemId, tail: null, updatedAt: at, expiresAt }).where(eq(tusUploads.id, id)).run();
  }

  delete(id: string): boolean {
    return changesOf(this.db.delete(tusUploads).where(eq(tusUploads.id, id)).run()) > 0;
  }

  /** Uploads whose bytes are all stored and whose item is not created yet (a crash came between). */
  sealed(limit: number): TusUpload[] {
    return this.db.select().from(tusUploads).where(eq(tusUploads.state, 'sealed')).limit(limit).all();
  }

  /** Uploads past their expiry, oldest first; `unfinished` leaves out completed ones. */
  expired(now: number, limit: number, opts: { unfinished?: boolean } = {}): TusUpload[] {
    const past = lt(tusUploads.expiresAt, now);
    return this.db
      .select()
      .from(tusUploads)
      .where(opts.unfinished ? and(past, ne(tusUploads.state, 'completed')) : past)
      .orderBy(tusUploads.expiresAt)
      .limit(limit)
      .all();
  }

  countUnfinished(): number {
    return this.db.$client.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM tus_uploads WHERE state != 'completed'").get()!.n;
  }

  /** Of `keys`, those an upload not yet completed owns (its staged bytes, or its published object awaiting its row). */
  keysInUse(keys: readonly string[]): Set<string> {
    if (keys.length === 0) return new Set();
    const rows = this.db
      .select({ key: tusUploads.storageKey })
      .from(tusUploads)
      .where(and(inArray(tusUploads.storageKey, [...keys]), ne(tusUploads.state, 'completed')))
      .all();
    return new Set(rows.map((r) => r.key));
  }
}
