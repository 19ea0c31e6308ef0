import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { hideExtensions } from '../app/session.ts';
import { useFocusInPlace } from '../ui/focus-after-removal.ts';
import { useVirtualizer } from '../ui/virtual.ts';
import type { ListProps } from './list-props.ts';
import { ItemGrid } from './item-grid.tsx';
import { useItemPointer } from './item-pointer.ts';
import { ItemRows } from './item-rows.tsx';

const ROW = 48;
const TILE_W = 164;
const TILE_H = 188;

/** The list and grid views: virtualized, keyboard-navigable, selectable, drag sources and drop targets. */
export function ItemList(p: ListProps) {
  const scroller = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const { itemProps, dropOn } = useItemPointer(p);
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
  // The item focused, leaving the list (Delete, a move): the focus goes to the item now in its place.
  useFocusInPlace(scroller, p.mode, () => scroller.current?.querySelector<HTMLElement>(`[data-index="${p.focus}"]`));
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

  const view = { p, scroller, rows, total: v.getTotalSize(), hide, dropOn, itemProps, onKeyDown: (e: KeyboardEvent) => p.onKey(e, cols) };
  return p.mode === 'grid' ? <ItemGrid {...view} cols={cols} tileChars={tileChars} /> : <ItemRows {...view} />;
}
