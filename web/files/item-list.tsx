import { Fragment } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { SharedWithMeItem } from '../../src/contract/sharing.ts';
import { itemInfo, peopleFolders } from '../app/folders.ts';
import { displayName, exactDate, formatDate, formatExpiry, formatSize, middleTruncate } from '../app/format.ts';
import { hideExtensions } from '../app/session.ts';
import { copyItemLink } from '../share/link-actions.ts';
import { Icon } from '../ui/icons.tsx';
import { ItemPicture } from './item-picture.tsx';
import { VideoBadge, VideoWords } from './video-badge.tsx';
import { Name } from '../ui/name.tsx';
import { useVirtualizer } from '../ui/virtual.ts';

export type Column = 'size' | 'modified' | 'deleted' | 'sharedAt' | 'expires' | 'location' | 'accessed' | 'owner' | 'role';
export type SortKey = 'name' | 'size' | 'modified';

const COLUMN_TITLES: Record<Column, string> = {
  size: 'Size',
  modified: 'Modified',
  deleted: 'Deleted',
  sharedAt: 'Shared',
  expires: 'Link',
  location: 'Folder',
  accessed: 'Opened',
  owner: 'Shared by',
  role: 'Access',
};

export const DRAG_TYPE = 'application/x-coffer-items';

export interface ListProps {
  items: Item[];
  mode: 'list' | 'grid';
  label: string;
  columns: Column[];
  selected: Set<string>;
  focus: number;
  /** A change moves keyboard focus to `focus` even when it is outside the list. */
  claimFocus?: number;
  sort: { by: SortKey; order: 'asc' | 'desc' } | null;
  onSort?: (by: SortKey) => void;
  /** A click or tap on an item, with its modifiers (selection and opening are the caller's rules). */
  onPress(index: number, e: MouseEvent, touch: boolean): void;
  onOpen(item: Item): void;
  onToggle(index: number): void;
  onMenu(index: number, x: number, y: number): void;
  onKey(e: KeyboardEvent, cols: number): void;
  onNearEnd(): void;
  onFocusIndex(index: number): void;
  /** The pointer rests on an item: a folder's contents can be fetched before it is opened. */
  onHover?(item: Item): void;
  /** Drops onto a folder: items dragged from the list, or files from the desktop. */
  onDropOnFolder(folder: Item, data: DataTransfer): void;
  /** Ids being dragged (set by dragstart) so the screen can act on drop. */
  dragIds(index: number): string[];
  hasMore: boolean;
  /** The caller may manage links here: a row with a link offers Copy link. */
  canShare?: boolean;
}

export function FolderName({ id }: { id: string | null }) {
  const [name, setName] = useState(id ? '' : 'My files');
  useEffect(() => {
    if (!id) return;
    let live = true;
    itemInfo(id).then(
      (i) => live && setName(i.name),
      () => live && setName('—'),
    );
    return () => {
      live = false;
    };
  }, [id]);
  return <>{name}</>;
}

function cell(item: Item, col: Column) {
  switch (col) {
    case 'size':
      return item.type === 'folder' ? <span class="muted">—</span> : formatSize(item.size ?? 0);
    case 'modified':
      return <span title={exactDate(item.modified)}>{formatDate(item.modified)}</span>;
    case 'accessed':
      return <span title={exactDate(item.accessedAt)}>{formatDate(item.accessedAt)}</span>;
    case 'deleted':
      return <span title={exactDate(item.deletedAt)}>{formatDate(item.deletedAt)}</span>;
    case 'sharedAt':
      return <span title={exactDate(item.sharedAt)}>{formatDate(item.sharedAt)}</span>;
    case 'expires':
      // Shared with people only: no link to expire.
      if (!item.shared) return <span class="muted">People only</span>;
      return <span title={item.expiresAt ? exactDate(item.expiresAt) : undefined}>{formatExpiry(item.expiresAt)}</span>;
    case 'location':
      return <FolderName id={item.parentId} />;
    case 'owner': {
      const owner = (item as Partial<SharedWithMeItem>).owner;
      return <span title={owner?.email}>{owner?.name || owner?.email}</span>;
    }
    case 'role':
      return (item as Partial<SharedWithMeItem>).role === 'editor' ? 'Can edit' : 'Can view';
  }
}

function Badges({ item }: { item: Item }) {
  return (
    <>
      {item.starred && (
        <span class="badge star" title="Starred">
          <Icon name="star" size={14} />
          <span class="sr-only">, starred</span>
        </span>
      )}
      {item.teamFolder && (
        <span class="badge shared" title="Team folder: it belongs to a team you are in">
          <Icon name="users" size={14} />
          <span class="sr-only">, team folder</span>
        </span>
      )}
      {item.library && (
        <span class="badge shared" title={item.unavailable ? 'Library: unavailable now' : 'Library: a folder on the server, not encrypted'}>
          <Icon name="server" size={14} />
          <span class="sr-only">, library{item.unavailable ? ', unavailable' : ''}</span>
        </span>
      )}
      {!item.shared && peopleFolders.value.has(item.id) && (
        <span class="badge shared" title="Shared with people: no public link">
          <Icon name="users" size={14} />
          <span class="sr-only">, shared with people</span>
        </span>
      )}
      {item.shared && (
        <span class="badge shared" title={`Shared by link · ${formatExpiry(item.expiresAt)}`}>
          <Icon name="link" size={14} />
          <span class="sr-only">, shared</span>
        </span>
      )}
    </>
  );
}

const ROW = 48;
const TILE_W = 164;
const TILE_H = 188;

/** The list and grid views: virtualized, keyboard-navigable, selectable, drag sources and drop targets. */
export function ItemList(p: ListProps) {
  const scroller = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const touch = useRef(false);
  const longPress = useRef<ReturnType<typeof setTimeout> | null>(null);
  // A long press selects; the click that follows it must not also open the item.
  const swallowClick = useRef(false);
  const [dropOn, setDropOn] = useState<string | null>(null);
  const hide = hideExtensions.value;
  const cols = p.mode === 'grid' ? Math.max(2, Math.floor((width - 16) / TILE_W)) : 1;
  const rowCount = Math.ceil(p.items.length / cols);
  const rowSize = p.mode === 'grid' ? TILE_H : ROW;
  // Tiles share the row's width; a name gets the two lines its tile has room for, losing its middle.
  const tileChars = Math.max(16, 2 * Math.floor(((width - 16) / cols - 24) / 7.5) - 2);

  // List and grid scroll in different elements: switching views must observe the new one.
  useLayoutEffect(() => {
    const el = scroller.current!;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    setWidth(el.clientWidth);
    return () => ro.disconnect();
  }, [p.mode]);

  const v = useVirtualizer({ count: rowCount, getScrollElement: () => scroller.current, estimateSize: () => rowSize, overscan: 6 });
  useEffect(() => v.measure(), [p.mode, cols]);
  const rows = v.getVirtualItems();

  // Fetch the next page before the end comes into view.
  const last = rows[rows.length - 1];
  useEffect(() => {
    if (p.hasMore && last && last.index >= rowCount - 30) p.onNearEnd();
  }, [last?.index, rowCount, p.hasMore]);

  // Keyboard focus follows the focus index, scrolling it into view first.
  const focusWanted = useRef(false);
  const focusItem = () => {
    if (!focusWanted.current) return;
    const el = scroller.current?.querySelector<HTMLElement>(`[data-index="${p.focus}"]`);
    if (el) {
      el.focus({ preventScroll: true });
      focusWanted.current = false;
    }
  };
  useLayoutEffect(focusItem);
  const claimed = useRef(p.claimFocus);
  useEffect(() => {
    const claim = p.claimFocus !== claimed.current;
    claimed.current = p.claimFocus;
    if (claim || scroller.current?.contains(document.activeElement)) {
      focusWanted.current = true;
      v.scrollToIndex(Math.floor(p.focus / cols), { align: 'auto' });
      // An item already in view gets no render from the scroll: focus it now.
      focusItem();
    }
  }, [p.focus, p.claimFocus]);

  const itemProps = (item: Item, index: number) => ({
    'data-index': index,
    tabIndex: index === p.focus ? 0 : -1,
    'aria-selected': p.selected.has(item.id),
    draggable: true,
    onPointerDown: (e: PointerEvent) => {
      touch.current = e.pointerType === 'touch';
      if (touch.current) {
        longPress.current = setTimeout(() => {
          longPress.current = null;
          swallowClick.current = true;
          p.onToggle(index);
          navigator.vibrate?.(20);
        }, 500);
      }
    },
    onPointerUp: () => longPress.current && clearTimeout(longPress.current),
    onPointerMove: () => longPress.current && clearTimeout(longPress.current),
    onPointerCancel: () => longPress.current && clearTimeout(longPress.current),
    onClick: (e: MouseEvent) => {
      if (swallowClick.current) {
        swallowClick.current = false;
        return;
      }
      p.onPress(index, e, touch.current);
    },
    onDblClick: () => p.onOpen(item),
    onPointerEnter: () => p.onHover?.(item),
    onFocus: () => index !== p.focus && p.onFocusIndex(index),
    onContextMenu: (e: MouseEvent) => {
      e.preventDefault();
      if (longPress.current) clearTimeout(longPress.current);
      p.onMenu(index, e.clientX, e.clientY);
    },
    onDragStart: (e: DragEvent) => {
      const ids = p.dragIds(index);
      e.dataTransfer!.setData(DRAG_TYPE, JSON.stringify(ids));
      e.dataTransfer!.effectAllowed = 'move';
    },
    ...(item.type === 'folder'
      ? {
          onDragOver: (e: DragEvent) => {
            const types = e.dataTransfer?.types ?? [];
            if (!types.includes(DRAG_TYPE) && !types.includes('Files')) return;
            e.preventDefault();
            e.stopPropagation();
            setDropOn(item.id);
          },
          onDragLeave: () => setDropOn((d) => (d === item.id ? null : d)),
          onDrop: (e: DragEvent) => {
            e.preventDefault();
            e.stopPropagation();
            setDropOn(null);
            p.onDropOnFolder(item, e.dataTransfer!);
          },
        }
      : {}),
  });

  const menuButton = (index: number, name: string) => (
    <button
      type="button"
      class="icon-button row-more"
      tabIndex={-1}
      aria-label={`More actions for ${name}`}
      onClick={(e) => {
        e.stopPropagation();
        const r = (e.currentTarget as HTMLElement).getBoundingClientRect();
        p.onMenu(index, r.left, r.bottom);
      }}
    >
      <Icon name="more" size={18} />
    </button>
  );

  const check = (index: number, item: Item, name: string) => (
    <span class="check">
      <input
        type="checkbox"
        tabIndex={-1}
        checked={p.selected.has(item.id)}
        aria-label={`Select ${name}`}
        onClick={(e) => {
          e.stopPropagation();
          p.onToggle(index);
        }}
      />
    </span>
  );

  const sortHeader = (key: SortKey, title: string) => {
    const active = p.sort?.by === key;
    const ariaSort = active ? (p.sort!.order === 'asc' ? 'ascending' : 'descending') : 'none';
    return (
      <div role="columnheader" class={`col col-${key === 'name' ? 'name' : key}`} aria-sort={p.sort ? ariaSort : undefined}>
        {p.onSort ? (
          <button type="button" class="sort" onClick={() => p.onSort!(key)}>
            {title}
            {active && <Icon name={p.sort!.order === 'asc' ? 'arrowUp' : 'arrowDown'} size={14} />}
          </button>
        ) : (
          title
        )}
      </div>
    );
  };

  const label = (item: Item, name: string) =>
    `${name}, ${item.type === 'folder' ? 'folder' : formatSize(item.size ?? 0)}${item.teamFolder ? ', team folder' : ''}${item.library ? ', library' : ''}${item.starred ? ', starred' : ''}${item.shared ? ', shared' : ''}`;

  const keyDown = (e: KeyboardEvent) => p.onKey(e, cols);
  const anySelected = p.selected.size > 0;

  if (p.mode === 'grid') {
    return (
      <div
        ref={scroller}
        class={`scroller grid-view ${anySelected ? 'selecting' : ''}`}
        role="listbox"
        aria-label={p.label}
        aria-multiselectable="true"
        aria-orientation="vertical"
        onKeyDown={keyDown}
      >
        <div class="spacer" style={{ height: `${v.getTotalSize()}px` }} role="none">
          {rows.map((r) => (
            <div
              key={r.key}
              role="none"
              class="tile-row"
              style={{ transform: `translateY(${r.start}px)`, gridTemplateColumns: `repeat(${cols}, minmax(0, 1fr))` }}
            >
              {p.items.slice(r.index * cols, r.index * cols + cols).map((item, n) => {
                const index = r.index * cols + n;
                const name = displayName(item.name, item.type, hide);
                return (
                  <div
                    key={item.id}
                    role="option"
                    aria-posinset={index + 1}
                    aria-setsize={p.items.length}
                    class={`tile ${p.selected.has(item.id) ? 'selected' : ''} ${dropOn === item.id ? 'drop' : ''}`}
                    {...itemProps(item, index)}
                  >
                    <span
                      class={`check tile-check ${p.selected.has(item.id) ? 'on' : ''}`}
                      aria-hidden="true"
                      onClick={(e) => {
                        e.stopPropagation();
                        p.onToggle(index);
                      }}
                    >
                      <Icon name="check" size={14} />
                    </span>
                    <ItemPicture item={item} box={96} icon={64} />
                    <VideoBadge item={item} />
                    <span class="tile-name" title={name}>
                      {middleTruncate(name, tileChars)}
                    </span>
                    <span class="tile-meta">
                      <VideoWords item={item} />
                      <Badges item={item} />
                      {item.type === 'folder' ? formatDate(item.modified) : formatSize(item.size ?? 0)}
                    </span>
                    <span
                      class="icon-button row-more"
                      aria-hidden="true"
                      onClick={(e) => {
                        e.stopPropagation();
                        const r = (e.currentTarget as HTMLElement).getBoundingClientRect();
                        p.onMenu(index, r.left, r.bottom);
                      }}
                    >
                      <Icon name="more" size={18} />
                    </span>
                  </div>
                );
              })}
            </div>
          ))}
        </div>
        {p.hasMore && <p class="loading-more">Loading more…</p>}
      </div>
    );
  }

  return (
    <div
      class={`list-view ${anySelected ? 'selecting' : ''}`}
      role="grid"
      aria-label={p.label}
      aria-rowcount={p.items.length + 1}
      aria-multiselectable="true"
      onKeyDown={keyDown}
    >
      <div role="rowgroup" class="list-head">
        <div role="row" aria-rowindex={1} class="row head">
          <div role="columnheader" class="col col-check">
            <span class="sr-only">Selected</span>
          </div>
          {sortHeader('name', 'Name')}
          {p.columns.map((c) =>
            c === 'size' || c === 'modified' ? (
              <Fragment key={c}>{sortHeader(c, COLUMN_TITLES[c])}</Fragment>
            ) : (
              <div key={c} role="columnheader" class={`col col-${c}`}>
                {COLUMN_TITLES[c]}
              </div>
            ),
          )}
          <div role="columnheader" class="col col-more">
            <span class="sr-only">Actions</span>
          </div>
        </div>
      </div>
      <div ref={scroller} class="scroller" role="rowgroup">
        <div class="spacer" style={{ height: `${v.getTotalSize()}px` }} role="none">
          {rows.map((r) => {
            const item = p.items[r.index]!;
            const name = displayName(item.name, item.type, hide);
            return (
              <div
                key={item.id}
                role="row"
                aria-rowindex={r.index + 2}
                aria-label={label(item, name)}
                class={`row ${p.selected.has(item.id) ? 'selected' : ''} ${dropOn === item.id ? 'drop' : ''}`}
                style={{ transform: `translateY(${r.start}px)` }}
                {...itemProps(item, r.index)}
              >
                <div role="gridcell" class="col col-check">
                  {check(r.index, item, name)}
                </div>
                <div role="gridcell" class="col col-name">
                  <ItemPicture item={item} box={28} icon={24} />
                  <Name text={name} />
                  <Badges item={item} />
                  {item.shared && p.canShare && (
                    <button
                      type="button"
                      class="icon-button row-more row-copy"
                      tabIndex={-1}
                      aria-label={`Copy link to ${name}`}
                      title="Copy link"
                      onClick={(e) => {
                        e.stopPropagation();
                        void copyItemLink(item);
                      }}
                    >
                      <Icon name="copy" size={18} />
                    </button>
                  )}
                </div>
                {p.columns.map((c) => (
                  <div key={c} role="gridcell" class={`col col-${c}`}>
                    {cell(item, c)}
                  </div>
                ))}
                <div role="gridcell" class="col col-more">
                  {menuButton(r.index, name)}
                </div>
              </div>
            );
          })}
        </div>
        {p.hasMore && <p class="loading-more">Loading more…</p>}
      </div>
    </div>
  );
}
