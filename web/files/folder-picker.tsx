import { useEffect, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { ancestors, type Crumb } from '../app/folders.ts';
import { can } from '../app/session.ts';
import { Dialog, openDialog, promptDialog } from '../ui/dialog.tsx';
import { FileIcon, Icon } from '../ui/icons.tsx';

async function subfolders(parentId: string | null): Promise<Item[]> {
  const out: Item[] = [];
  let cursor: string | undefined;
  // Folders come first in every listing: stop at the first page that holds a file.
  do {
    const page = await api.files.list({ parentId: parentId ?? undefined, sortBy: 'name', order: 'asc', limit: 500, cursor });
    const folders = page.items.filter((i) => i.type === 'folder');
    out.push(...folders);
    cursor = folders.length === page.items.length ? (page.nextCursor ?? undefined) : undefined;
  } while (cursor);
  return out;
}

function Picker(props: {
  title: string;
  confirm: string;
  start: string | null;
  moving: Set<string>;
  close: (v?: { id: string | null; name: string }) => void;
}) {
  const [at, setAt] = useState<string | null>(props.start);
  const [trail, setTrail] = useState<Crumb[]>([]);
  const [folders, setFolders] = useState<Item[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  useEffect(() => {
    let live = true;
    setFolders(null);
    setError(null);
    Promise.all([subfolders(at), at ? ancestors(at) : Promise.resolve([])])
      .then(([f, t]) => {
        if (!live) return;
        setFolders(f);
        setTrail(t);
      })
      .catch((err: Error) => live && setError(err.message));
    return () => {
      live = false;
    };
  }, [at, reload]);
  const here = trail[trail.length - 1];
  const intoItself = at !== null && trail.some((c) => props.moving.has(c.id));
  return (
    <Dialog title={props.title} onClose={() => props.close()} wide>
      <div class="dialog-body picker">
        <nav aria-label="Folder path" class="picker-path">
          <button type="button" class="crumb" onClick={() => setAt(null)}>
            My files
          </button>
          {trail.map((c) => (
            <span key={c.id} class="crumb-wrap">
              <Icon name="chevronRight" size={14} />
              <button type="button" class="crumb" onClick={() => setAt(c.id)}>
                {c.name}
              </button>
            </span>
          ))}
        </nav>
        <ul class="picker-list" aria-label="Folders" aria-busy={folders === null}>
          {error && (
            <li class="picker-note" role="alert">
              {error}
            </li>
          )}
          {folders?.length === 0 && <li class="picker-note">No folders here.</li>}
          {folders?.map((f) => (
            <li key={f.id}>
              <button type="button" class="picker-item" disabled={props.moving.has(f.id)} onClick={() => setAt(f.id)}>
                <FileIcon family="folder" size={22} />
                <span>{f.name}</span>
                <Icon name="chevronRight" size={16} />
              </button>
            </li>
          ))}
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
          disabled={intoItself}
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
