import type { JSX } from 'preact';
import type { SearchHit } from '../../src/contract/files.ts';
import { plural } from '../app/format.ts';
import { can } from '../app/session.ts';
import { TextMatches } from '../search/text-matches.tsx';
import { Icon } from '../ui/icons.tsx';
import { type BrowserKind, EMPTY } from './browser-views.ts';

/** What the browser shows where its list goes: skeletons while a slow page loads, the view's empty state, or the list. */
export function BrowserContent(p: {
  kind: BrowserKind;
  query: string;
  loaded: boolean;
  slow: boolean;
  failed: boolean;
  count: number;
  inText: SearchHit[];
  list: JSX.Element;
}) {
  if (!p.loaded)
    return p.slow ? (
      <div class="skeleton" role="progressbar" aria-busy="true" aria-label="Loading">
        {Array.from({ length: 8 }, (_, n) => (
          <div key={n} class="skeleton-row" />
        ))}
      </div>
    ) : null;
  if (p.count === 0 && p.failed)
    return (
      <div class="empty">
        <p>Nothing to show until this loads. The reason is above.</p>
      </div>
    );
  if (p.count === 0 && p.inText.length === 0)
    return (
      <div class="empty">
        <p>{p.kind === 'search' ? `No files or folders match “${p.query}”.` : EMPTY[p.kind]}</p>
        {p.kind === 'folder' && can('files.upload') && <p class="muted">Drop files here, paste them, or use Upload files.</p>}
      </div>
    );
  return <NameMatches list={p.list} names={p.count} inText={p.inText} query={p.query} />;
}

/** Search results: the name matches (the list, or a line saying there are none) above the matches in the text. */
function NameMatches(p: { list: JSX.Element; names: number; inText: SearchHit[]; query: string }) {
  if (p.inText.length === 0) return p.list;
  return (
    <div class="search-results">
      {p.names > 0 ? (
        // A virtual list needs a height of its own: the rows it has, up to five, then it scrolls.
        <div class="name-matches" style={{ height: `calc(${Math.min(p.names, 5) + 1} * var(--row) + 2px)` }}>
          {p.list}
        </div>
      ) : (
        <p class="muted no-names">No names match “{p.query}”.</p>
      )}
      <TextMatches hits={p.inText} />
    </div>
  );
}

/** Files dragged from the desktop over the view. */
export function DropOverlay({ title }: { title: string }) {
  return (
    <div class="drop-overlay" aria-hidden="true">
      <Icon name="upload" size={32} />
      <p>Drop to upload to {title}</p>
    </div>
  );
}

/** How many items are listed, and whether more follow. */
export function ListFoot(p: { count: number; more: boolean; inText: number }) {
  return (
    <p class="list-foot muted" aria-live="polite">
      {plural(p.count, 'item')}
      {p.more ? ' loaded; more as you scroll' : ''}
      {p.inText > 0 ? `, ${p.inText} more in the text` : ''}
    </p>
  );
}

/** The hidden file inputs behind Upload files and Upload folder. */
export function UploadInputs(p: {
  fileInput: { current: HTMLInputElement | null };
  folderInput: { current: HTMLInputElement | null };
  onFiles: (files: FileList) => void;
}) {
  return (
    <>
      <input
        ref={p.fileInput}
        type="file"
        multiple
        hidden
        onChange={(e) => {
          const files = e.currentTarget.files!;
          p.onFiles(files);
          e.currentTarget.value = '';
        }}
      />
      <input
        ref={p.folderInput}
        type="file"
        hidden
        {...{ webkitdirectory: true }}
        onChange={(e) => {
          const files = e.currentTarget.files!;
          p.onFiles(files);
          e.currentTarget.value = '';
        }}
      />
    </>
  );
}
