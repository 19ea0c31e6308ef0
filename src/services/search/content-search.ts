import type { Clock } from '../../clock.ts';
import type { ContentSearchConfig, ContentSearchPreference } from '../../contract/admin.ts';
import type { SearchHit } from '../../contract/files.ts';
import { BusyRounds } from '../../db/busy.ts';
import type { AttemptsRepo, BatchTry } from '../../db/repos/attempts.ts';
import {
  type ContentHit,
  type ContentRepo,
  type DocState,
  EXTRACTION_TRIES,
  extractionSubject,
  type PendingFile,
} from '../../db/repos/content.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import type { Logger } from '../../log.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import type { Actor } from '../admin/audit.ts';
import type { SettingsService } from '../admin/settings.ts';
import { can, requireOwner, type Principal } from '../identity/principal.ts';
import type { ItemService } from '../files/items.ts';
import type { Item as ItemView } from '../../contract/files.ts';
import type { ItemViews } from '../files/item-views.ts';
import type { Tree } from '../files/tree.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { LibrariesRepo } from '../../db/repos/libraries.ts';
import { AppError } from '../../errors.ts';
import { type ByteRange, StorageUnavailableError } from '../../storage/driver.ts';
import type { LibraryFiles } from '../files/library-files.ts';
import { kindOf, needsWholeFile } from './document-kind.ts';
import type { ExtractorPool, IndexWriter, SnippetReader } from './extractor.ts';
import type { QueuedDoc } from './index-writer.ts';
import type { TextRef } from './text-channels.ts';
import { matchExpression, snippetHtml } from './text.ts';

interface ContentSearchLimits {
  maxTextBytes: number;
  maxFileBytes: number;
}

interface Deps {
  repo: ContentRepo;
  attempts: AttemptsRepo;
  users: UsersRepo;
  items: ItemsRepo;
  itemService: ItemService;
  views: ItemViews;
  tree: Tree;
  settings: SettingsService;
  storage: SealedStore;
  libraries: LibrariesRepo;
  libraryFiles: Pick<LibraryFiles, 'locate' | 'open'>;
  extractor: ExtractorPool;
  writer: IndexWriter;
  snippets: SnippetReader;
  clock: Clock;
  log: Logger;
  limits: ContentSearchLimits;
  /** How often an idle indexer looks for work and for a change of the setting made elsewhere (the CLI). */
  pollMs: number;
}

const BACKFILL_BATCH = 2000;
const EXTRACT_BATCH = 32;
// Between two batches, so a long backfill leaves the event loop a moment; the workers' nice value does the rest.
const PAUSE_MS = 15;
/** How long the indexer waits before trying the storage again after it did not answer: doubled each time up to the most. */
const STORAGE_RETRY_FIRST_MS = 1000;
const STORAGE_RETRY_MOST_MS = 10_000;
// Texts the index writer stores in one transaction: a few, so a request waiting for the write lock waits little.
const WRITE_BATCH_DOCS = 8;
const WRITE_BATCH_BYTES = 1024 ** 2;
const SNIPPET_TOKENS = 12;
const CONTENT_LIMIT = 20;
// Sharing owners' matches looked at for the ones inside a share (the index ranks at most 1,000 anyway).
const SHARED_CANDIDATES = 1000;
const HEAD_BYTES = 8192;
const SMALL_FILE_BYTES = 256 * 1024;

/**
 * Full-text search over documents (docs/search.md): the instance switch and each account's opt-out, the
 * background indexer that drains the queue the triggers on `items` fill, and queries over the FTS5 index.
 */
export class ContentSearchService {
  private running = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  /** Where backfill has got to (an items seq), null when done; restarted when the switch turns on. */
  private backfillFrom: number | null = null;
  private wasEnabled: boolean | null = null;

  // A round that found the database busy recorded nothing: its files stay queued and are extracted again.
  private readonly rounds: BusyRounds;
  /** The wait before the next try of a storage that did not answer the last round (0: it answered); one warning per spell. */
  private storageRetryMs = 0;
  /** Documents whose tries ended here (with a result, an error, or not begun) and are still counted: forgotten by the writer's next transaction. */
  private readonly finished = new Set<string>();

  constructor(private readonly d: Deps) {
    this.rounds = new BusyRounds(d.log, 'content index');
  }

  enabled(): boolean {
    return this.d.settings.get('contentSearch');
  }

  config(): ContentSearchConfig {
    return { enabled: this.enabled(), ...this.d.repo.progress() };
  }

  /** The admin's switch: on starts a backfill, off deletes the index at once. */
  setEnabled(value: unknown, field: string, by: Actor): ContentSearchConfig {
    const enabled = this.d.settings.update('contentSearch', value, field, by);
    if (!enabled) this.d.repo.clearAll();
    this.wake();
    return this.config();
  }

  /** GET: whether the caller's account is searchable by content (its owner's choice) and whether the instance offers it. */
  preference(principal: Principal): ContentSearchPreference {
    return { available: this.enabled(), optOut: this.d.users.contentSearchOptOut(principal.accountId) };
  }

  /** The owner's opt-out: opting out deletes the account's rows from the index; opting back in backfills them. */
  setOptOut(principal: Principal, optOut: boolean): ContentSearchPreference {
    requireOwner(principal);
    this.d.users.setContentSearchOptOut(principal.accountId, optOut, this.d.clock.now());
    if (optOut) this.d.repo.clearAccount(principal.accountId);
    else this.backfillFrom = 0;
    this.wake();
    return this.preference(principal);
  }

  /** `coffer search reindex`: queues every file again (one account's with `accountId`); returns how many were queued. */
  reindex(accountId?: string): number {
    const before = this.d.repo.progress().pending;
    // The rebuild tries again the documents given up on.
    this.d.attempts.clear(EXTRACTION_TRIES);
    for (let at: number | null = 0; at !== null; ) at = this.d.repo.queueMissing(at, BACKFILL_BATCH, { accountId, all: true });
    this.wake();
    return this.d.repo.progress().pending - before;
  }

  /**
   * GET /api/files/search with content=true: the name matches, then the files whose text matches, best
   * first; with includeShared also the files inside items other accounts share with the caller's account.
   * Each content match carries `snippet` (null for a login without `files.download`, who may see that a
   * file matches but not its words). Names only while the switch is off or the account opted out.
   */
  async search(
    principal: Principal,
    input: { q: string; limit?: number; content?: boolean; includeShared?: boolean },
  ): Promise<SearchHit[]> {
    const byName = this.d.itemService.search(principal, input);
    if (!input.content || !this.enabled() || this.d.users.contentSearchOptOut(principal.accountId)) return byName;
    const match = matchExpression(input.q);
    // As for names, a limit below 1 is 1: a negative LIMIT is none to SQLite, and each hit costs a snippet.
    const cap = Math.min(CONTENT_LIMIT, Math.max(1, input.limit ?? CONTENT_LIMIT));
    const own = match ? this.d.repo.search([principal.accountId], match, cap) : [];
    const shared = match && input.includeShared ? this.sharedHits(principal, match, cap) : [];
    const hits = [...own, ...shared].sort((a, b) => a.score - b.score).slice(0, cap);
    const readable = can(principal, 'files.download');
    const snippets =
      readable && match
        ? await this.d.snippets.snippets(
            [...new Set(hits.map((h) => h.accountId))],
            match,
            hits.map((h) => h.seq),
            SNIPPET_TOKENS,
          )
        : new Map<number, string>();
    const snippetOf = (seq: number) => {
      const raw = snippets.get(seq);
      return raw === undefined ? null : snippetHtml(raw);
    };
    const seqOf = new Map(hits.map((h) => [h.id, h.seq]));
    const named = new Set(byName.map((i) => i.id));
    const result: SearchHit[] = byName.map((i) => {
      const seq = seqOf.get(i.id);
      return seq === undefined ? { ...i, match: 'name' } : { ...i, match: 'name', snippet: snippetOf(seq) };
    });
    const idsByAccount = new Map<string, string[]>();
    for (const h of hits) if (!named.has(h.id)) idsByAccount.set(h.accountId, [...(idsByAccount.get(h.accountId) ?? []), h.id]);
    const views = new Map<string, ItemView>();
    for (const [accountId, ids] of idsByAccount) {
      for (const view of this.d.views.many(accountId, this.d.items.getMany(accountId, ids))) views.set(view.id, view);
    }
    for (const h of hits) {
      const view = views.get(h.id);
      if (view) result.push({ ...view, match: 'content', snippet: snippetOf(h.seq) });
    }
    return result;
  }

  /**
   * Text matches inside the items shared with the caller's account (docs/people.md): the sharing owners'
   * best matches, kept only when inside a shared item; none of an owner that opted out.
   */
  private sharedHits(principal: Principal, match: string, cap: number): ContentHit[] {
    const rootsByOwner = this.d.itemService.sharedRoots(principal);
    const owners = [...rootsByOwner.keys()].filter((ownerId) => !this.d.users.contentSearchOptOut(ownerId));
    if (owners.length === 0) return [];
    const candidates = this.d.repo.search(owners, match, SHARED_CANDIDATES);
    const roots = new Set(owners.flatMap((ownerId) => [...rootsByOwner.get(ownerId)!]));
    const inside = this.d.tree.insideAny(
      roots,
      candidates.map((c) => c.id),
    );
    return candidates.filter((c) => inside.has(c.id)).slice(0, cap);
  }

  /** Texts waiting in the index writer and extraction workers' channels open there (tests: nothing is left behind). */
  textsHeld(): Promise<{ texts: number; channels: number }> {
    return this.d.writer.held();
  }

  /** Starts the indexer loop (the server only). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    this.d.extractor.kill();
    await this.d.writer.close();
    await this.d.snippets.close();
  }

  /** Lets an idle indexer look at once (a setting changed, or new work was queued in this process). */
  wake(): void {
    this.wakeUp?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
  }

  private async run(): Promise<void> {
    while (this.running) {
      let busy = false;
      let wait: number | null = null;
      try {
        busy = await this.step();
        this.rounds.succeeded();
        this.storageRetryMs = 0;
      } catch (err) {
        if (err instanceof StorageUnavailableError) {
          if (!this.storageRetryMs) this.d.log.warn('content indexing waits for the storage', { err: err.message });
          // A short blip is over in a second or two; a long outage is tried no more often than every 10 s.
          this.storageRetryMs = this.storageRetryMs ? Math.min(this.storageRetryMs * 2, STORAGE_RETRY_MOST_MS) : STORAGE_RETRY_FIRST_MS;
          wait = this.storageRetryMs;
        } else if (!this.rounds.failed(err)) this.d.log.error('content indexing failed', { err: String(err) });
      }
      await this.sleep(wait ?? (busy ? PAUSE_MS : this.d.pollMs));
    }
  }

  /** One round: follow the switch, queue a backfill batch, extract a few documents. True when work is left. */
  async step(): Promise<boolean> {
    const enabled = this.enabled();
    if (!enabled) {
      // Turned off from the CLI, or by a server that stopped before clearing: the index must not outlive the switch.
      if (this.wasEnabled !== false && !this.d.repo.isEmpty()) this.d.repo.clearAll();
      this.wasEnabled = false;
      return false;
    }
    // Turned on, or off and on again between two looks (the index is then empty): extract everything.
    if (this.wasEnabled !== true || (this.backfillFrom === null && this.d.repo.isEmpty())) this.backfillFrom = 0;
    this.wasEnabled = true;
    if (this.backfillFrom !== null) this.backfillFrom = this.d.repo.queueMissing(this.backfillFrom, BACKFILL_BATCH);
    const batch = this.d.repo.nextPending(EXTRACT_BATCH);
    await this.indexBatch(batch);
    return batch.length > 0 || this.backfillFrom !== null;
  }

  /**
   * Counts a try at each document of the batch (in the index writer: no commit here), then extracts them. After a crash
   * (some have unfinished tries) only those are extracted, one at a time, each counted alone: the one that killed the
   * process reaches the limit and is given up, its neighbours are not. The others wait for the next round.
   */
  private async indexBatch(batch: PendingFile[]): Promise<void> {
    if (batch.length === 0) return;
    const tries = await this.begin(batch, false);
    if (tries.every((t) => t === 'counted')) return this.extractBatch(batch);
    for (const [i, file] of batch.entries()) {
      if (!this.running || !this.enabled()) return;
      if (tries[i] === 'new') continue;
      if (tries[i] === 'unfinished' && (await this.begin([file], true))[0] === 'counted') await this.extractBatch([file]);
      else {
        // Recorded as a failed extraction is: an error line; `coffer search reindex` tries it again.
        this.d.log.error('content extraction gave up on a document: the server stopped each time it read it', { id: file.id });
        await this.record([{ file, state: 'failed', text: null }]);
      }
    }
  }

  private async begin(files: PendingFile[], alone: boolean): Promise<BatchTry[]> {
    const finished = [...this.finished];
    const tries = await this.d.writer.begin(files.map(extractionSubject), alone, finished, this.d.clock.now());
    for (const subject of finished) this.finished.delete(subject);
    return tries;
  }

  /** Stores texts with the index writer, the tries that ended forgotten in the same transaction. */
  private async record(docs: QueuedDoc[]): Promise<number> {
    const finished = [...this.finished];
    const recorded = await this.d.writer.record(docs, finished, this.d.clock.now());
    for (const subject of finished) this.finished.delete(subject);
    return recorded;
  }

  /**
   * Extracts a batch whose tries are counted with one document in each extraction worker at a time, and hands the texts
   * to the index writer a few at a time while the workers go on with the next ones.
   */
  private async extractBatch(batch: PendingFile[]): Promise<void> {
    const queue = [...batch];
    const writes: Promise<number>[] = [];
    let ready: QueuedDoc[] = [];
    let readyBytes = 0;
    const handed = new Set<PendingFile>();
    const flush = (last: boolean) => {
      // Every try of the batch has ended by its last write: read, left out, or not begun (a lane stopped by an error).
      for (const file of last ? batch : ready.map((doc) => doc.file)) {
        if (!handed.has(file)) this.finished.add(extractionSubject(file));
        handed.add(file);
      }
      // Tries ended without a text to write (left out, not begun) are forgotten in the writer's next transaction, a begin's or a record's.
      if (ready.length > 0) writes.push(this.record(ready));
      ready = [];
      readyBytes = 0;
    };
    const lane = async () => {
      for (let file = queue.shift(); file && this.running && this.enabled(); file = queue.shift()) {
        const doc = await this.indexOne(file);
        if (!doc) continue;
        ready.push(doc);
        readyBytes += doc.text?.bytes ?? 0;
        if (ready.length >= WRITE_BATCH_DOCS || readyBytes >= WRITE_BATCH_BYTES) flush(false);
      }
    };
    const lanes = await Promise.allSettled(Array.from({ length: this.d.extractor.size }, lane));
    flush(true);
    const failed = [...lanes, ...(await Promise.allSettled(writes))].find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** One file's text, or null when it left the queue without any (nothing to read, a library away). */
  private async indexOne(file: PendingFile): Promise<QueuedDoc | null> {
    const read = file.optedOut ? null : this.reader(file);
    if (!read) {
      this.d.repo.dropPending(file.seq);
      return null;
    }
    let state: DocState;
    let text: TextRef | null = null;
    if (file.size > this.d.limits.maxFileBytes) state = 'skipped';
    else {
      try {
        ({ state, text } = await this.extract(file, read));
      } catch (err) {
        // A library Coffer cannot read now (its disk away): the file is looked at again after the next start.
        if (file.library && err instanceof AppError && err.status === 409) {
          this.d.repo.dropPending(file.seq);
          return null;
        }
        // The storage away for now: the file stays queued for a later round.
        if (err instanceof StorageUnavailableError) throw err;
        // An object that cannot be read (missing, tampered) is recorded, not retried forever.
        this.d.log.warn('content extraction could not read a file', { id: file.id, err: String(err) });
        state = 'failed';
      }
    }
    return { file, state, text };
  }

  /**
   * How to read the first bytes of a file: from the encrypted store, or a library file from its host folder;
   * null when there is nothing to read (no content, or a library file Coffer cannot read now).
   */
  private reader(file: PendingFile): ((length: number) => Promise<Uint8Array>) | null {
    const key = file.storageKey;
    if (!key) return null;
    if (!file.library) {
      const info = { size: file.size, wrappedKey: file.wrappedKey };
      if (!info.wrappedKey) return null;
      return (length) => this.d.storage.readBytes(key, { size: info.size, wrappedKey: info.wrappedKey! }, { start: 0, end: length });
    }
    const row = this.d.libraries.mediaEntry(file.id)?.readable ? this.d.items.getLive(file.accountId, file.id) : null;
    const location = row && this.d.libraryFiles.locate(row);
    if (!location) return null;
    return async (length) => {
      const range: ByteRange = { start: 0, end: length };
      return new Uint8Array(await new Response(this.d.libraryFiles.open(location, file.size, range)).arrayBuffer());
    };
  }

  private async extract(
    file: PendingFile,
    read: (length: number) => Promise<Uint8Array>,
  ): Promise<{ state: DocState; text: TextRef | null }> {
    // A small file is read and decrypted once, whole: every kind that is read needs all of it, and one that is not costs little.
    const small = file.size <= Math.min(SMALL_FILE_BYTES, this.d.limits.maxTextBytes);
    const first = await read(small ? file.size : Math.min(file.size, HEAD_BYTES));
    const kind = kindOf(file.name, first.subarray(0, HEAD_BYTES));
    if (kind === null) return { state: 'empty', text: null };
    // Text needs only the bytes that become text (HTML and SVG some more, for their markup); documents need the whole file.
    const markup = kind === 'html' || kind === 'svg';
    const want = needsWholeFile(kind) ? file.size : Math.min(file.size, this.d.limits.maxTextBytes * (markup ? 4 : 1));
    const bytes = want <= first.length ? first.subarray(0, want) : await read(want);
    const result = await this.d.extractor.extract(file.name, bytes, () => read(want));
    if ('failed' in result) {
      this.d.log.info('content extraction gave no text', { id: file.id, reason: result.failed });
      return { state: 'failed', text: null };
    }
    return { state: result.text.bytes > 0 ? 'indexed' : 'empty', text: result.text };
  }
}
