import { type ContentRepo, type IndexedDoc, openContentRepo } from '../../db/repos/content.ts';
import { jitAtFullSpeed } from '../../lib/jit-policy.ts';

/**
 * Writes extracted text into the FTS5 index on its own connection, so tokenizing a large document
 * (up to 200 ms for 1 MiB) never holds the thread that answers requests. Never terminated mid-write:
 * the server asks it to close.
 */
declare const self: Worker;
jitAtFullSpeed();

export type WriterRequest =
  | { kind: 'open'; id: number; database: string }
  | { kind: 'record'; id: number; docs: IndexedDoc[]; at: number }
  | { kind: 'close'; id: number };

export type WriterReply = { id: number; recorded: number } | { id: number; error: string };

let connection: { repo: ContentRepo; close(): void } | null = null;
const MERGE_PAGES = 128;

self.onmessage = (event: MessageEvent<WriterRequest>) => {
  const m = event.data;
  try {
    if (m.kind === 'open') {
      connection = openContentRepo(m.database);
      self.postMessage({ id: m.id, recorded: 0 } satisfies WriterReply);
    } else if (m.kind === 'record') {
      if (!connection) throw new Error('index writer used before it was opened');
      const recorded = connection.repo.recordMany(m.docs, m.at);
      // Merging a little after each batch keeps queries fast without one long merge holding the write lock.
      connection.repo.mergeSome(MERGE_PAGES * m.docs.length);
      self.postMessage({ id: m.id, recorded } satisfies WriterReply);
    } else {
      connection?.close();
      connection = null;
      self.postMessage({ id: m.id, recorded: 0 } satisfies WriterReply);
    }
  } catch (err) {
    self.postMessage({ id: m.id, error: String(err) } satisfies WriterReply);
  }
};
