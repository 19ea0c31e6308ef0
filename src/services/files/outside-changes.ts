import type { ChangeRow } from '../../db/repos/changes.ts';
import type { Logger } from '../../log.ts';
import type { FileEvents } from './file-events.ts';
import { eventsOf } from '../changes/change-events.ts';
import { ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import { EVENTS_PER_SCAN, scanSummarized, scanSummary } from '../changes/scan-summary.ts';

// Rows read from the log per page while catching up with another process's changes.
const PAGE = 1000;
// Looks after which a scan whose library never says it finished (its process died) is announced as it stands.
const SCAN_IDLE_LOOKS = 60;

/** A library scan's rows another process committed, held until the scan ends: only then is it known whether a summary stands in for them. */
interface HeldScan {
  accountId: string;
  /** Its first rows: past a summary's threshold the rest are only counted (a first scan may be 100,000 files). */
  rows: ChangeRow[];
  count: number;
  lastAt: number;
  idleLooks: number;
}

// The rows a held scan keeps: one past the summary's threshold, and the library folder's creation before them.
const ROWS_KEPT = EVENTS_PER_SCAN + 2;

/**
 * Changes another process wrote to the database (the CLI beside the server: `coffer shares revoke`, a library
 * scan) reach this server's live streams as its own do: SQLite's data_version, which moves only when another
 * connection commits, is asked every `everyMs`; when it moved, the log's rows since the last look that this
 * process did not record are announced from the log, as a resumed stream replays them. A library scan's are
 * announced once the scan ends, each or by one summary, by the rule the scanning process followed (scanSummarized).
 */
export class OutsideChanges {
  private timer: ReturnType<typeof setInterval> | null = null;
  private seen = 0;
  /** The row at `seen` as it was read: another row there, or a log ending before it, is a restored log. */
  private last: ChangeRow | null = null;
  private version = 0;
  private readonly scans = new Map<string, HeldScan>();

  constructor(
    private readonly d: {
      changes: ChangeLog;
      events: Pick<FileEvents, 'relay' | 'many'>;
      /** PRAGMA data_version of the server's connection. */
      dataVersion: () => number;
      /** A library's folder and when its last scan ended (epoch ms); null once it is removed. */
      library: (id: string) => { folderId: string; scannedAt: number | null } | null;
      log: Logger;
    },
    readonly everyMs = 1000,
  ) {}

  start(): void {
    this.seen = this.d.changes.latestSeq();
    this.last = this.rowAt(this.seen);
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
      for (const held of this.scans.values()) held.idleLooks++;
      const version = this.d.dataVersion();
      if (version !== this.version) {
        this.version = version;
        this.readNew();
      }
      this.endScans();
    } catch (err) {
      // A busy or closing database: the next look reads from where this one stopped.
      this.d.log.warn("could not read another process's changes", { err: String(err) });
    }
  }

  private readNew(): void {
    const from = this.d.changes.restartAfterRestore(this.seen, this.last);
    if (from !== null) this.restart(from);
    for (;;) {
      const rows = this.d.changes.after(this.seen, PAGE);
      for (const row of rows) {
        this.seen = row.seq;
        this.last = row;
        if (this.d.changes.recordedHere(row)) continue;
        const library = libraryOf(row);
        if (library === null) this.relay(row);
        else this.hold(library, row);
      }
      if (rows.length < PAGE) break;
    }
    this.d.changes.forgetRecordedThrough(this.seen);
  }

  /** Follows a log put back beneath the server from `from` (ChangeLog.restartAfterRestore): its history before is not announced again. */
  private restart(from: number): void {
    this.seen = from;
    this.last = this.rowAt(this.seen);
    this.scans.clear();
    this.d.log.info('the change log was restored beneath the server: following it from its newest changes', { seq: this.seen });
  }

  /** The log's row at `seq`, if it is kept. */
  private rowAt(seq: number): ChangeRow | null {
    const row = seq > 0 ? this.d.changes.after(seq - 1, 1)[0] : undefined;
    return row?.seq === seq ? row : null;
  }

  private hold(libraryId: string, row: ChangeRow): void {
    const held = this.scans.get(libraryId);
    if (held) {
      if (held.rows.length < ROWS_KEPT) held.rows.push(row);
      held.count++;
      held.lastAt = row.at;
      held.idleLooks = 0;
    } else this.scans.set(libraryId, { accountId: row.accountId, rows: [row], count: 1, lastAt: row.at, idleLooks: 0 });
  }

  /** Announces the held scans that ended: their library's scan time reached their last row, or the library is gone. */
  private endScans(): void {
    for (const [libraryId, held] of this.scans) {
      const library = this.d.library(libraryId);
      const ended = !library || (library.scannedAt ?? -1) >= held.lastAt || held.idleLooks >= SCAN_IDLE_LOOKS;
      if (!ended) continue;
      this.scans.delete(libraryId);
      // A library added elsewhere: its folder's creation is announced, and its first scan is summarized.
      const creation = library ? held.rows.find((r) => r.itemId === library.folderId && r.kind === ChangeKinds.created) : undefined;
      const scanned = held.count - (creation ? 1 : 0);
      const whole = held.count === held.rows.length;
      if (whole && (!library || scanned === 0 || !scanSummarized(creation !== undefined, scanned))) {
        for (const row of held.rows) this.relay(row);
        continue;
      }
      if (creation) this.relay(creation);
      // A removed library's scan past the threshold: the summary names where it began, so clients list again.
      this.d.events.many(held.accountId, library?.folderId ?? held.rows[0]!.itemId, scanSummary(scanned));
    }
  }

  /** Each event of one row; its id never passes a held row's seq, so a stream that drops after it still replays the held. */
  private relay(row: ChangeRow): void {
    let held = row.seq;
    for (const scan of this.scans.values()) held = Math.min(held, scan.rows[0]!.seq - 1);
    for (const event of eventsOf(row)) this.d.events.relay(row.accountId, row.itemId, [row.parentBefore, row.parentAfter], event, held);
  }
}

/** The library whose scan (or addition, or removal) made a row, from its details; null for any other change. */
function libraryOf(row: ChangeRow): string | null {
  if (row.actorKind !== 'system' || row.details === null) return null;
  const library = (JSON.parse(row.details) as { library?: unknown }).library;
  return typeof library === 'string' ? library : null;
}
