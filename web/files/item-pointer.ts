import { useRef, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { ListProps } from './list-props.ts';

/** The type under which items dragged from a list carry their ids. */
export const DRAG_TYPE = 'application/x-coffer-items';

/**
 * What every row and tile answers: focus, click and long press (selects on touch), double click, the context
 * menu, dragging, and for folders dropping. `dropOn` is the folder items are being dragged over.
 */
export function useItemPointer(p: ListProps) {
  const touch = useRef(false);
  const longPress = useRef<ReturnType<typeof setTimeout> | null>(null);
  // A long press selects; the click that follows it must not also open the item.
  const swallowClick = useRef(false);
  const [dropOn, setDropOn] = useState<string | null>(null);

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
  return { itemProps, dropOn };
}

export type ItemProps = ReturnType<typeof useItemPointer>['itemProps'];
