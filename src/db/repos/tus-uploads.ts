import type { Database, SQLQueryBindings } from 'bun:sqlite';
import { getTableColumns } from 'drizzle-orm';
import { selectList } from '../select.ts';
import { tusUploads } from '../schema/tus-uploads.ts';

export type TusUpload = typeof tusUploads.$inferSelect;

const COLUMN_OF = getTableColumns(tusUploads) as Record<keyof TusUpload, { name: string }>;
const KEYS = Object.keys(COLUMN_OF) as Array<keyof TusUpload>;
const COLUMNS = KEYS.map((k) => `"${COLUMN_OF[k].name}"`).join(', ');
const UPLOAD = selectList(tusUploads, KEYS);

/** bun:sqlite returns blobs as Uint8Array; the row type (and the code reading it) has Buffers. */
function toRow(raw: TusUpload | null): TusUpload | null {
  if (!raw) return null;
  return { ...raw, header: Buffer.from(raw.header), tail: raw.tail === null ? null : Buffer.from(raw.tail) };
}

/**
 * The SQL of resumable uploads (`tus_uploads`), as raw cached statements: bun:sqlite finalizes those when
 * the database closes, where drizzle's unprepared ones stayed open and kept the file busy after close.
 */
export class TusUploadsRepo {
  constructor(private readonly sqlite: Database) {}

  insert(row: TusUpload): void {
    this.sqlite
      .query(`INSERT INTO tus_uploads (${COLUMNS}) VALUES (${KEYS.map(() => '?').join(', ')})`)
      .run(...(KEYS.map((k) => row[k]) as SQLQueryBindings[]));
  }

  get(id: string): TusUpload | null {
    return toRow(this.sqlite.query<TusUpload, [string]>(`SELECT ${UPLOAD} FROM tus_uploads WHERE id = ?`).get(id));
  }

  /** Bytes reserved by the account's uploads not yet completed (hot: every quota check). */
  reserved(accountId: string): number {
    return (
      this.sqlite
        .query<{ n: number }, [string]>(
          "SELECT COALESCE(SUM(length), 0) AS n FROM tus_uploads WHERE account_id = ? AND state != 'completed'",
        )
        .get(accountId)?.n ?? 0
    );
  }

  /** Bytes that uploads still receiving and not expired at `now` are yet to be sent, all accounts together. */
  promised(now: number): number {
    return this.sqlite
      .query<{ n: number }, [number]>(
        `SELECT COALESCE(SUM(length - "offset"), 0) AS n FROM tus_uploads WHERE state = 'receiving' AND expires_at >= ?`,
      )
      .get(now)!.n;
  }

  /** Records acknowledged progress (and a new expiry) of an upload still receiving. */
  progress(
    id: string,
    p: { offset: number; durableOffset: number; tail: Uint8Array | null; sealed: boolean; at: number; expiresAt: number },
  ): void {
    this.sqlite
      .query(
        `UPDATE tus_uploads SET "offset" = ?, durable_offset = ?, tail = ?, state = ?, updated_at = ?, expires_at = ?
         WHERE id = ? AND state = 'receiving'`,
      )
      .run(p.offset, p.durableOffset, p.tail, p.sealed ? 'sealed' : 'receiving', p.at, p.expiresAt, id);
  }

  /** Inside the transaction that creates the item: the reservation ends and the item is remembered. */
  completed(id: string, itemId: string, at: number, expiresAt: number): void {
    this.sqlite
      .query("UPDATE tus_uploads SET state = 'completed', item_id = ?, tail = NULL, updated_at = ?, expires_at = ? WHERE id = ?")
      .run(itemId, at, expiresAt, id);
  }

  delete(id: string): boolean {
    return this.sqlite.query('DELETE FROM tus_uploads WHERE id = ?').run(id).changes > 0;
  }

  /** Uploads whose bytes are all stored and whose item is not created yet (a crash came between). */
  sealed(limit: number): TusUpload[] {
    return this.sqlite
      .query<TusUpload, [number]>(`SELECT ${UPLOAD} FROM tus_uploads WHERE state = 'sealed' LIMIT ?`)
      .all(limit)
      .map((r) => toRow(r)!);
  }

  /** A login's uploads not completed yet. */
  unfinishedOf(loginId: string): TusUpload[] {
    return this.sqlite
      .query<TusUpload, [string]>(`SELECT ${UPLOAD} FROM tus_uploads WHERE login_id = ? AND state != 'completed'`)
      .all(loginId)
      .map((r) => toRow(r)!);
  }

  /** Uploads not completed yet that logins of `memberAccountId` send into `accountId` (a member's, into a shared folder). */
  unfinishedOfMemberIn(memberAccountId: string, accountId: string): TusUpload[] {
    return this.sqlite
      .query<TusUpload, [string, string]>(
        `SELECT ${UPLOAD} FROM tus_uploads WHERE account_id = ?2 AND state != 'completed' AND share_link_id IS NULL
            AND login_id IN (SELECT id FROM users WHERE id = ?1 OR parent_user_id = ?1)`,
      )
      .all(memberAccountId, accountId)
      .map((r) => toRow(r)!);
  }

  /** Uploads not completed yet whose login is gone (its account deleted), wherever they were going. */
  unfinishedOfGoneLogins(): TusUpload[] {
    return this.sqlite
      .query<TusUpload, []>(
        `SELECT ${UPLOAD} FROM tus_uploads t WHERE state != 'completed' AND share_link_id IS NULL
            AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = t.login_id)`,
      )
      .all()
      .map((r) => toRow(r)!);
  }

  /** Uploads past their expiry, oldest first; `unfinished` leaves out completed ones. */
  expired(now: number, limit: number, opts: { unfinished?: boolean } = {}): TusUpload[] {
    const which = opts.unfinished ? " AND state != 'completed'" : '';
    return this.sqlite
      .query<TusUpload, [number, number]>(`SELECT ${UPLOAD} FROM tus_uploads WHERE expires_at < ?${which} ORDER BY expires_at LIMIT ?`)
      .all(now, limit)
      .map((r) => toRow(r)!);
  }

  /** Unfinished uploads sent through a share link: of that link, and of that address through any link. */
  unfinishedDrops(linkId: string, ip: string): { link: number; address: number } {
    const count = (column: string, value: string) =>
      this.sqlite
        .query<{ n: number }, [string]>(`SELECT COUNT(*) AS n FROM tus_uploads WHERE ${column} = ? AND state != 'completed'`)
        .get(value)!.n;
    return { link: count('share_link_id', linkId), address: count('share_ip', ip) };
  }

  /** Unfinished uploads a login sent into an account (its own, or one it edits a folder of), share links' not counted. */
  unfinishedOfLogin(accountId: string, loginId: string): number {
    return this.sqlite
      .query<{ n: number }, [string, string]>(
        "SELECT COUNT(*) AS n FROM tus_uploads WHERE account_id = ? AND state != 'completed' AND login_id = ? AND share_link_id IS NULL",
      )
      .get(accountId, loginId)!.n;
  }

  countUnfinished(): number {
    return this.sqlite.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM tus_uploads WHERE state != 'completed'").get()!.n;
  }

  /** Of `keys`, those an upload not yet completed owns (its staged bytes, or its published object awaiting its row). */
  keysInUse(keys: readonly string[]): Set<string> {
    if (keys.length === 0) return new Set();
    const rows = this.sqlite
      .query<{ key: string }, [string]>(
        "SELECT storage_key AS key FROM tus_uploads WHERE state != 'completed' AND storage_key IN (SELECT value FROM json_each(?))",
      )
      .all(JSON.stringify(keys));
    return new Set(rows.map((r) => r.key));
  }
}
