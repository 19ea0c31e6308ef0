import fs from 'node:fs';
import path from 'node:path';
import { Database, type Statement } from 'bun:sqlite';
import { WalIndexHeader } from '../wal-index.ts';
import type { Db } from '../client.ts';

export interface SnapshotFacts {
  /** The last migration the snapshot carries. */
  schema: string;
  counts: { users: number; files: number; folders: number; storedBytes: number; auditEvents: number };
  masterKeyIds: string[];
}

/** The two generations requests check, as text. */
interface Generations {
  auth: string;
  access: string;
}

/** Whole-database operations: change detection, integrity, online snapshots. */
export class DatabaseRepo {
  // Resolved now, as SQLite resolved it on opening: a later change of directory must not name another file.
  private readonly walIndex: WalIndexHeader;
  private readonly inTransaction = () => this.sqlite.inTransaction;

  constructor(private readonly sqlite: Database) {
    this.walIndex = new WalIndexHeader(`${path.resolve(sqlite.filename)}-shm`);
    this.changeVersion = this.walIndex.untilCommit(() => {
      const own = this.sqlite.query<{ c: number }, []>('SELECT total_changes() AS c').get()!.c;
      return `${this.dataVersion()}:${own}`;
    }, this.inTransaction);
    // Both read by one statement: a request after a commit asks for the two, and each read is a read transaction of its own.
    // Held, not looked up by its text: every request asks, and the runtime's statement cache keeps only the last few texts.
    let both: Statement<Generations, []> | undefined;
    const generations = this.walIndex.untilCommit(() => {
      // As text: a random 64-bit number does not fit a JavaScript number exactly.
      both ??= this.sqlite.prepare<Generations, []>(
        `SELECT CAST(auth.generation AS TEXT) AS auth, CAST(access.generation AS TEXT) AS access
         FROM auth_generation AS auth, access_generation AS access WHERE auth.id = 1 AND access.id = 1`,
      );
      return both.get()!;
    }, this.inTransaction);
    this.accessVersion = () => generations().access;
    this.authVersion = () => generations().auth;
  }

  /** Moves when another connection commits (the CLI beside the server); our own writes leave it alone. */
  dataVersion(): number {
    return this.sqlite.query<{ data_version: number }, []>('PRAGMA data_version').get()!.data_version;
  }

  /** Moves on any change, by this connection or another; read again only after a commit. */
  readonly changeVersion: () => string;

  /** Moves on any write that can change who reaches an item, or a library added or removed, by this connection or another (triggers keep it); read again only after a commit. */
  readonly accessVersion: () => string;

  /** Moves on any write that can change what authenticating a request reads, by this connection or another (triggers keep it); read again only after a commit. */
  readonly authVersion: () => string;

  /**
   * This connection's automatic checkpoints (SQLite's default: after a commit leaves 1000 pages in the log),
   * off while replication checkpoints itself: blocked by its hold, each commit would sort the whole log's
   * frames for a checkpoint that cannot run.
   */
  setAutoCheckpoint(on: boolean): void {
    this.sqlite.run(`PRAGMA wal_autocheckpoint = ${on ? 1000 : 0}`);
  }

  integrityCheck(): string[] {
    return this.sqlite
      .query<{ integrity_check: string }, []>('PRAGMA integrity_check')
      .all()
      .map((r) => r.integrity_check);
  }

  /**
   * A consistent copy of the database (one transaction's view) while others keep writing, into a new
   * file. SQLite would create it 0644; it holds every wrapped data key, so it is created 0600 (empty, as
   * VACUUM INTO accepts) before the first byte goes in.
   */
  snapshotTo(file: string): void {
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
    this.sqlite.query('VACUUM INTO ?').run(file);
  }

  /** Every object key the file and version rows of a snapshot name, in key order. */
  static snapshotStorageKeys(file: string): string[] {
    const db = new Database(file, { readonly: true });
    try {
      // A snapshot taken before versions existed has no file_versions table.
      const versions = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'file_versions'").get() !== null;
      return db
        .query<{ key: string }, []>(
          `SELECT storage_key AS key FROM items WHERE storage_key IS NOT NULL
           ${versions ? 'UNION ALL SELECT storage_key FROM file_versions' : ''} ORDER BY key`,
        )
        .all()
        .map((r) => r.key);
    } finally {
      db.close();
    }
  }

  /**
   * Moves a database's folder versions (in folder and root ETags) up by `past`, more than any count of changes: they
   * count up by one per change, so an older database put back would hand out again ETags a newer one answered. Every
   * account's root gets a version past it too (one that never changed has none, which reads as 0). `target`: the
   * database's file, or the database open.
   */
  static moveTreeVersionsPast(target: string | Db, past: number): void {
    const db = typeof target === 'string' ? new Database(target) : target.$client;
    try {
      if (!db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tree_versions'").get()) return;
      db.transaction(() => {
        db.query(
          `INSERT INTO tree_versions (account_id, version) SELECT id, ?1 FROM users WHERE parent_user_id IS NULL
           ON CONFLICT (account_id) DO UPDATE SET version = version + ?1`,
        ).run(past);
        db.query("UPDATE items SET tree_version = tree_version + ? WHERE type = 'folder'").run(past);
      })();
    } finally {
      if (typeof target === 'string') db.close();
    }
  }

  /** A snapshot file's integrity check, then (when it passes) its facts, read from the snapshot itself. */
  static inspectSnapshot(file: string): { integrity: string[]; facts: SnapshotFacts | null } {
    const db = new Database(file, { readonly: true });
    try {
      const integrity = new DatabaseRepo(db).integrityCheck();
      if (integrity.length !== 1 || integrity[0] !== 'ok') return { integrity, facts: null };
      const count = (sql: string) => db.query<{ n: number }, []>(sql).get()!.n;
      const facts: SnapshotFacts = {
        schema: db.query<{ tag: string }, []>('SELECT tag FROM coffer_migrations ORDER BY id DESC LIMIT 1').get()?.tag ?? '',
        counts: {
          users: count('SELECT COUNT(*) AS n FROM users'),
          files: count(`SELECT COUNT(*) AS n FROM items WHERE type = 'file'`),
          folders: count(`SELECT COUNT(*) AS n FROM items WHERE type = 'folder'`),
          storedBytes: count(`SELECT COALESCE(SUM(size), 0) AS n FROM items WHERE type = 'file'`),
          auditEvents: count('SELECT COUNT(*) AS n FROM audit_log'),
        },
        masterKeyIds: db
          .query<{ keyId: string }, []>('SELECT DISTINCT key_id AS keyId FROM items WHERE key_id IS NOT NULL ORDER BY key_id')
          .all()
          .map((r) => r.keyId),
      };
      return { integrity, facts };
    } finally {
      db.close();
    }
  }
}
