import type { VirtualItem } from '@tanstack/virtual-core';
import type { RefObject } from 'preact';
import { displayName } from '../app/format.ts';
import type { ItemProps } from './item-pointer.ts';
import type { ListProps } from './list-props.ts';

/** What the list and the grid views both take from the list around them. */
export interface ViewProps {
  p: ListProps;
  scroller: RefObject<HTMLDivElement | null>;
  rows: VirtualItem[];
  total: number;
  hide: boolean;
  dropOn: string | null;
  itemProps: ItemProps;
  onKeyDown: (e: KeyboardEvent) => void;
}

/** What a row and a tile both take: the list, the item's place in it, and the view's state. */
export interface ItemViewProps {
  p: ListProps;
  index: number;
  hide: boolean;
  dropOn: string | null;
  itemProps: ItemProps;
}

/** An item as a row or a tile shows it: its name, its state's classes, and what its check mark and More do. */
export function itemView({ p, index, hide, dropOn }: ItemViewProps) {
  const item = p.items[index]!;
  const selected = p.selected.has(item.id);
  return {
    item,
    name: displayName(item.name, item.type, hide),
    selected,
    state: `${selected ? 'selected' : ''} ${dropOn === item.id ? 'drop' : ''}`,
    toggle: (e: MouseEvent) => {
      e.stopPropagation();
      p.onToggle(index);
    },
    more: (e: MouseEvent) => {
      e.stopPropagation();
      const r = (e.currentTarget as HTMLElement).getBoundingClientRect();
      p.onMenu(index, r.left, r.bottom);
    },
  };
}
