import type { Logger } from '../../log.ts';
import type { FileEvents } from './file-events.ts';
import { eventsOf } from '../changes/change-events.ts';
import type { ChangeLog } from '../changes/change-log.ts';

// Rows read from the log per page while catching up with another process's changes.
const PAGE = 1000;

/**
 * Changes another process wrote to the database (the CLI beside the server: `coffer shares revoke`, a library
 * scan) reach this server's live streams as its own do: SQLite's data_version, which moves only when another
 * connection commits, is asked every `everyMs`; when it moved, the log's rows since the last look that this
 * process did not record are announced from the log, as a resumed stream replays them.
 */
export class OutsideChanges {
  private timer: ReturnType<typeof setInterval> | null = null;
  private seen = 0;
  private version = 0;

  constructor(
    private readonly d: {
      changes: ChangeLog;
      events: Pick<FileEvents, 'relay'>;
      /** PRAGMA data_version of the server's connection. */
      dataVersion: () => number;
      log: Logger;
    },
    readonly everyMs = 1000,
  ) {}

  start(): void {
    this.seen = this.d.changes.latestSeq();
    this.version = this.d.dataVersion();
    this.timer = setInterval(() => this.check(), this.everyMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look: nothing is read unless another connection committed since the last. */
  check(): void {
    try {
      const version = this.d.dataVersion();
      if (version === this.version) return;
      this.version = version;
      for (;;) {
        const rows = this.d.changes.after(this.seen, PAGE);
        for (const row of rows) {
          this.seen = row.seq;
          if (this.d.changes.recordedHere(row.seq)) continue;
          for (const event of eventsOf(row)) this.d.events.relay(row.accountId, row.itemId, [row.parentBefore, row.parentAfter], event);
        }
        if (rows.length < PAGE) break;
      }
      this.d.changes.forgetRecordedThrough(this.seen);
    } catch (err) {
      // A busy or closing database: the next look reads from where this one stopped.
      this.d.log.warn("could not read another process's changes", { err: String(err) });
    }
  }
}
