import type { Item } from '../../src/contract/files.ts';
import type { Column } from './item-cells.tsx';

export type SortKey = 'name' | 'size' | 'modified';

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
