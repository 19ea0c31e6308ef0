import type { HubEvent } from '../../events/hub.ts';
import { FileEventType, type FileEventName } from '../../contract/events.ts';
import type { ChangeRow } from '../../db/repos/changes.ts';
import { type ChangeKind, ChangeKinds, type ChangeLog, type ChangeReader } from './change-log.ts';

/** Where a stream starts: after the client's seq, with a reset when changes after it are gone, or fresh. */
export type ResumePoint = { afterSeq: number; untilSeq: number } | { reset: true; latestSeq: number } | { latestSeq: number };

export interface ReplayPage {
  events: HubEvent[];
  /** The seq to continue after; `done` once it reached the resume's end. */
  nextAfterSeq: number;
  done: boolean;
}

// The live event each kind of change is announced with (docs/compatibility.md › Events); member changes have none.
const EVENT_OF: Partial<Record<ChangeKind, FileEventName>> = {
  [ChangeKinds.created]: FileEventType.folderCreated,
  [ChangeKinds.uploaded]: FileEventType.uploaded,
  [ChangeKinds.dropped]: FileEventType.uploaded,
  [ChangeKinds.replaced]: FileEventType.updated,
  [ChangeKinds.versionRestored]: FileEventType.updated,
  [ChangeKinds.touched]: FileEventType.updated,
  [ChangeKinds.renamed]: FileEventType.renamed,
  [ChangeKinds.moved]: FileEventType.moved,
  [ChangeKinds.trashed]: FileEventType.deleted,
  [ChangeKinds.restored]: FileEventType.restored,
  [ChangeKinds.purged]: FileEventType.permanentlyDeleted,
  [ChangeKinds.copied]: FileEventType.copied,
  [ChangeKinds.linkCreated]: FileEventType.shared,
  [ChangeKinds.linkRemoved]: FileEventType.shared,
};

const SEQ = /^\d{1,15}$/;

/**
 * The live stream's events rebuilt from the change log, for a stream that resumes after a drop: the same
 * types and data as FileEvents publishes live, each with its change's seq, through ChangeLog's visibility rule.
 */
export class ChangeEvents {
  constructor(private readonly log: ChangeLog) {}

  /** The id a stream opened now would start after (the newest seq): given as `lastEventId`, a later stream misses none of the changes since. */
  position(): string {
    return String(this.log.latestSeq());
  }

  /** Where a stream opened with `Last-Event-ID: lastEventId` (or without) starts; a seq not handed out (or from before a restore) or since thinned is a reset. */
  resumeFrom(lastEventId: string | null): ResumePoint {
    const latest = this.log.latestSeq();
    if (lastEventId === null) return { latestSeq: latest };
    const reset = { reset: true as const, latestSeq: latest };
    if (!SEQ.test(lastEventId)) return reset;
    const after = Number(lastEventId);
    return this.log.resumeCheck(after) === 'ok' ? { afterSeq: after, untilSeq: latest } : reset;
  }

  /** The next events `reader` may see after `afterSeq`, up to `untilSeq`, at most about `limit` changes. */
  replay(reader: ChangeReader, afterSeq: number, untilSeq: number, limit: number): ReplayPage {
    if (afterSeq >= untilSeq) return { events: [], nextAfterSeq: afterSeq, done: true };
    const page = this.log.changesFor(reader, { afterSeq, limit });
    const events: HubEvent[] = [];
    for (const row of page.rows) {
      if (row.seq > untilSeq) return { events, nextAfterSeq: untilSeq, done: true };
      events.push(...eventsOf(row));
    }
    const next = Math.min(page.nextAfterSeq, untilSeq);
    return { events, nextAfterSeq: next, done: next >= untilSeq || next === afterSeq };
  }
}

/** The live events of one change: a move that also renamed was announced as a move and a rename. */
export function eventsOf(row: ChangeRow): HubEvent[] {
  const type = EVENT_OF[row.kind as ChangeKind];
  if (!type) return [];
  const details = row.details ? (JSON.parse(row.details) as Record<string, unknown>) : {};
  const gone = row.kind === ChangeKinds.purged;
  const base = {
    id: row.itemId,
    name: gone ? row.nameBefore : row.nameAfter,
    type: row.itemType,
    parentId: gone ? row.parentBefore : row.parentAfter,
    userId: userOf(row, details),
  };
  const event = (t: FileEventName, extra: Record<string, unknown>): HubEvent => ({
    type: t,
    timestamp: new Date(row.at).toISOString(),
    data: { ...base, ...extra },
    seq: row.seq,
  });
  switch (type) {
    case FileEventType.uploaded:
    case FileEventType.updated:
      return [event(type, { size: details.size, mimeType: details.mimeType ?? null })];
    case FileEventType.renamed:
      return [event(type, { oldName: row.nameBefore })];
    case FileEventType.moved:
      if (row.nameBefore === row.nameAfter) return [event(type, {})];
      // Live, the rename that went with the move carried no id of its own: the move's is the change's.
      return [event(type, {}), { ...event(FileEventType.renamed, { oldName: row.nameBefore }), seq: undefined }];
    case FileEventType.shared:
      return [event(type, { shared: row.kind === ChangeKinds.linkCreated })];
    default:
      return [event(type, {})];
  }
}

// Live events name the login that acted; a link visitor's and the server's changes were published as the owner's.
function userOf(row: ChangeRow, details: Record<string, unknown>): string | null {
  if (row.actorKind === 'login') return row.actorId;
  if (row.actorKind === 'docserver' && typeof details.loginId === 'string') return details.loginId;
  return row.accountId;
}
