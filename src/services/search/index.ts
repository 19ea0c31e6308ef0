import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { FileEvents } from '../files/file-events.ts';
import type { FilesServices } from '../files/index.ts';
import type { ItemViews } from '../files/item-views.ts';
import type { LibraryFiles } from '../files/library-files.ts';
import type { Tree } from '../files/tree.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { ContentSearchService } from './content-search.ts';
import { ExtractorPool, IndexWriter, SnippetReader } from './extractor.ts';

export interface SearchServices {
  contentSearch: ContentSearchService;
}

type SearchDeps = { settings: SettingsService; views: ItemViews; tree: Tree; libraryFiles: LibraryFiles; events: FileEvents } & Pick<
  FilesServices,
  'items'
>;

// A document whose extraction takes longer than this (a PDF that loops) gives no text.
const EXTRACT_TIMEOUT_MS = 30_000;
// A document whose extraction grows the server by more than this gives no text.
const EXTRACT_MAX_MEMORY_BYTES = 512 * 1024 ** 2;

/** Content search: the index of words in documents, its background indexer and queries. */
export function createSearchServices(infra: Infrastructure, d: SearchDeps) {
  const { repos, config } = infra;
  const writer = new IndexWriter(infra.paths.database);
  const contentSearch = new ContentSearchService({
    repo: repos.content,
    attempts: repos.attempts,
    users: repos.users,
    items: repos.items,
    itemService: d.items,
    views: d.views,
    tree: d.tree,
    settings: d.settings,
    storage: infra.storage,
    libraries: repos.libraries,
    libraryFiles: d.libraryFiles,
    extractor: new ExtractorPool(
      config.search.workers,
      { timeoutMs: EXTRACT_TIMEOUT_MS, maxTextBytes: config.search.maxTextBytes, maxMemoryBytes: EXTRACT_MAX_MEMORY_BYTES },
      writer,
    ),
    writer,
    snippets: new SnippetReader(infra.paths.database),
    clock: infra.clock,
    log: infra.log,
    limits: config.search,
    pollMs: 2000,
  });
  // New content is queued by the database's triggers; an idle indexer looks at once rather than at its next poll.
  d.events.onContentChange(() => {
    if (contentSearch.enabled()) contentSearch.wake();
  });
  const services: SearchServices = { contentSearch };
  // The indexer runs in the server only; the CLI queues work for it.
  const contentIndexer: Lifecycle = { name: 'content indexer', start: () => contentSearch.start(), stop: () => contentSearch.stop() };
  return { services, lifecycles: { contentIndexer } };
}
