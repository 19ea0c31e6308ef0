import { type ContentRepo, openContentRepo } from '../../db/repos/content.ts';
import { jitAtFullSpeed } from '../../lib/jit-policy.ts';

/**
 * Makes the snippets of a query's matches on its own connection: FTS5's snippet() reads each matching
 * document's whole text (20 ms for 1 MiB), which must not hold the thread that answers requests.
 */
declare const self: Worker;
jitAtFullSpeed();

export type ReaderRequest =
  | { kind: 'open'; id: number; database: string }
  | { kind: 'snippets'; id: number; accountIds: string[]; match: string; seqs: number[]; tokens: number }
  | { kind: 'close'; id: number };

export type ReaderReply = { id: number; snippets: Array<[seq: number, snippet: string]> } | { id: number; error: string };

let connection: { repo: ContentRepo; close(): void } | null = null;

self.onmessage = (event: MessageEvent<ReaderRequest>) => {
  const m = event.data;
  try {
    if (m.kind === 'open') {
      connection = openContentRepo(m.database);
      self.postMessage({ id: m.id, snippets: [] } satisfies ReaderReply);
    } else if (m.kind === 'snippets') {
      if (!connection) throw new Error('snippet reader used before it was opened');
      const snippets = connection.repo.snippets(m.accountIds, m.match, m.seqs, m.tokens);
      self.postMessage({ id: m.id, snippets: [...snippets] } satisfies ReaderReply);
    } else {
      connection?.close();
      connection = null;
      self.postMessage({ id: m.id, snippets: [] } satisfies ReaderReply);
    }
  } catch (err) {
    self.postMessage({ id: m.id, error: String(err) } satisfies ReaderReply);
  }
};
