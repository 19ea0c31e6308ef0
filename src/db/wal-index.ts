import fs from 'node:fs';

const HEADER = 48;

/**
 * The header of a WAL database's index (its `-shm` file; sqlite.org/walformat.html § 2.1), which every commit by
 * any connection, this process's or another's (the CLI), rewrites before it returns: change counter, frame count
 * and checksums. Comparing it tells whether anything was committed since, where a statement costs a read
 * transaction (a statement, two `fcntl` locks and an `fstat`).
 *
 * Read with one `pread` from a descriptor held open for the life of the process, never closed: closing any
 * descriptor of the file drops every POSIX lock this process holds on it, SQLite's own included (the fifth
 * pass mapped the file with `Bun.mmap`, which opens and closes it, and a CLI commit then went unseen).
 */
export class WalIndexHeader {
  private fd: number | null | undefined;
  private readonly now = Buffer.alloc(2 * HEADER);

  constructor(private readonly file: string) {}

  /**
   * `read`, answered from what it returned last while nothing was committed since, by any connection. Read
   * again inside a transaction (this connection's own writes are not in the header yet) and wherever the header
   * cannot be read. The header is noted before `read` runs, so a commit in between moves it again.
   */
  untilCommit(read: () => string, inTransaction: () => boolean): () => string {
    const noted = Buffer.alloc(HEADER);
    let value: string | undefined;
    return () => {
      if (inTransaction()) return read();
      const now = this.read();
      if (now === null) {
        value = undefined;
        return read();
      }
      if (value !== undefined && now.compare(noted, 0, HEADER, 0, HEADER) === 0) return value;
      now.copy(noted, 0, 0, HEADER);
      value = read();
      return value;
    };
  }

  /** The header, its first copy; null where there is no index (no file, not WAL) or a commit is writing it now. */
  private read(): Buffer | null {
    if (this.fd === undefined) {
      try {
        this.fd = fs.openSync(this.file, 'r');
      } catch {
        this.fd = null;
      }
    }
    if (this.fd === null || fs.readSync(this.fd, this.now, 0, 2 * HEADER, 0) < 2 * HEADER) return null;
    // A commit writes the second copy, then the first: copies that differ are being written. Byte 12 is isInit.
    if (this.now[12] !== 1 || this.now.compare(this.now, HEADER, 2 * HEADER, 0, HEADER) !== 0) return null;
    return this.now;
  }
}
