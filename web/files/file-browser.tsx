import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { Item, ItemInfo, SearchHit, SortField, SortOrder } from '../../src/contract/files.ts';
import { cutItems } from '../app/clipboard.ts';
import { ancestors, type Crumb, itemInfo, knownAncestors, peopleFolders, sharedFolders } from '../app/folders.ts';
import { plural } from '../app/format.ts';
import {
  collectionSource,
  folderSource,
  type ListingSource,
  listingFor,
  recentSource,
  searchSource,
  sharedWithMeSource,
  textMatches,
} from '../app/listings.ts';
import { TextMatches } from '../search/text-matches.tsx';
import { sortBy, sortOrder, viewMode } from '../app/prefs.ts';
import { folderPath, navigate } from '../app/router.ts';
import { can } from '../app/session.ts';
import { onFileEvent } from '../app/events.ts';
import { viewingShared } from '../app/people.ts';
import { toast, toastError } from '../app/toasts.ts';
import { screenCommands } from '../palette/commands.ts';
import { openShareDialog } from '../share/share-dialog.tsx';
import { Icon } from '../ui/icons.tsx';
import { LoadError } from '../ui/page.tsx';
import { administeredTeam, administeredTeamOfFolder, loadAdministeredTeams } from '../app/team-folders.ts';
import { LinkScope, SharedLinks, TeamLinks } from '../share/shared-links.tsx';
import { openMenu } from '../ui/menu.tsx';
import { filesFromDrop, filesFromInput } from '../uploads/drop.ts';
import { startUploads } from '../uploads/start.tsx';
import { type Action, type ActionContext, available, emptyTrash, labelOf, moveItems, openItem, type ViewKind } from './actions.tsx';
import { InfoPanel } from './info-panel.tsx';
import { type Column, DRAG_TYPE, ItemList, type SortKey } from './item-list.tsx';

// Photos has its own screen (web/photos/); every other view is this one.
type BrowserKind = Exclude<ViewKind, 'photos'>;

export interface BrowserProps {
  kind: BrowserKind;
  folderId?: string | null;
  query?: string;
}

const TITLES: Record<Exclude<BrowserKind, 'folder' | 'search'>, string> = {
  recent: 'Recent',
  starred: 'Starred',
  shared: 'Shared',
  sharedWithMe: 'Shared with me',
  trash: 'Trash',
};

const COLUMNS: Record<BrowserKind, Column[]> = {
  folder: ['size', 'modified'],
  recent: ['location', 'size', 'accessed'],
  starred: ['size', 'modified'],
  shared: ['sharedAt', 'expires'],
  sharedWithMe: ['owner', 'role', 'sharedAt'],
  trash: ['size', 'deleted'],
  search: ['location', 'size', 'modified'],
};

function sourceFor(kind: BrowserKind, folderId: string | null, query: string, by: SortField, order: SortOrder): ListingSource {
  switch (kind) {
    case 'folder':
      return folderSource(folderId, by, order);
    case 'recent':
      return recentSource;
    case 'search':
      return searchSource(query);
    case 'trash':
      return collectionSource('trash', 'deletedAt', 'desc');
    case 'sharedWithMe':
      return sharedWithMeSource;
    default:
      return collectionSource(kind, by, order);
  }
}

/** `Ctrl` stands for Ctrl or ⌘; a plain letter means no modifier at all. */
function matches(e: KeyboardEvent, keys: string): boolean {
  const parts = keys.split('+');
  const key = parts.pop()!;
  const ctrl = parts.includes('Ctrl');
  const shift = parts.includes('Shift');
  if (ctrl !== (e.ctrlKey || e.metaKey) || shift !== e.shiftKey || e.altKey) return false;
  return key.length === 1 ? e.key.toLowerCase() === key.toLowerCase() : e.key === key;
}

const EMPTY: Record<BrowserKind, string> = {
  folder: 'This folder is empty.',
  recent: 'Files you open or download will appear here.',
  starred: 'Nothing starred yet. Star files and folders (S) to find them here quickly.',
  shared: 'Nothing shared yet. Select items and choose Share to create a link or add people.',
  sharedWithMe: 'Nothing is shared with you yet. When someone on this Coffer shares a file or folder with you, it appears here.',
  trash: 'The trash is empty. Deleted items wait here until you empty the trash or they expire.',
  search: 'No files or folders match.',
};

const isTyping = (t: EventTarget | null) =>
  t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));

interface PageHandlers {
  keydown(e: KeyboardEvent): void;
  paste(e: ClipboardEvent): void;
}

// One pair of page-wide listeners, for the file browser rendered last. A listener per browser, added by
// an effect, still belonged to the folder just left for a moment after the next one showed, and a paste
// then moved the cut items back into it.
let shown: { current: PageHandlers } | null = null;
document.addEventListener('keydown', (e) => shown?.current.keydown(e));
document.addEventListener('paste', (e) => shown?.current.paste(e));

/** Below this width (styles.css) the selection's actions sit in a bar along the bottom of the screen. */
const BOTTOM_BAR_MAX = 760;

/**
 * How many action buttons the bottom bar holds beside Clear, the count and More (about 210 px together),
 * each 44 px wide and 6 apart; above the phone width every action has room.
 */
function selectionBarRoom(width: number): number {
  return width > BOTTOM_BAR_MAX ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor((width - 210) / 50));
}

function useWindowWidth(): number {
  const [width, setWidth] = useState(window.innerWidth);
  useEffect(() => {
    const resized = () => setWidth(window.innerWidth);
    window.addEventListener('resize', resized);
    return () => window.removeEventListener('resize', resized);
  }, []);
  return width;
}

// What the next file browser focuses and selects once it lists it: the folder Backspace left, or an item
// a notification names.
let revealNext: string | null = null;

/** Opens `path` with `id` focused and selected in its list (when it is there). */
export function navigateToItem(path: string, id: string): void {
  revealNext = id;
  navigate(path);
}

/** The file manager: one folder or view, its toolbar, list or grid, selection, keys, drops and details. */
export function FileBrowser({ kind, folderId = null, query = '' }: BrowserProps) {
  const by = sortBy.value;
  const order = sortOrder.value;
  const source = useMemo(() => sourceFor(kind, folderId, query, by, order), [kind, folderId, query, by, order]);
  const listing = listingFor(source);
  const items = listing.items.value;
  const loaded = listing.loaded.value;
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [focus, setFocus] = useState(0);
  const anchor = useRef(0);
  const cols = useRef(1);
  const [infoOpen, setInfoOpen] = useState(false);
  // A folder opened before shows its path at once; a new one when its details arrive.
  const [crumbs, setCrumbs] = useState<Crumb[]>(() => (kind === 'folder' && folderId ? (knownAncestors(folderId) ?? []) : []));
  const [sharedWithMe, setSharedWithMe] = useState<ItemInfo['sharedWithMe']>(undefined);
  const [slow, setSlow] = useState(false);
  const [dropping, setDropping] = useState(false);
  const windowWidth = useWindowWidth();
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  // Dropped once shown, or as soon as the person acts on the list themselves.
  const reveal = useRef<string | null>(null);
  if (revealNext) {
    reveal.current = revealNext;
    revealNext = null;
  }
  // Bumped to move keyboard focus into the list, to the focused item, wherever focus was.
  const [claimFocus, setClaimFocus] = useState(0);

  useEffect(() => {
    listing.watchers++;
    if (listing.stale || !listing.loaded.value) void listing.refresh();
    // Skeletons only when the wait is noticeable.
    const t = setTimeout(() => setSlow(true), 150);
    return () => {
      listing.watchers--;
      clearTimeout(t);
      setSlow(false);
    };
  }, [listing]);

  useEffect(() => {
    if (kind !== 'folder' || !folderId) return setCrumbs([]);
    let live = true;
    ancestors(folderId).then(
      (c) => live && setCrumbs(c),
      (err) => live && toastError(err),
    );
    itemInfo(folderId).then(
      (info) => {
        if (!live) return;
        setSharedWithMe(info.sharedWithMe);
        if (info.sharedWithMe) void loadAdministeredTeams();
      },
      () => {},
    );
    return () => {
      live = false;
    };
  }, [kind, folderId, items.length]);

  useEffect(() => {
    viewingShared.value = sharedWithMe !== undefined;
    return () => void (viewingShared.value = false);
  }, [sharedWithMe]);

  // The owner stopped sharing what this page shows: leave it at once.
  useEffect(
    () =>
      onFileEvent((e) => {
        if (e.type !== 'share.removed' || !sharedWithMe || e.data?.id !== sharedWithMe.rootId) return;
        toast(`“${e.data.name}” is no longer shared with you`);
        navigate('/shared-with-me', { replace: true });
      }),
    [sharedWithMe],
  );

  // Before the next paint, so keys pressed as soon as the list shows act after it, not before.
  useLayoutEffect(() => {
    const id = reveal.current;
    if (!id || !loaded) return;
    const at = items.findIndex((i) => i.id === id);
    if (at < 0) {
      // Folders come first, so the folder left is found after a few pages at most.
      if (listing.more.value) void listing.loadMore();
      else reveal.current = null;
      return;
    }
    reveal.current = null;
    setSelected(new Set([id]));
    setFocus(at);
    anchor.current = at;
    setClaimFocus((n) => n + 1);
  }, [items, loaded]);

  // Team folders listed: which of them this account administers decides where their links are made.
  useEffect(() => {
    if (items.some((i) => i.teamFolder)) void loadAdministeredTeams();
  }, [items]);

  // Items that disappeared (moved, deleted elsewhere) leave the selection.
  useEffect(() => {
    if (!selected.size) return;
    const present = new Set(items.map((i) => i.id));
    if ([...selected].some((id) => !present.has(id))) setSelected(new Set([...selected].filter((id) => present.has(id))));
    if (focus >= items.length && items.length) setFocus(items.length - 1);
  }, [items]);

  const selection = items.filter((i) => selected.has(i.id));
  const select = (ids: string[]) => {
    setSelected(new Set(ids));
    const at = items.findIndex((i) => i.id === ids[0]);
    if (at >= 0) setFocus(at);
  };
  const ctx: ActionContext = {
    kind,
    folderId,
    selection,
    listing,
    select,
    toggleInfo: () => setInfoOpen((o) => !o),
    pickUpload: (folder) => (folder ? folderInput : fileInput).current?.click(),
    sharedRole: sharedWithMe?.role,
    team:
      administeredTeam(sharedWithMe?.owner?.id)?.id ??
      (selection.length === 1 && selection[0]!.teamFolder ? administeredTeamOfFolder(selection[0]!.id)?.id : undefined),
  };
  const actions = available(ctx);
  const run = (a: Action) => Promise.resolve(a.run(ctx)).catch(toastError);
  useEffect(() => {
    screenCommands.value = actions.map((a) => ({ label: labelOf(a, ctx), keys: a.keys, run: () => void run(a) }));
  });
  useEffect(() => () => void (screenCommands.value = []), []);

  const selectRange = (to: number) => {
    const [a, b] = [Math.min(anchor.current, to), Math.max(anchor.current, to)];
    setSelected(new Set(items.slice(a, b + 1).map((i) => i.id)));
  };

  const moveFocus = (to: number, e: KeyboardEvent) => {
    const next = Math.max(0, Math.min(items.length - 1, to));
    setFocus(next);
    if (e.shiftKey) selectRange(next);
    else if (!(e.ctrlKey || e.metaKey)) {
      anchor.current = next;
      setSelected(new Set(items[next] ? [items[next]!.id] : []));
    }
  };

  const parentId = crumbs.length > 1 ? crumbs[crumbs.length - 2]!.id : null;

  const onKey = (e: KeyboardEvent, c: number) => {
    cols.current = c;
    if (e.defaultPrevented || isTyping(e.target) || document.querySelector('dialog[open], .menu')) return;
    reveal.current = null;
    const k = e.key;
    const page = 10 * c;
    if (k === 'ArrowDown') moveFocus(focus + c, e);
    else if (k === 'ArrowUp' && !e.altKey) moveFocus(focus - c, e);
    else if (k === 'ArrowRight' && c > 1) moveFocus(focus + 1, e);
    else if (k === 'ArrowLeft' && c > 1) moveFocus(focus - 1, e);
    else if (k === 'Home') moveFocus(0, e);
    else if (k === 'End') moveFocus(items.length - 1, e);
    else if (k === 'PageDown') moveFocus(focus + page, e);
    else if (k === 'PageUp') moveFocus(focus - page, e);
    else if ((k === 'Backspace' || (k === 'ArrowUp' && e.altKey)) && kind === 'folder' && folderId)
      navigateToItem(folderPath(parentId), folderId);
    else if (k === 'a' && (e.ctrlKey || e.metaKey)) setSelected(new Set(items.map((i) => i.id)));
    else if (k === 'Escape' && (selected.size || infoOpen)) {
      setSelected(new Set());
      setInfoOpen(false);
    } else if (k === ' ' && (e.ctrlKey || e.metaKey) && items[focus]) {
      const id = items[focus]!.id;
      const next = new Set(selected);
      if (!next.delete(id)) next.add(id);
      setSelected(next);
    } else if (k === ' ' && items[focus]?.type === 'file' && kind !== 'trash') openItem(ctx, items[focus]!);
    else if ((k === 'ContextMenu' || (k === 'F10' && e.shiftKey)) && items[focus]) {
      const el = document.querySelector(`[data-index="${focus}"]`)?.getBoundingClientRect();
      showMenu(focus, el?.left ?? 100, el?.bottom ?? 100);
    } else if (k === 'Enter' && items[focus] && kind !== 'trash') openItem(ctx, items[focus]!);
    else {
      // Enter and Paste have their own paths (open the focused item; the paste event).
      const a = actions.find((x) => x.keys && x.id !== 'paste' && x.id !== 'open' && matches(e, x.keys));
      if (!a) return;
      run(a);
    }
    e.preventDefault();
  };

  const page = useRef<PageHandlers>(null!);
  page.current = {
    // Keys typed with nothing focused act on the list too.
    keydown: (e) => {
      if (e.target === document.body) onKey(e, cols.current);
    },
    // Ctrl/Cmd+V: files on the clipboard are uploaded here; otherwise cut items are moved here.
    paste: (e) => {
      if (kind !== 'folder' || isTyping(e.target) || document.querySelector('dialog[open]')) return;
      const files = [...(e.clipboardData?.files ?? [])];
      if (files.length && can('files.upload')) {
        e.preventDefault();
        void startUploads(
          files.map((file) => ({ file })),
          folderId,
          listing,
        );
      } else if (cutItems.value && can('files.edit')) {
        e.preventDefault();
        const a = actions.find((x) => x.id === 'paste');
        if (a) run(a);
      }
    },
  };
  shown = page;
  useEffect(
    () => () => {
      if (shown === page) shown = null;
    },
    [],
  );

  const showMenu = (index: number, x: number, y: number) => {
    const item = items[index];
    if (!item) return;
    let sel = selection;
    if (!selected.has(item.id)) {
      sel = [item];
      setSelected(new Set([item.id]));
      setFocus(index);
      anchor.current = index;
    }
    const menuCtx = { ...ctx, selection: sel };
    openMenu(
      x,
      y,
      available(menuCtx)
        .filter((a) => !a.global)
        .map((a) => ({
          label: labelOf(a, menuCtx),
          icon: a.icon,
          keys: a.keys,
          danger: a.danger,
          run: () => void Promise.resolve(a.run(menuCtx)).catch(toastError),
        })),
      sel.length === 1 ? `Actions for ${sel[0]!.name}` : `Actions for ${sel.length} items`,
    );
  };

  const dropOnFolder = async (target: { id: string | null; name: string }, data: DataTransfer) => {
    const raw = data.getData(DRAG_TYPE);
    if (raw) {
      if (!can('files.edit')) return;
      const ids = new Set(JSON.parse(raw) as string[]);
      const moving = items.filter((i) => ids.has(i.id) && i.id !== target.id);
      if (moving.length) await moveItems(moving, target);
    } else if (data.types.includes('Files') && can('files.upload')) {
      const dropped = await filesFromDrop(data);
      await startUploads(dropped.files, target.id, target.id === folderId ? listing : null, dropped.emptyFolders);
    }
  };

  const prefetch = useRef<ReturnType<typeof setTimeout> | null>(null);
  const onHover = (item: Item) => {
    if (prefetch.current) clearTimeout(prefetch.current);
    if (item.type !== 'folder') return;
    prefetch.current = setTimeout(() => {
      const l = listingFor(folderSource(item.id, by, order));
      if (!l.loaded.value) void l.refresh();
    }, 120);
  };

  const sortable = kind === 'folder' || kind === 'starred' || kind === 'shared';
  const title =
    kind === 'folder' ? (crumbs[crumbs.length - 1]?.name ?? 'My files') : kind === 'search' ? `Results for “${query}”` : TITLES[kind];
  const sharedRoot = kind === 'folder' ? [...crumbs].reverse().find((c) => sharedFolders.value.has(c.id)) : undefined;
  // Shared with people only (no link above it either): said so, and never managed as a link.
  const peopleRoot = kind === 'folder' && !sharedRoot ? [...crumbs].reverse().find((c) => peopleFolders.value.has(c.id)) : undefined;
  const globals = actions.filter((a) => a.global);
  const selectionActions = actions.filter((a) => !a.global && !a.secondary && a.id !== 'open');
  // On a phone the bar keeps what fits (Delete always) and hands the rest to More.
  const room = selectionBarRoom(windowWidth) - selectionActions.filter((a) => a.danger).length;
  let kept = 0;
  const onSelection = selectionActions.filter((a) => a.danger || kept++ < room);
  const more = [...selectionActions.filter((a) => !onSelection.includes(a)), ...actions.filter((a) => !a.global && a.secondary)];
  const info = infoOpen && selection.length === 1 ? selection[0]! : null;
  const canDrop = kind === 'folder' && can('files.upload');

  const inText = kind === 'search' && textMatches.value.q === query ? textMatches.value.hits : [];
  const list = (
    <ItemList
      items={items}
      canShare={can('files.share') && kind !== 'sharedWithMe' && kind !== 'trash' && !ctx.sharedRole}
      mode={viewMode.value}
      label={title}
      columns={COLUMNS[kind]}
      selected={selected}
      focus={Math.min(focus, Math.max(0, items.length - 1))}
      claimFocus={claimFocus}
      sort={sortable ? { by: by as SortKey, order } : null}
      onSort={
        sortable
          ? (key) => {
              if (by === key) sortOrder.value = order === 'asc' ? 'desc' : 'asc';
              else {
                sortBy.value = key;
                sortOrder.value = key === 'name' ? 'asc' : 'desc';
              }
            }
          : undefined
      }
      onPress={(index, e, touch) => {
        reveal.current = null;
        const item = items[index]!;
        setFocus(index);
        if (e.shiftKey) selectRange(index);
        else if (e.ctrlKey || e.metaKey || (touch && selected.size > 0)) {
          const next = new Set(selected);
          if (!next.delete(item.id)) next.add(item.id);
          setSelected(next);
          anchor.current = index;
        } else if (touch) openItem(ctx, item);
        else {
          setSelected(new Set([item.id]));
          anchor.current = index;
        }
      }}
      onOpen={(item) => openItem(ctx, item)}
      onToggle={(index) => {
        const id = items[index]!.id;
        const next = new Set(selected);
        if (!next.delete(id)) next.add(id);
        setSelected(next);
        anchor.current = index;
      }}
      onMenu={showMenu}
      onKey={onKey}
      onNearEnd={() => void listing.loadMore()}
      onFocusIndex={(index) => {
        reveal.current = null;
        setFocus(index);
      }}
      onHover={onHover}
      onDropOnFolder={(folder, data) => void dropOnFolder(folder, data)}
      dragIds={(index) => {
        const item = items[index]!;
        return selected.has(item.id) ? [...selected] : [item.id];
      }}
      hasMore={listing.more.value}
    />
  );

  return (
    <div
      class={`browser ${info ? 'with-info' : ''}`}
      onDragOver={(e) => {
        if (!canDrop || !e.dataTransfer?.types.includes('Files')) return;
        e.preventDefault();
        setDropping(true);
      }}
      onDragLeave={(e) => {
        if (e.currentTarget === e.target || !(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node)) setDropping(false);
      }}
      onDrop={(e) => {
        setDropping(false);
        if (!canDrop || !e.dataTransfer?.types.includes('Files')) return;
        e.preventDefault();
        void dropOnFolder({ id: folderId, name: title }, e.dataTransfer);
      }}
    >
      <header class="browser-head">
        {kind === 'folder' ? (
          <nav class="breadcrumbs" aria-label="Breadcrumb">
            <ol>
              {sharedWithMe && (
                <>
                  <li>
                    <a class="crumb" href="/shared-with-me">
                      Shared with me
                    </a>
                  </li>
                  <li>
                    <Icon name="chevronRight" size={16} />
                    <span class="crumb owner-crumb">{sharedWithMe.owner?.name || sharedWithMe.owner?.email}</span>
                  </li>
                </>
              )}
              {(sharedWithMe ? crumbs : [{ id: null as string | null, name: 'My files' }, ...crumbs]).map((c, n, all) => (
                <li key={c.id ?? 'root'}>
                  {(n > 0 || sharedWithMe) && <Icon name="chevronRight" size={16} />}
                  {n === all.length - 1 ? (
                    <h1 aria-current="page" class="crumb current">
                      {c.name}
                    </h1>
                  ) : (
                    <a
                      class="crumb"
                      href={folderPath(c.id)}
                      onDragOver={(e) => {
                        if (e.dataTransfer?.types.includes(DRAG_TYPE) || e.dataTransfer?.types.includes('Files')) {
                          e.preventDefault();
                          e.stopPropagation();
                          (e.currentTarget as HTMLElement).classList.add('drop');
                        }
                      }}
                      onDragLeave={(e) => (e.currentTarget as HTMLElement).classList.remove('drop')}
                      onDrop={(e) => {
                        e.preventDefault();
                        e.stopPropagation();
                        (e.currentTarget as HTMLElement).classList.remove('drop');
                        void dropOnFolder(c, e.dataTransfer!);
                      }}
                    >
                      {c.name}
                    </a>
                  )}
                </li>
              ))}
            </ol>
          </nav>
        ) : (
          <h1 class="view-title">{title}</h1>
        )}
        <div class="view-switch" role="group" aria-label="View">
          <button
            type="button"
            class="icon-button"
            aria-label="List view"
            aria-pressed={viewMode.value === 'list'}
            onClick={() => (viewMode.value = 'list')}
          >
            <Icon name="list" />
          </button>
          <button
            type="button"
            class="icon-button"
            aria-label="Grid view"
            aria-pressed={viewMode.value === 'grid'}
            onClick={() => (viewMode.value = 'grid')}
          >
            <Icon name="grid" />
          </button>
          <button type="button" class="icon-button" aria-label="Details" aria-pressed={infoOpen} onClick={() => setInfoOpen(!infoOpen)}>
            <Icon name="info" />
          </button>
        </div>
      </header>

      <div
        class={`toolbar ${selection.length ? 'has-selection' : ''}`}
        role="toolbar"
        aria-label={selection.length ? 'Selection actions' : 'Folder actions'}
      >
        {selection.length > 0 ? (
          <>
            <button type="button" class="icon-button" aria-label="Clear selection" onClick={() => setSelected(new Set())}>
              <Icon name="close" size={18} />
            </button>
            <span class="selection-count" aria-live="polite">
              {selection.length} selected
            </span>
            {onSelection.map((a) => (
              <button
                key={a.id}
                type="button"
                class={`tool ${a.danger ? 'danger' : ''}`}
                title={a.keys ? `${labelOf(a, ctx)} (${a.keys})` : undefined}
                aria-keyshortcuts={a.keys}
                onClick={() => run(a)}
              >
                <Icon name={a.icon} size={18} />
                <span class="tool-label">{labelOf(a, ctx)}</span>
              </button>
            ))}
            {more.length > 0 && (
              <button
                type="button"
                class="tool"
                aria-label="More actions"
                aria-haspopup="menu"
                onClick={(e) => {
                  const r = (e.currentTarget as HTMLElement).getBoundingClientRect();
                  openMenu(
                    r.left,
                    r.bottom + 4,
                    more.map((a) => ({ label: labelOf(a, ctx), icon: a.icon, keys: a.keys, run: () => void run(a) })),
                    'More actions',
                  );
                }}
              >
                <Icon name="more" size={18} />
              </button>
            )}
          </>
        ) : (
          <>
            {globals.map((a) => (
              <button
                key={a.id}
                type="button"
                class={`tool global ${a.id === 'upload-files' ? 'primary' : ''}`}
                title={a.keys ? `${labelOf(a, ctx)} (${a.keys})` : undefined}
                aria-keyshortcuts={a.keys}
                onClick={() => run(a)}
              >
                <Icon name={a.icon} size={18} />
                <span class="tool-label">{labelOf(a, ctx)}</span>
              </button>
            ))}
            {kind === 'trash' && can('files.trash') && items.length > 0 && (
              <button type="button" class="tool danger" onClick={() => emptyTrash(listing).catch(toastError)}>
                <Icon name="trash" size={18} />
                <span class="tool-label">Empty trash</span>
              </button>
            )}
            {viewMode.value === 'grid' && sortable && (
              <label class="sort-select">
                <span class="sr-only">Sort by</span>
                <select
                  value={`${by}:${order}`}
                  onChange={(e) => {
                    const [b, o] = e.currentTarget.value.split(':') as [typeof by, typeof order];
                    sortBy.value = b;
                    sortOrder.value = o;
                  }}
                >
                  <option value="name:asc">Name A–Z</option>
                  <option value="name:desc">Name Z–A</option>
                  <option value="modified:desc">Newest first</option>
                  <option value="modified:asc">Oldest first</option>
                  <option value="size:desc">Largest first</option>
                  <option value="size:asc">Smallest first</option>
                </select>
              </label>
            )}
          </>
        )}
      </div>

      {kind === 'shared' && can('files.share') && <SharedLinks />}
      {kind === 'shared' && can('files.share') && <TeamLinks />}
      {sharedRoot && (
        <div class="banner shared-banner" role="note">
          <Icon name="link" size={18} />
          <span>
            {sharedRoot.id === folderId ? 'This folder is shared by link' : `Inside “${sharedRoot.name}”, which is shared by link`}:{' '}
            <LinkScope folderId={sharedRoot.id} canAsk={can('files.share')} />
          </span>
          {can('files.share') && (
            <button
              type="button"
              class="button small"
              onClick={() =>
                openShareDialog(
                  [
                    {
                      id: sharedRoot.id,
                      name: sharedRoot.name,
                      type: 'folder',
                      shared: true,
                      expiresAt: sharedFolders.value.get(sharedRoot.id) ?? null,
                    } as Item,
                  ],
                  { part: 'link' },
                )
              }
            >
              Manage link
            </button>
          )}
        </div>
      )}

      {peopleRoot && (
        <div class="banner shared-banner" role="note">
          <Icon name="users" size={18} />
          <span>
            {peopleRoot.id === folderId ? 'This folder is shared with people' : `Inside “${peopleRoot.name}”, which is shared with people`}:
            only the people you added can see it, and it has no public link.
          </span>
          {can('files.share') && (
            <button
              type="button"
              class="button small"
              onClick={() =>
                openShareDialog([{ id: peopleRoot.id, name: peopleRoot.name, type: 'folder', shared: false, expiresAt: null } as Item], {
                  part: 'people',
                })
              }
            >
              Manage sharing
            </button>
          )}
        </div>
      )}
      {listing.error.value && <LoadError message={listing.error.value} retry={() => listing.refresh()} />}

      <div class="browser-body">
        {!loaded ? (
          slow && (
            <div class="skeleton" role="progressbar" aria-busy="true" aria-label="Loading">
              {Array.from({ length: 8 }, (_, n) => (
                <div key={n} class="skeleton-row" />
              ))}
            </div>
          )
        ) : items.length === 0 && listing.error.value ? (
          <div class="empty">
            <p>Nothing to show until this loads. The reason is above.</p>
          </div>
        ) : items.length === 0 && inText.length === 0 ? (
          <div class="empty">
            <p>{kind === 'search' ? `No files or folders match “${query}”.` : EMPTY[kind]}</p>
            {kind === 'folder' && can('files.upload') && <p class="muted">Drop files here, paste them, or use Upload files.</p>}
          </div>
        ) : (
          <NameMatches list={list} names={items.length} inText={inText} query={query} />
        )}
        {info && <InfoPanel item={info} onClose={() => setInfoOpen(false)} />}
        {dropping && (
          <div class="drop-overlay" aria-hidden="true">
            <Icon name="upload" size={32} />
            <p>Drop to upload to {title}</p>
          </div>
        )}
      </div>
      {/* On a phone the toolbar's upload and new-folder buttons give way to one floating button. */}
      {selection.length === 0 && globals.length > 0 && (
        <button
          type="button"
          class="fab"
          aria-label="New"
          aria-haspopup="menu"
          onClick={(e) => {
            const r = e.currentTarget.getBoundingClientRect();
            openMenu(
              r.right,
              r.top,
              globals.map((a) => ({ label: labelOf(a, ctx), icon: a.icon, run: () => run(a) })),
              'New',
            );
          }}
        >
          <Icon name="plus" size={26} />
        </button>
      )}
      {loaded && (items.length > 0 || inText.length > 0) && (
        <p class="list-foot muted" aria-live="polite">
          {plural(items.length, 'item')}
          {listing.more.value ? ' loaded; more as you scroll' : ''}
          {inText.length > 0 ? `, ${inText.length} more in the text` : ''}
        </p>
      )}

      <input
        ref={fileInput}
        type="file"
        multiple
        hidden
        onChange={(e) => {
          const files = filesFromInput(e.currentTarget.files!);
          e.currentTarget.value = '';
          void startUploads(files, folderId, listing);
        }}
      />
      <input
        ref={folderInput}
        type="file"
        hidden
        {...{ webkitdirectory: true }}
        onChange={(e) => {
          const files = filesFromInput(e.currentTarget.files!);
          e.currentTarget.value = '';
          void startUploads(files, folderId, listing);
        }}
      />
    </div>
  );
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
