import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type ListingSource, listingFor, type PhotoItem, photosSource } from '../app/listings.ts';
import { route } from '../app/router.ts';
import { can, hideExtensions } from '../app/session.ts';
import { displayName, plural } from '../app/format.ts';
import { toastError } from '../app/toasts.ts';
import { type Action, type ActionContext, available, labelOf, openItem } from '../files/actions.tsx';
import { ItemPicture } from '../files/item-picture.tsx';
import { Icon, type IconName } from '../ui/icons.tsx';
import { addToAlbum } from './add-to-album.tsx';
import { LoadError } from '../ui/page.tsx';
import { openMenu } from '../ui/menu.tsx';
import { useVirtualizer } from '../ui/virtual.ts';

const monthFmt = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric' });
const HEADER = 44;
const MIN_TILE = 150;
const GAP = 4;

type Row = { kind: 'month'; key: string; label: string } | { kind: 'tiles'; key: string; start: number; end: number };

interface Month {
  key: string;
  label: string;
  /** Its header's row. */
  row: number;
}

/** Month headers and rows of `cols` tiles, in the photos' order (newest first, local time). */
function layout(items: PhotoItem[], cols: number) {
  const rows: Row[] = [];
  const months: Month[] = [];
  const monthOfRow: number[] = [];
  const rowOf = new Int32Array(items.length);
  let i = 0;
  while (i < items.length) {
    const d = new Date(items[i]!.takenAt);
    const key = `${d.getFullYear()}-${d.getMonth()}`;
    const label = monthFmt.format(d);
    let end = i + 1;
    while (end < items.length) {
      const e = new Date(items[end]!.takenAt);
      if (e.getFullYear() !== d.getFullYear() || e.getMonth() !== d.getMonth()) break;
      end++;
    }
    months.push({ key, label, row: rows.length });
    rows.push({ kind: 'month', key: `m:${key}`, label });
    monthOfRow.push(months.length - 1);
    for (let s = i; s < end; s += cols) {
      rowOf.fill(rows.length, s, Math.min(end, s + cols));
      rows.push({ kind: 'tiles', key: `t:${items[s]!.id}`, start: s, end: Math.min(end, s + cols) });
      monthOfRow.push(months.length - 1);
    }
    i = end;
  }
  return { rows, months, monthOfRow, rowOf };
}

/** A selection tool a photo view adds before the file manager's actions. */
interface PhotoTool {
  id: string;
  label: string;
  icon: IconName;
  run: () => unknown;
}

interface PhotoGridProps {
  source: ListingSource;
  /** The view's title and its own controls, above the toolbar. */
  head: ComponentChildren;
  /** The grid's accessible name. */
  label: string;
  empty: ComponentChildren;
  tools: (selection: PhotoItem[], clear: () => void) => PhotoTool[];
}

/** All photos, or Albums: the two views of Photos. */
export function PhotoViews() {
  const path = route.value.path;
  const albums = path.startsWith('/photos/albums');
  return (
    <nav class="photo-views" aria-label="Photos views">
      <a href="/photos" aria-current={albums ? undefined : 'page'}>
        All photos
      </a>
      <a href="/photos/albums" aria-current={albums && path === '/photos/albums' ? 'page' : undefined}>
        Albums
      </a>
    </nav>
  );
}

/** Photos: every image and video of the account, newest taken first, by month, with the file manager's actions. */
export function PhotosScreen() {
  return (
    <PhotoGrid
      source={photosSource}
      head={
        <>
          <h1 class="view-title">Photos</h1>
          <PhotoViews />
        </>
      }
      label="Photos"
      empty={<p>No photos or videos yet. Pictures and videos you upload anywhere in your files appear here, newest first.</p>}
      tools={(selection, clear) =>
        can('files.edit')
          ? [
              {
                id: 'album',
                label: 'Add to album',
                icon: 'album',
                run: async () => {
                  if (await addToAlbum(selection)) clear();
                },
              },
            ]
          : []
      }
    />
  );
}

/** A grid of photos by month (all of them, or an album's), with selection and the file manager's actions. */
export function PhotoGrid(props: PhotoGridProps) {
  const listing = listingFor(props.source);
  const items = listing.items.value as PhotoItem[];
  const loaded = listing.loaded.value;
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [focus, setFocus] = useState(0);
  const focusWanted = useRef(false);
  const anchor = useRef(0);
  const scroller = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);

  useEffect(() => {
    listing.watchers++;
    if (listing.stale || !listing.loaded.value) void listing.refresh();
    return () => void listing.watchers--;
  }, [listing]);

  // Every page is fetched in the background (newest first), so the scrubber knows every month.
  const more = listing.more.value;
  useEffect(() => {
    if (loaded && more) void listing.loadMore();
  }, [loaded, more, items.length]);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    setWidth(el.clientWidth);
    return () => ro.disconnect();
  }, [loaded && items.length > 0]);

  const inner = Math.max(0, width - 2 * GAP);
  const cols = Math.max(2, Math.floor(inner / MIN_TILE));
  const tile = Math.floor(inner / cols);
  const { rows, months, monthOfRow, rowOf } = useMemo(() => layout(items, cols), [items, cols]);
  const v = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: (i) => (rows[i]?.kind === 'month' ? HEADER : tile),
    overscan: 4,
  });
  useEffect(() => v.measure(), [tile, rows]);
  const visible = v.getVirtualItems();
  const offset = v.scrollOffset ?? 0;
  const top = visible.find((r) => r.end > offset) ?? visible[0];
  const current = top ? months[monthOfRow[top.index]!] : undefined;

  // Keyboard focus follows the focus index, once its row is rendered.
  useLayoutEffect(() => {
    if (!focusWanted.current) return;
    const el = scroller.current?.querySelector<HTMLElement>(`[data-index="${focus}"]`);
    if (el) {
      el.focus({ preventScroll: true });
      focusWanted.current = false;
    }
  });
  const moveFocus = (to: number) => {
    const next = Math.max(0, Math.min(items.length - 1, to));
    focusWanted.current = true;
    setFocus(next);
    v.scrollToIndex(rowOf[next]!, { align: 'auto' });
  };

  useEffect(() => {
    if (!selected.size) return;
    const present = new Set(items.map((i) => i.id));
    if ([...selected].some((id) => !present.has(id))) setSelected(new Set([...selected].filter((id) => present.has(id))));
  }, [items]);

  const selection = items.filter((i) => selected.has(i.id));
  const ctx: ActionContext = {
    kind: 'photos',
    folderId: null,
    selection,
    listing,
    select: (ids) => setSelected(new Set(ids)),
    toggleInfo: () => {},
    pickUpload: () => {},
  };
  // Details need the file manager's side panel; everything else acts the same here.
  const actions = available(ctx).filter((a) => !a.global && a.id !== 'info' && a.id !== 'open');
  const tools = selection.length ? props.tools(selection, () => setSelected(new Set())) : [];
  const run = (a: Action, c = ctx) => void Promise.resolve(a.run(c)).catch(toastError);

  const toggle = (index: number) => {
    const id = items[index]!.id;
    const next = new Set(selected);
    if (!next.delete(id)) next.add(id);
    setSelected(next);
    anchor.current = index;
  };
  const press = (index: number, e: MouseEvent) => {
    if (e.shiftKey) {
      const [a, b] = [Math.min(anchor.current, index), Math.max(anchor.current, index)];
      setSelected(new Set(items.slice(a, b + 1).map((i) => i.id)));
    } else if (e.ctrlKey || e.metaKey || selected.size > 0) toggle(index);
    else openItem(ctx, items[index]!);
  };
  const showMenu = (index: number, x: number, y: number) => {
    const item = items[index]!;
    const sel = selected.has(item.id) ? selection : [item];
    if (!selected.has(item.id)) setSelected(new Set([item.id]));
    const menuCtx = { ...ctx, selection: sel };
    openMenu(
      x,
      y,
      available(menuCtx)
        .filter((a) => !a.global && a.id !== 'info')
        .map((a) => ({ label: labelOf(a, menuCtx), icon: a.icon, keys: a.keys, danger: a.danger, run: () => run(a, menuCtx) })),
      sel.length === 1 ? `Actions for ${sel[0]!.name}` : `Actions for ${sel.length} items`,
    );
  };
  const onKey = (e: KeyboardEvent) => {
    const index = Number((e.target as HTMLElement).dataset.index);
    if (Number.isNaN(index)) return;
    if (e.key === 'ArrowRight') moveFocus(index + 1);
    else if (e.key === 'ArrowLeft') moveFocus(index - 1);
    else if (e.key === 'ArrowDown') moveFocus(index + cols);
    else if (e.key === 'ArrowUp') moveFocus(index - cols);
    else if (e.key === 'Home') moveFocus(0);
    else if (e.key === 'End') moveFocus(items.length - 1);
    else if (e.key === 'Enter') openItem(ctx, items[index]!);
    else if (e.key === ' ') toggle(index);
    else if (e.key === 'Escape' && selected.size) setSelected(new Set());
    else if (e.key === 'a' && (e.ctrlKey || e.metaKey)) setSelected(new Set(items.map((i) => i.id)));
    else if (e.key === 'ContextMenu' || (e.key === 'F10' && e.shiftKey)) {
      const r = (e.target as HTMLElement).getBoundingClientRect();
      showMenu(index, r.left, r.bottom);
    } else return;
    e.preventDefault();
  };

  const hide = hideExtensions.value;
  return (
    <div class="browser photos">
      <header class="browser-head">{props.head}</header>
      <div class={`toolbar ${selection.length ? 'has-selection' : ''}`} role="toolbar" aria-label="Selection actions">
        {selection.length > 0 ? (
          <>
            <button type="button" class="icon-button" aria-label="Clear selection" onClick={() => setSelected(new Set())}>
              <Icon name="close" size={18} />
            </button>
            <span class="selection-count" aria-live="polite">
              {selection.length} selected
            </span>
            {tools.map((a) => (
              <button key={a.id} type="button" class="tool" onClick={() => void Promise.resolve(a.run()).catch(toastError)}>
                <Icon name={a.icon} size={18} />
                <span class="tool-label">{a.label}</span>
              </button>
            ))}
            {actions.map((a) => (
              <button key={a.id} type="button" class={`tool ${a.danger ? 'danger' : ''}`} onClick={() => run(a)}>
                <Icon name={a.icon} size={18} />
                <span class="tool-label">{labelOf(a, ctx)}</span>
              </button>
            ))}
          </>
        ) : (
          <span class="muted photos-count">
            {loaded ? `${plural(items.length, 'photo')}${more ? ' loaded; more on the way' : ''}` : 'Loading…'}
          </span>
        )}
      </div>
      {listing.error.value && <LoadError message={listing.error.value} retry={() => listing.refresh()} />}
      <div class="browser-body">
        {loaded && items.length === 0 ? (
          <div class="empty">{props.empty}</div>
        ) : (
          <>
            <div
              ref={scroller}
              class={`scroller photo-grid ${selected.size ? 'selecting' : ''}`}
              role="listbox"
              aria-label={props.label}
              aria-multiselectable="true"
              onKeyDown={onKey}
            >
              {current && (
                <div class="photo-month sticky" aria-hidden="true">
                  {current.label}
                </div>
              )}
              <div class="spacer" style={{ height: `${v.getTotalSize()}px` }} role="none">
                {visible.map((r) => {
                  const row = rows[r.index]!;
                  if (row.kind === 'month')
                    return (
                      <div key={row.key} role="none" class="photo-month" style={{ transform: `translateY(${r.start}px)` }}>
                        {row.label}
                      </div>
                    );
                  return (
                    <div
                      key={row.key}
                      role="none"
                      class="photo-row"
                      style={{
                        transform: `translateY(${r.start}px)`,
                        gridTemplateColumns: `repeat(${cols}, ${tile}px)`,
                        height: `${tile}px`,
                      }}
                    >
                      {items.slice(row.start, row.end).map((item, n) => {
                        const index = row.start + n;
                        const on = selected.has(item.id);
                        return (
                          <div
                            key={item.id}
                            role="option"
                            aria-label={displayName(item.name, item.type, hide)}
                            aria-selected={on}
                            data-index={index}
                            tabIndex={index === Math.min(focus, items.length - 1) ? 0 : -1}
                            class={`photo ${on ? 'selected' : ''}`}
                            onClick={(e) => {
                              setFocus(index);
                              press(index, e);
                            }}
                            onContextMenu={(e) => {
                              e.preventDefault();
                              showMenu(index, e.clientX, e.clientY);
                            }}
                          >
                            <ItemPicture item={item} box={tile} icon={48} />
                            <span
                              class={`check ${on ? 'on' : ''}`}
                              aria-hidden="true"
                              onClick={(e) => {
                                e.stopPropagation();
                                toggle(index);
                              }}
                            >
                              <Icon name="check" size={14} />
                            </span>
                          </div>
                        );
                      })}
                    </div>
                  );
                })}
              </div>
            </div>
            {months.length > 1 && (
              <nav class="photo-scrubber" aria-label="Jump to month">
                <ul>
                  {months.map((m) => (
                    <li key={m.key}>
                      <button
                        type="button"
                        class={m === current ? 'current' : ''}
                        aria-current={m === current ? 'true' : undefined}
                        onClick={() => v.scrollToIndex(m.row, { align: 'start' })}
                      >
                        {m.label}
                      </button>
                    </li>
                  ))}
                </ul>
              </nav>
            )}
          </>
        )}
      </div>
    </div>
  );
}
