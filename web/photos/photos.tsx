import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type ListingSource, listingFor, type PhotoItem, photosSource } from '../app/listings.ts';
import { type PhotoSize, photoSize, photosWhose } from '../app/prefs.ts';
import { route } from '../app/router.ts';
import { can, hideExtensions } from '../app/session.ts';
import { displayName, familyOf, formatDuration, plural } from '../app/format.ts';
import { toastError } from '../app/toasts.ts';
import { type Action, type ActionContext, available, labelOf, openItem } from '../files/actions.tsx';
import { ItemPicture } from '../files/item-picture.tsx';
import { VideoBadge } from '../files/video-badge.tsx';
import { Icon, type IconName } from '../ui/icons.tsx';
import { addToAlbum } from './add-to-album.tsx';
import { PhotosWhose } from './photos-whose.tsx';
import { type Month, MonthScrubber } from './month-scrubber.tsx';
import { LoadError } from '../ui/page.tsx';
import { openMenu } from '../ui/menu.tsx';
import { useVirtualizer } from '../ui/virtual.ts';

const monthFmt = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric' });
const dayFmt = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'long' });
const takenFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'full' });
const MONTH_HEADER = 44;
const DAY_HEADER = 34;
// Each tile's margin on either side (the .photo rule).
const MARGIN = 2;
/** The row height each density aims at; a full row is scaled to the width, a day's last row keeps it. */
const ROW_HEIGHT = { small: 110, medium: 170, large: 260 } as const;
// A row of very wide panoramas would be a sliver, a row of one tall photo a tower: tiles keep within these ratios.
const MIN_RATIO = 0.5;
const MAX_RATIO = 3;

type Row =
  | { kind: 'month'; key: string; label: string; count: number }
  | { kind: 'day'; key: string; label: string; count: number }
  | { kind: 'tiles'; key: string; start: number; end: number; height: number; widths: number[] };

/** A photo's local day as one number (yyyymmdd), kept per item: layout runs again as every page arrives. */
const dayKeys = new WeakMap<PhotoItem, number>();
function dayOf(p: PhotoItem): number {
  let key = dayKeys.get(p);
  if (key === undefined) {
    const d = new Date(p.takenAt);
    key = d.getFullYear() * 10_000 + d.getMonth() * 100 + d.getDate();
    dayKeys.set(p, key);
  }
  return key;
}
const labels = new Map<string, string>();
/** A header's words, formatted once per month or day. */
function headerLabel(kind: 'month' | 'day', day: number): string {
  const id = `${kind}:${day}`;
  let label = labels.get(id);
  if (label === undefined) {
    const date = new Date(Math.floor(day / 10_000), Math.floor(day / 100) % 100, day % 100);
    label = (kind === 'month' ? monthFmt : dayFmt).format(date);
    labels.set(id, label);
  }
  return label;
}

/** What a screen reader says of a video before its date: that it is one, and how long. */
const videoWords = (p: PhotoItem) =>
  familyOf(p) !== 'video' ? '' : p.duration === undefined ? 'Video, ' : `Video, ${formatDuration(p.duration)}, `;

const ratioOf = (p: PhotoItem) => (p.width && p.height ? Math.min(MAX_RATIO, Math.max(MIN_RATIO, p.width / p.height)) : 1);

/**
 * Month headers, day headers and justified rows (each photo at its own ratio, a full row as wide as `inner`),
 * in the photos' order (newest first, local time).
 */
function layout(items: PhotoItem[], inner: number, target: number) {
  const rows: Row[] = [];
  const months: Month[] = [];
  const monthOfRow: number[] = [];
  const rowOf = new Int32Array(items.length);
  let i = 0;
  while (i < items.length) {
    const day = dayOf(items[i]!);
    const month = Math.floor(day / 100);
    let monthEnd = i + 1;
    while (monthEnd < items.length && Math.floor(dayOf(items[monthEnd]!) / 100) === month) monthEnd++;
    const key = String(month);
    const label = headerLabel('month', day);
    months.push({ key, label, row: rows.length });
    rows.push({ kind: 'month', key: `m:${key}`, label, count: monthEnd - i });
    monthOfRow.push(months.length - 1);
    while (i < monthEnd) {
      const today = dayOf(items[i]!);
      let dayEnd = i + 1;
      while (dayEnd < monthEnd && dayOf(items[dayEnd]!) === today) dayEnd++;
      rows.push({ kind: 'day', key: `d:${items[i]!.id}`, label: headerLabel('day', today), count: dayEnd - i });
      monthOfRow.push(months.length - 1);
      for (let s = i; s < dayEnd; ) {
        let e = s;
        let ratios = 0;
        let full = false;
        while (e < dayEnd && !full) {
          ratios += ratioOf(items[e]!);
          e++;
          full = ratios * target + (e - s) * 2 * MARGIN >= inner;
        }
        const height = full ? Math.max(1, Math.floor((inner - (e - s) * 2 * MARGIN) / ratios)) : target;
        const widths = items.slice(s, e).map((p) => Math.max(1, Math.floor(ratioOf(p) * height)));
        rowOf.fill(rows.length, s, e);
        rows.push({ kind: 'tiles', key: `t:${items[s]!.id}`, start: s, end: e, height, widths });
        monthOfRow.push(months.length - 1);
        s = e;
      }
      i = dayEnd;
    }
  }
  return { rows, months, monthOfRow, rowOf };
}

/** The tile of the next (or previous) row of tiles nearest below (above) the middle of tile `index`. */
function verticalNeighbour(rows: Row[], rowOf: Int32Array, index: number, step: 1 | -1): number {
  const here = rows[rowOf[index]!] as Extract<Row, { kind: 'tiles' }>;
  let x = 0;
  for (let k = here.start; k < index; k++) x += here.widths[k - here.start]! + 2 * MARGIN;
  x += here.widths[index - here.start]! / 2;
  for (let r = rowOf[index]! + step; r >= 0 && r < rows.length; r += step) {
    const row = rows[r]!;
    if (row.kind !== 'tiles') continue;
    let left = 0;
    for (let k = row.start; k < row.end; k++) {
      left += row.widths[k - row.start]! + 2 * MARGIN;
      if (x < left) return k;
    }
    return row.end - 1;
  }
  return index;
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

/** Another account's photos are only looked at and downloaded here (an album-only one not even that): they are not ours to change. */
function fitsShared(a: Action, selection: PhotoItem[]): boolean {
  if (selection.every((p) => !p.owner)) return true;
  return a.id === 'download' && selection.every((p) => !p.albumId);
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

/** Photos: every image and video of the account (and what others share with it), newest taken first, by month. */
export function PhotosScreen() {
  const whose = photosWhose.value;
  return (
    <PhotoGrid
      key={whose}
      source={photosSource(whose)}
      head={
        <>
          <h1 class="view-title">Photos</h1>
          <PhotoViews />
          <PhotosWhose />
        </>
      }
      label="Photos"
      empty={
        <p>
          {whose === 'shared'
            ? 'Nothing shared with you yet. Photos and videos in folders and albums others share with you appear here.'
            : 'No photos or videos yet. Pictures and videos you upload anywhere in your files appear here, newest first.'}
        </p>
      }
      tools={(selection, clear) =>
        can('files.edit') && selection.every((p) => !p.owner)
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

  const inner = Math.max(0, width - 8);
  const target = ROW_HEIGHT[photoSize.value];
  const { rows, months, monthOfRow, rowOf } = useMemo(() => layout(items, inner, target), [items, inner, target]);
  const v = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: (i) => {
      const row = rows[i];
      return row?.kind === 'month' ? MONTH_HEADER : row?.kind === 'day' ? DAY_HEADER : (row?.height ?? target) + 2 * MARGIN;
    },
    overscan: 4,
  });
  useEffect(() => v.measure(), [rows]);
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
  const actions = available(ctx).filter((a) => !a.global && a.id !== 'info' && a.id !== 'open' && fitsShared(a, selection));
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
        .filter((a) => !a.global && a.id !== 'info' && fitsShared(a, sel))
        .map((a) => ({ label: labelOf(a, menuCtx), icon: a.icon, keys: a.keys, danger: a.danger, run: () => run(a, menuCtx) })),
      sel.length === 1 ? `Actions for ${sel[0]!.name}` : `Actions for ${sel.length} items`,
    );
  };
  const onKey = (e: KeyboardEvent) => {
    const index = Number((e.target as HTMLElement).dataset.index);
    if (Number.isNaN(index)) return;
    if (e.key === 'ArrowRight') moveFocus(index + 1);
    else if (e.key === 'ArrowLeft') moveFocus(index - 1);
    else if (e.key === 'ArrowDown') moveFocus(verticalNeighbour(rows, rowOf, index, 1));
    else if (e.key === 'ArrowUp') moveFocus(verticalNeighbour(rows, rowOf, index, -1));
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
          <>
            <span class="muted photos-count">
              {loaded ? `${plural(items.length, 'photo')}${more ? ' loaded; more on the way' : ''}` : 'Loading…'}
            </span>
            <span class="push-left photo-size">
              <label class="photo-size-label" for="photo-size">
                Size
              </label>
              <select id="photo-size" value={photoSize.value} onChange={(e) => (photoSize.value = e.currentTarget.value as PhotoSize)}>
                <option value="small">Small</option>
                <option value="medium">Medium</option>
                <option value="large">Large</option>
              </select>
            </span>
          </>
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
                  if (row.kind !== 'tiles')
                    return (
                      <div
                        key={row.key}
                        role="none"
                        class={row.kind === 'month' ? 'photo-month' : 'photo-day'}
                        style={{ transform: `translateY(${r.start}px)` }}
                      >
                        {row.label} <span class="photo-count">{plural(row.count, 'item')}</span>
                      </div>
                    );
                  return (
                    <div
                      key={row.key}
                      role="none"
                      class="photo-row"
                      style={{ transform: `translateY(${r.start}px)`, height: `${row.height + 2 * MARGIN}px` }}
                    >
                      {items.slice(row.start, row.end).map((item, n) => {
                        const index = row.start + n;
                        const on = selected.has(item.id);
                        const box = Math.max(row.widths[n]!, row.height);
                        return (
                          <div
                            key={item.id}
                            role="option"
                            aria-label={`${displayName(item.name, item.type, hide)}${item.owner ? `, shared by ${item.owner.name}` : ''}`}
                            // The date a screen reader says after the name: the day headers are not in the list.
                            aria-describedby={`taken-${item.id}`}
                            aria-selected={on}
                            data-index={index}
                            style={{ width: `${row.widths[n]}px`, height: `${row.height}px` }}
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
                            <ItemPicture item={item} box={box} icon={48} />
                            <VideoBadge item={item} />
                            <span id={`taken-${item.id}`} class="sr-only">
                              {videoWords(item)}
                              {takenFmt.format(new Date(item.takenAt))}
                            </span>
                            {item.owner && (
                              <span class="photo-owner" aria-hidden="true" title={`Shared by ${item.owner.name}`}>
                                <Icon name="users" size={12} />
                                {item.owner.name}
                              </span>
                            )}
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
            <MonthScrubber months={months} current={current} jump={(m) => v.scrollToIndex(m.row, { align: 'start' })} />
          </>
        )}
      </div>
    </div>
  );
}
