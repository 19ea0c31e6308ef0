import { useEffect, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { ancestors, type Crumb } from '../app/folders.ts';
import { usePages } from '../app/load.ts';
import { can } from '../app/session.ts';
import { Dialog, openDialog, promptDialog } from '../ui/dialog.tsx';
import { useFocusAfterRemoval } from '../ui/focus-after-removal.ts';
import { FileIcon, Icon } from '../ui/icons.tsx';
import { useLoadAtEnd } from '../ui/load-at-end.ts';
import { MoreButton } from '../ui/page.tsx';

const PAGE = 200;

/** One page of a folder's subfolders; folders come first in every listing, so a page holding a file is the last. */
async function subfolders(parentId: string | null, cursor?: string): Promise<{ items: Item[]; nextCursor: string | null }> {
  const page = await api.files.list({ parentId: parentId ?? undefined, sortBy: 'name', order: 'asc', limit: PAGE, cursor });
  const folders = page.items.filter((i) => i.type === 'folder');
  return { items: folders, nextCursor: folders.length === page.items.length ? page.nextCursor : null };
}

function Picker(props: {
  title: string;
  confirm: string;
  start: string | null;
  moving: Set<string>;
  close: (v?: { id: string | null; name: string }) => void;
}) {
  const [at, setAt] = useState<string | null>(props.start);
  // The path of the folder shown: of `at` once read (until then Move here waits, not to name the folder before).
  const [trail, setTrail] = useState<{ at: string | null; crumbs: Crumb[]; error?: string }>({ at: null, crumbs: [] });
  const [reload, setReload] = useState(0);
  // The first page shows at once; a folder of thousands reads the rest a page at a time, as its end scrolls into view.
  const list = usePages((cursor) => subfolders(at, cursor), [at, reload]);
  const folders = list.items;
  useEffect(() => {
    let live = true;
    (at ? ancestors(at) : Promise.resolve([])).then(
      (crumbs) => live && setTrail({ at, crumbs }),
      (err: Error) => live && setTrail({ at, crumbs: [], error: err.message }),
    );
    return () => {
      live = false;
    };
  }, [at]);
  const ready = trail.at === at && !trail.error;
  const crumbs = trail.at === at ? trail.crumbs : [];
  const error = list.error ?? (trail.at === at ? trail.error : undefined);
  // The More entry leaves with the last page: the focus it held goes to the first folder that page brought.
  const focus = useFocusAfterRemoval([...(folders ?? []).map((f) => f.id), ...(list.more ? ['more'] : [])]);
  // A few rows ahead, so scrolling seldom waits at the end.
  const end = useLoadAtEnd<HTMLLIElement>(list, { root: focus.ref, margin: '0px 0px 150px 0px' });
  const here = crumbs[crumbs.length - 1];
  const intoItself = at !== null && crumbs.some((c) => props.moving.has(c.id));
  return (
    <Dialog title={props.title} onClose={() => props.close()} wide>
      <div class="dialog-body picker">
        <nav aria-label="Folder path" class="picker-path">
          <button type="button" class="crumb" onClick={() => setAt(null)}>
            My files
          </button>
          {crumbs.map((c) => (
            <span key={c.id} class="crumb-wrap">
              <Icon name="chevronRight" size={14} />
              <button type="button" class="crumb" onClick={() => setAt(c.id)}>
                {c.name}
              </button>
            </span>
          ))}
        </nav>
        <ul class="picker-list" aria-label="Folders" aria-busy={folders === null} {...focus}>
          {error && (
            <li class="picker-note" role="alert">
              {error}
            </li>
          )}
          {folders?.length === 0 && <li class="picker-note">No folders here.</li>}
          {folders?.map((f) => (
            <li key={f.id} data-key={f.id}>
              <button type="button" class="picker-item" disabled={props.moving.has(f.id)} onClick={() => setAt(f.id)}>
                <FileIcon family="folder" size={22} />
                <span>{f.name}</span>
                <Icon name="chevronRight" size={16} />
              </button>
            </li>
          ))}
          {/* At the list's end, where scrolling stops: in view, it reads the next page, which comes in above it; for the
              keyboard it is a button, and the focus stays on it. */}
          {list.more && (
            <li data-key="more" ref={end}>
              <MoreButton pages={list} label="More folders" />
            </li>
          )}
        </ul>
        {intoItself && <p class="field-error">A folder cannot be moved into itself or one of its descendants.</p>}
      </div>
      <div class="dialog-actions">
        {can('files.upload') && (
          <button
            type="button"
            class="button ghost push-left"
            onClick={async () => {
              const created = await promptDialog({
                title: 'New folder',
                label: 'Name',
                confirm: 'Create',
                submit: (name) =>
                  api.files.createFolder({ name, parentId: at }).then(
                    () => null,
                    (err: Error) => err.message,
                  ),
              });
              if (created) setReload((n) => n + 1);
            }}
          >
            <Icon name="folderPlus" size={18} /> New folder
          </button>
        )}
        <button type="button" class="button" onClick={() => props.close()}>
          Cancel
        </button>
        <button
          type="button"
          class="button primary"
          disabled={intoItself || !ready}
          onClick={() => props.close({ id: at, name: here?.name ?? 'My files' })}
        >
          {props.confirm}
        </button>
      </div>
    </Dialog>
  );
}

/** Chooses a destination folder; resolves with it, or undefined when cancelled. */
export function pickFolder(opts: { title: string; confirm: string; start: string | null; moving?: string[] }) {
  return openDialog<{ id: string | null; name: string }>((close) => (
    <Picker title={opts.title} confirm={opts.confirm} start={opts.start} moving={new Set(opts.moving ?? [])} close={close} />
  ));
}
