import type { Database } from 'bun:sqlite';
import { closeDatabase, openDatabase } from '../client.ts';
import { AttemptsRepo } from './attempts.ts';

/** unfinished_attempts' purpose for a document's extraction (docs/search.md: a document that kills the process). */
export const EXTRACTION_TRIES = 'content extraction';

/** A document's subject in unfinished_attempts: the file and the content it is read from (new content is tried afresh). */
export function extractionSubject(file: Pick<PendingFile, 'seq' | 'storageKey'>): string {
  return `${file.seq}:${file.storageKey}`;
}

/** `match` limited to the text of the given accounts' rows. */
function scoped(accountIds: readonly string[], match: string): string {
  return `account : (${accountIds.map(accountToken).join(' OR ')}) AND body : (${match})`;
}

/** A file waiting for extraction, with what reading it needs. */
export interface PendingFile {
  seq: number;
  id: string;
  accountId: string;
  name: string;
  size: number;
  /** What the text is of: the stored object's key, or a library file's content key (its bytes are then on the host). */
  storageKey: string | null;
  wrappedKey: string | null;
  library: boolean;
  optedOut: boolean;
}

/** The key of an item's current content: its stored object, or (a library file) its entry's content key. */
const CONTENT_KEY = 'coalesce(i.storage_key, (SELECT e.content_key FROM library_entries e WHERE e.item_id = i.id))';

export interface ContentHit {
  id: string;
  seq: number;
  accountId: string;
  /** bm25, lower is better; comparable across accounts (one index). */
  score: number;
}

export interface ContentProgress {
  indexed: number;
  pending: number;
  textBytes: number;
}

export type DocState = 'indexed' | 'empty' | 'skipped' | 'failed';

/** What extraction made of one pending file, for recordMany. */
export interface IndexedDoc {
  file: PendingFile;
  state: DocState;
  /** UTF-8, as extraction transferred it. */
  text: Uint8Array;
}

// Newest matches ranked per query: past this many, older matches are left out rather than every query slowing down.
const RANKED_MATCHES = 1000;

/** The one token of `content_fts.account` naming an account (hex, so the tokenizer never splits it). */
function accountToken(accountId: string): string {
  return `a${Buffer.from(accountId).toString('hex')}`;
}

// Private-use characters mark a match in FTS5's snippet(), so the text can be escaped before they become <mark>.
export const MARK_OPEN = '\uE000';
export const MARK_CLOSE = '\uE001';

/** The SQL of content search: the FTS5 table `content_fts`, what was indexed (`content_docs`) and what waits (`content_pending`). */
export class ContentRepo {
  constructor(private readonly sqlite: Database) {}

  /** Up to `limit` files in the queue, oldest first, each with its account's opt-out. */
  nextPending(limit: number): PendingFile[] {
    return this.sqlite
      .query<Omit<PendingFile, 'optedOut' | 'library'> & { optedOut: number; library: number }, [number]>(
        `SELECT p.seq, i.id, i.account_id AS accountId, i.name, i.size, coalesce(i.storage_key, e.content_key) AS storageKey,
           i.wrapped_key AS wrappedKey, i.storage_key IS NULL AND e.content_key IS NOT NULL AS library,
           coalesce(u.content_search_opt_out, 0) AS optedOut
         FROM content_pending p JOIN items i ON i.seq = p.seq LEFT JOIN users u ON u.id = i.account_id
         LEFT JOIN library_entries e ON e.item_id = i.id
         ORDER BY p.seq LIMIT ?`,
      )
      .all(limit)
      .map((r) => ({ ...r, library: r.library === 1, optedOut: r.optedOut === 1 }));
  }

  /** Records one file's text (or its absence) and takes it off the queue; not when its object or name changed meanwhile (it stays queued) or it left the queue. */
  record(file: PendingFile, state: DocState, text: Uint8Array, at: number): boolean {
    return this.sqlite.transaction(() => this.recordIn(file, state, text, at)).immediate();
  }

  /** record() of several files in one transaction; returns how many were recorded. */
  recordMany(docs: readonly IndexedDoc[], at: number): number {
    return this.sqlite.transaction(() => docs.filter((d) => this.recordIn(d.file, d.state, d.text, at)).length).immediate();
  }

  /** record() inside the caller's transaction: prepared once per connection, no savepoint of its own per file. */
  private recordIn(file: PendingFile, state: DocState, text: Uint8Array, at: number): boolean {
    const current = this.sqlite
      .query<{ key: string | null; name: string }, [number]>(`SELECT ${CONTENT_KEY} AS key, i.name FROM items i WHERE i.seq = ?`)
      .get(file.seq);
    // Renamed meanwhile: its extension may change how it is read, so it stays queued and is read under the new name.
    if (!current || current.key !== file.storageKey || current.name !== file.name) return false;
    // No longer queued: content search was turned off or the account opted out while the text was extracted.
    if (this.sqlite.query('DELETE FROM content_pending WHERE seq = ?').run(file.seq).changes === 0) return false;
    this.sqlite.query('DELETE FROM content_fts WHERE rowid = ?').run(file.seq);
    // The UTF-8 bytes bound as they came and read as text: no string is made of them in this thread.
    if (text.byteLength > 0)
      this.sqlite
        .query('INSERT INTO content_fts (rowid, body, account) VALUES (?, CAST(? AS TEXT), ?)')
        .run(file.seq, text, accountToken(file.accountId));
    this.sqlite
      .query(
        `INSERT INTO content_docs (seq, account_id, storage_key, state, text_bytes, indexed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (seq) DO UPDATE SET storage_key = ?3, state = ?4, text_bytes = ?5, indexed_at = ?6`,
      )
      .run(file.seq, file.accountId, file.storageKey, state, text.byteLength, at);
    return true;
  }

  /** One bounded step of merging the index's segments (at most `pages` pages), in its own short transaction. */
  mergeSome(pages: number): void {
    this.sqlite.query(`INSERT INTO content_fts (content_fts, rank) VALUES ('merge', ?)`).run(pages);
  }

  dropPending(seq: number): void {
    this.sqlite.run('DELETE FROM content_pending WHERE seq = ?', [seq]);
  }

  /**
   * Queues files after `afterSeq` that have no current text (never indexed, or indexed from another object),
   * of accounts that did not opt out, `accountId`'s only when given, every file with `all`; returns the last seq looked at, or null at the end.
   */
  queueMissing(afterSeq: number, batch: number, opts: { accountId?: string; all?: boolean } = {}): number | null {
    const last = this.sqlite
      .query<{ seq: number | null }, [number, number]>(
        `SELECT max(seq) AS seq FROM (SELECT seq FROM items WHERE seq > ? AND type = 'file' ORDER BY seq LIMIT ?)`,
      )
      .get(afterSeq, batch)?.seq;
    if (last === null || last === undefined) return null;
    this.sqlite.run(
      `INSERT OR IGNORE INTO content_pending (seq)
       SELECT i.seq FROM items i
       WHERE i.seq > ?1 AND i.seq <= ?2 AND i.type = 'file' AND (?3 IS NULL OR i.account_id = ?3)
         AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = i.account_id AND u.content_search_opt_out = 1)
         AND (?4 OR NOT EXISTS (SELECT 1 FROM content_docs d WHERE d.seq = i.seq AND d.storage_key IS ${CONTENT_KEY}))`,
      [afterSeq, last, opts.accountId ?? null, opts.all === true],
    );
    return last;
  }

  /** Forgets what was indexed of one account (all when omitted), so a backfill extracts it again. */
  forget(accountId?: string): void {
    this.sqlite
      .transaction(() => {
        const where = accountId === undefined ? '' : 'WHERE account_id = ?';
        const args = accountId === undefined ? [] : [accountId];
        this.sqlite.run(`DELETE FROM content_fts WHERE rowid IN (SELECT seq FROM content_docs ${where})`, args);
        this.sqlite.run(`DELETE FROM content_docs ${where}`, args);
      })
      .immediate();
  }

  /** Deletes the whole index and queue (content search turned off), keeping the database file's pages for reuse. */
  clearAll(): void {
    this.sqlite
      .transaction(() => {
        this.sqlite.run('DELETE FROM content_fts');
        this.sqlite.run('DELETE FROM content_docs');
        this.sqlite.run('DELETE FROM content_pending');
      })
      .immediate();
  }

  /** Deletes one account's rows (it opted out). */
  clearAccount(accountId: string): void {
    this.sqlite
      .transaction(() => {
        this.forget(accountId);
        this.sqlite.run('DELETE FROM content_pending WHERE seq IN (SELECT seq FROM items WHERE account_id = ?)', [accountId]);
      })
      .immediate();
  }

  isEmpty(): boolean {
    return (
      this.sqlite.query('SELECT 1 FROM content_docs LIMIT 1').get() === null &&
      this.sqlite.query('SELECT 1 FROM content_pending LIMIT 1').get() === null
    );
  }

  progress(): ContentProgress {
    const docs = this.sqlite
      .query<{ n: number; bytes: number | null }, []>('SELECT count(*) AS n, sum(text_bytes) AS bytes FROM content_docs')
      .get();
    const pending = this.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM content_pending').get();
    return { indexed: docs?.n ?? 0, pending: pending?.n ?? 0, textBytes: docs?.bytes ?? 0 };
  }

  /** Rows of the index an account holds (tests and the opt-out check that they are gone). */
  accountRows(accountId: string): number {
    return (
      this.sqlite
        .query<{ n: number }, [string]>(`SELECT count(*) AS n FROM content_fts WHERE rowid IN (SELECT seq FROM items WHERE account_id = ?)`)
        .get(accountId)?.n ?? 0
    );
  }

  /**
   * Live files of the accounts whose text matches the FTS5 expression `match`, best first (bm25 over the text
   * column). Ranking is bounded: only the newest RANKED_MATCHES matches of these accounts are ranked.
   */
  search(accountIds: readonly string[], match: string, limit: number): ContentHit[] {
    return this.sqlite
      .query<ContentHit, [string, number, string, number]>(
        `SELECT i.id, i.seq, i.account_id AS accountId, f.score FROM (
           SELECT rowid AS seq, bm25(content_fts, 1, 0) AS score FROM content_fts WHERE content_fts MATCH ? ORDER BY rowid DESC LIMIT ?
         ) f JOIN items i ON i.seq = f.seq
         WHERE i.account_id IN (SELECT value FROM json_each(?)) AND i.deleted_at IS NULL
         ORDER BY f.score LIMIT ?`,
      )
      .all(scoped(accountIds, match), RANKED_MATCHES, JSON.stringify(accountIds), limit);
  }

  /** snippet() of each seq (rows of the given accounts) for `match`, matches between MARK_OPEN and MARK_CLOSE. */
  snippets(accountIds: readonly string[], match: string, seqs: readonly number[], tokens: number): Map<number, string> {
    if (seqs.length === 0) return new Map();
    const rows = this.sqlite
      .query<{ seq: number; snippet: string }, [string, string, string, ...number[]]>(
        `SELECT rowid AS seq, snippet(content_fts, 0, ?, ?, '…', ${tokens}) AS snippet FROM content_fts
         WHERE content_fts MATCH ? AND rowid IN (${seqs.map(() => '?').join(',')})`,
      )
      .all(MARK_OPEN, MARK_CLOSE, scoped(accountIds, match), ...seqs);
    return new Map(rows.map((r) => [r.seq, r.snippet]));
  }
}

/** A connection of its own to the database file, for the index writer thread (services/search/index-writer.ts). */
export function openContentRepo(file: string): {
  repo: ContentRepo;
  attempts: AttemptsRepo;
  /** Runs `work` in one write transaction (BEGIN IMMEDIATE) on this connection. */
  inTransaction<T>(work: () => T): T;
  close(): void;
} {
  const db = openDatabase(file);
  return {
    repo: new ContentRepo(db.$client),
    attempts: new AttemptsRepo(db.$client),
    inTransaction: (work) => db.$client.transaction(work).immediate(),
    close: () => closeDatabase(db),
  };
}
