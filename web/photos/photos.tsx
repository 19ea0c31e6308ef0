import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type ListingSource, listingFor, type PhotoItem, photosSource } from '../app/listings.ts';
import { type PhotoSize, photoSize, photosWhose } from '../app/prefs.ts';
import { route } from '../app/router.ts';
import { can, hideExtensions } from '../app/session.ts';
import { plural } from '../app/format.ts';
import { toastError } from '../app/toasts.ts';
import { openActionMenu } from '../files/action-menu.ts';
import { type Action, type ActionContext, available, labelOf, openItem } from '../files/actions.tsx';
import { useSelectionBar } from '../files/browser-toolbar.tsx';
import type { IconName } from '../ui/icons.tsx';
import { SelectionToolbar, type Tool } from '../ui/selection-toolbar.tsx';
import { useSelection } from '../ui/use-selection.ts';
import { addToAlbum } from './add-to-album.tsx';
import { PhotosWhose } from './photos-whose.tsx';
import { MonthScrubber } from './month-scrubber.tsx';
import { DAY_HEADER, layout, MARGIN, MONTH_HEADER, ROW_HEIGHT, verticalNeighbour } from './photo-layout.ts';
import { PhotoHeader, PhotoRow } from './photo-rows.tsx';
import { LoadError } from '../ui/page.tsx';
import { useFocusInPlace } from '../ui/focus-after-removal.ts';
import { useVirtualizer } from '../ui/virtual.ts';

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

/** The grid's rows at the scroller's width and the chosen density, virtualized, and the month at the top of the view. */
function usePhotoRows(items: PhotoItem[], scroller: RefObject<HTMLDivElement | null>, shown: boolean) {
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    setWidth(el.clientWidth);
    return () => ro.disconnect();
  }, [shown]);

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
  return { rows, months, rowOf, v, visible, current };
}

/** A grid of photos by month (all of them, or an album's), with selection and the file manager's actions. */
export function PhotoGrid(props: PhotoGridProps) {
  const listing = listingFor(props.source);
  const items = listing.items.value as PhotoItem[];
  const loaded = listing.loaded.value;
  // A failed first load is not an empty library: the empty state and "0 photos" would say there is nothing.
  const failed = listing.error.value !== null && items.length === 0;
  const sel = useSelection(items);
  const selected = sel.ids.value;
  const focus = sel.focus.value;
  const focusWanted = useRef(false);
  const scroller = useRef<HTMLDivElement>(null);

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

  const { rows, months, rowOf, v, visible, current } = usePhotoRows(items, scroller, loaded && items.length > 0);

  // Keyboard focus follows the focus index, once its row is rendered.
  useLayoutEffect(() => {
    if (!focusWanted.current) return;
    const el = scroller.current?.querySelector<HTMLElement>(`[data-index="${focus}"]`);
    if (el) {
      el.focus({ preventScroll: true });
      focusWanted.current = false;
    }
  });
  const shown = loaded && items.length > 0;
  // The tile focused, trashed here or on another device: the focus goes to the tile now in its place.
  useFocusInPlace(scroller, shown, () => scroller.current?.querySelector<HTMLElement>('[role="option"][tabindex="0"]'));
  const moveFocus = (to: number) => {
    const next = Math.max(0, Math.min(items.length - 1, to));
    focusWanted.current = true;
    sel.focus.value = next;
    v.scrollToIndex(rowOf[next]!, { align: 'auto' });
  };

  // The view's own tool under way (Remove from album, Use as cover): pressed again meanwhile, none sends anything.
  const [running, setRunning] = useState<string | null>(null);
  const runningNow = useRef<string | null>(null);
  const selection = sel.picked();
  const ctx: ActionContext = {
    kind: 'photos',
    folderId: null,
    selection,
    listing,
    select: sel.set,
    toggleInfo: () => {},
    pickUpload: () => {},
  };
  // Details need the file manager's side panel; everything else acts the same here.
  const actions = available(ctx).filter((a) => !a.global && a.id !== 'info' && a.id !== 'open' && fitsShared(a, selection));
  const bar = useSelectionBar<Tool & { secondary?: boolean }>([
    ...(selection.length ? props.tools(selection, sel.clear) : []).map((t) => ({
      ...t,
      busy: running === t.id,
      run: () => {
        if (runningNow.current) return;
        runningNow.current = t.id;
        setRunning(t.id);
        void Promise.resolve(t.run())
          .catch(toastError)
          .finally(() => {
            runningNow.current = null;
            setRunning(null);
          });
      },
    })),
    ...actions.map((a) => ({
      id: a.id,
      label: labelOf(a, ctx),
      icon: a.icon,
      danger: a.danger,
      secondary: a.secondary,
      run: () => void Promise.resolve(a.run(ctx)).catch(toastError),
    })),
  ]);

  const press = (index: number, e: MouseEvent) => {
    sel.focus.value = index;
    if (e.shiftKey) sel.range(index);
    else if (e.ctrlKey || e.metaKey || selected.size > 0) sel.toggle(index);
    else openItem(ctx, items[index]!);
  };
  const showMenu = (index: number, x: number, y: number) => {
    const item = items[index]!;
    const picked = selected.has(item.id) ? selection : [item];
    // The menu acts on the item pressed; focus stays where it was.
    if (!selected.has(item.id)) sel.ids.value = new Set([item.id]);
    openActionMenu(x, y, ctx, picked, (a) => a.id !== 'info' && fitsShared(a, picked));
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
    else if (e.key === ' ') sel.toggle(index);
    else if (e.key === 'Escape' && selected.size) sel.clear();
    else if (e.key === 'a' && (e.ctrlKey || e.metaKey)) sel.all();
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
      <SelectionToolbar
        count={selection.length}
        onClear={sel.clear}
        tools={bar.shown}
        more={bar.more}
        idleLabel="Selection actions"
        idle={<PhotosIdle count={items.length} loaded={loaded} failed={failed} more={more} />}
      />
      {listing.error.value && <LoadError message={listing.error.value} retry={() => listing.refresh()} />}
      <div class="browser-body">
        {failed ? (
          <div class="empty">
            <p>Nothing to show until this loads. The reason is above.</p>
          </div>
        ) : loaded && items.length === 0 ? (
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
                  if (row.kind !== 'tiles') return <PhotoHeader key={row.key} row={row} top={r.start} />;
                  return (
                    <PhotoRow
                      key={row.key}
                      row={row}
                      top={r.start}
                      items={items}
                      focus={focus}
                      isSelected={(id) => selected.has(id)}
                      hide={hide}
                      onPress={press}
                      onToggle={sel.toggle}
                      onMenu={showMenu}
                    />
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

/** The toolbar with nothing selected: how many photos, and the tile size. */
function PhotosIdle(p: { count: number; loaded: boolean; failed: boolean; more: boolean }) {
  return (
    <>
      <span class="muted photos-count">
        {p.failed ? '' : p.loaded ? `${plural(p.count, 'photo')}${p.more ? ' loaded; more on the way' : ''}` : 'Loading…'}
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
  );
}
