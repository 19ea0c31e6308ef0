import type { BatchTry } from '../../db/repos/attempts.ts';
import { type DocState, EXTRACTION_TRIES, type IndexedDoc, openContentRepo, type PendingFile } from '../../db/repos/content.ts';
import { jitAtFullSpeed } from '../../lib/jit-policy.ts';
import { type TextRef, TextChannels } from './text-channels.ts';

/**
 * Writes extracted text into the FTS5 index on its own connection, so tokenizing a large document
 * (up to 200 ms for 1 MiB) never holds the thread that answers requests. Never terminated mid-write:
 * the server asks it to close. The texts come straight from the extraction workers (text-channels.ts).
 */
declare const self: Worker;
jitAtFullSpeed();

/** What extraction made of one pending file, its text still in the channel it was sent through (null: none). */
export interface QueuedDoc {
  file: PendingFile;
  state: DocState;
  text: TextRef | null;
}

export type WriterRequest =
  | { kind: 'open'; id: number; database: string }
  | { kind: 'attach'; id: number; channel: number; port: MessagePort }
  /**
   * Counts a try at each document before extraction gets it (AttemptsRepo.beginBatch; `alone`: one document, begin()), so
   * one that kills the process is given up; `finished`: documents whose tries ended, forgotten in the same transaction.
   */
  | { kind: 'begin'; id: number; subjects: string[]; alone: boolean; finished: string[]; at: number }
  /** `finished`: documents whose tries ended, forgotten in the transaction that records the texts. */
  | { kind: 'record'; id: number; docs: QueuedDoc[]; finished: string[]; at: number }
  | { kind: 'detach'; id: number; channel: number; lastJob: number }
  | { kind: 'held'; id: number }
  | { kind: 'close'; id: number };

/** `recorded`: texts stored; to `begin`, each document's try; to `held`, the texts waiting here and the channels open; an error's `code` goes along (SQLITE_BUSY). */
export type WriterReply =
  | { id: number; recorded: number; tries?: BatchTry[]; texts?: number; channels?: number }
  | { id: number; error: string; code?: string };

let connection: ReturnType<typeof openContentRepo> | null = null;
const channels = new TextChannels();
const MERGE_PAGES = 128;
const NO_TEXT = new Uint8Array(0);
// One request at a time, in the order sent: a record waits for its texts, and a channel detached after it stays open until then.
let turn: Promise<void> = Promise.resolve();

async function handle(m: WriterRequest): Promise<WriterReply> {
  if (m.kind === 'open') {
    connection = openContentRepo(m.database);
  } else if (m.kind === 'attach') {
    channels.open(m.channel, m.port);
  } else if (m.kind === 'detach') {
    channels.detach(m.channel, m.lastJob);
  } else if (m.kind === 'begin') {
    if (!connection) throw new Error('index writer used before it was opened');
    const { attempts } = connection;
    const tries = connection.inTransaction(() => {
      attempts.finishAll(EXTRACTION_TRIES, m.finished);
      if (!m.alone) return attempts.beginBatch(EXTRACTION_TRIES, m.subjects, m.at);
      return m.subjects.map((subject): BatchTry => (attempts.begin(EXTRACTION_TRIES, subject, m.at) ? 'counted' : 'given-up'));
    });
    return { id: m.id, recorded: 0, tries };
  } else if (m.kind === 'record') {
    if (!connection) throw new Error('index writer used before it was opened');
    const docs: IndexedDoc[] = [];
    let missing: unknown = null;
    // In order, one at a time: a channel's texts are asked for in the order they were made. All are taken even after one is
    // missing, so none is left waiting; the batch then stays queued and is extracted again.
    for (const d of m.docs) {
      try {
        docs.push({ file: d.file, state: d.state, text: d.text && d.text.bytes > 0 ? await channels.take(d.text) : NO_TEXT });
      } catch (err) {
        missing ??= err;
      }
    }
    if (missing) throw missing;
    const { repo, attempts } = connection;
    // The tries are forgotten in the transaction that records their results: a crash leaves both or neither.
    const recorded = connection.inTransaction(() => {
      attempts.finishAll(EXTRACTION_TRIES, m.finished);
      return repo.recordMany(docs, m.at);
    });
    // Merging a little after each batch keeps queries fast without one long merge holding the write lock.
    repo.mergeSome(MERGE_PAGES * m.docs.length);
    return { id: m.id, recorded };
  } else if (m.kind === 'held') {
    return { id: m.id, recorded: 0, texts: channels.held, channels: channels.openChannels };
  } else {
    connection?.close();
    connection = null;
  }
  return { id: m.id, recorded: 0 };
}

self.onmessage = (event: MessageEvent<WriterRequest>) => {
  const m = event.data;
  // At once, not in turn: a record still waiting for a text then fails rather than holding the close forever.
  if (m.kind === 'close') channels.closeAll();
  turn = turn.then(async () => {
    try {
      self.postMessage(await handle(m));
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      self.postMessage({ id: m.id, error: String(err), code: typeof code === 'string' ? code : undefined } satisfies WriterReply);
    }
  });
};
