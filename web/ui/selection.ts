import { type Signal, signal } from '@preact/signals';

export interface Keyed {
  id: string;
}

/**
 * The selection of one list (files, photos, search results, Shared, Trash): which items are selected, which one
 * has keyboard focus, and the anchor a Shift range is measured from. Indexes are positions in `items`.
 */
export interface Selection<T extends Keyed = Keyed> {
  readonly ids: Signal<Set<string>>;
  readonly focus: Signal<number>;
  /** Where a Shift+click or Shift+arrow range starts: the last item pressed or moved to without Shift. */
  anchor: number;
  /** The list as rendered last; every index below is a position in it. */
  items: T[];
  has(id: string): boolean;
  /** The selected items, in the list's order. */
  picked(): T[];
  clear(): void;
  /** Exactly these items, the focus on the first of them. */
  set(ids: string[]): void;
  /** Only the item at `index`, focused, the anchor there. */
  only(index: number): void;
  /** Adds or removes the item at `index`; the anchor moves there unless `moveAnchor` is false (Ctrl+Space). */
  toggle(index: number, moveAnchor?: boolean): void;
  /** Everything from the anchor to `index`, replacing what was selected. */
  range(index: number): void;
  all(): void;
  /**
   * Keyboard movement to `index` (clamped to the list): with Shift the range grows, with Ctrl/⌘ only the focus
   * moves, otherwise the item moved to becomes the selection.
   */
  move(index: number, e: { shiftKey: boolean; ctrlKey: boolean; metaKey: boolean }): number;
}

export function createSelection<T extends Keyed>(): Selection<T> {
  const ids = signal<Set<string>>(new Set());
  const focus = signal(0);
  const s: Selection<T> = {
    ids,
    focus,
    anchor: 0,
    items: [],
    has: (id) => ids.value.has(id),
    picked: () => (ids.value.size ? s.items.filter((i) => ids.value.has(i.id)) : []),
    clear: () => {
      if (ids.value.size) ids.value = new Set();
    },
    set: (list) => {
      ids.value = new Set(list);
      const at = s.items.findIndex((i) => i.id === list[0]);
      if (at >= 0) focus.value = at;
    },
    only: (index) => {
      const item = s.items[index];
      ids.value = new Set(item ? [item.id] : []);
      focus.value = index;
      s.anchor = index;
    },
    toggle: (index, moveAnchor = true) => {
      const item = s.items[index];
      if (!item) return;
      const next = new Set(ids.value);
      if (!next.delete(item.id)) next.add(item.id);
      ids.value = next;
      if (moveAnchor) s.anchor = index;
    },
    range: (index) => {
      const [a, b] = [Math.min(s.anchor, index), Math.max(s.anchor, index)];
      ids.value = new Set(s.items.slice(a, b + 1).map((i) => i.id));
    },
    all: () => {
      ids.value = new Set(s.items.map((i) => i.id));
    },
    move: (index, e) => {
      const next = Math.max(0, Math.min(s.items.length - 1, index));
      focus.value = next;
      if (e.shiftKey) s.range(next);
      else if (!(e.ctrlKey || e.metaKey)) {
        s.anchor = next;
        ids.value = new Set(s.items[next] ? [s.items[next]!.id] : []);
      }
      return next;
    },
  };
  return s;
}

/** Items no longer listed (moved, deleted elsewhere) leave the selection, and the focus stays inside the list. */
export function prune<T extends Keyed>(s: Selection<T>, items: T[]): void {
  const ids = s.ids.value;
  if (!ids.size) return;
  const present = new Set(items.map((i) => i.id));
  if ([...ids].some((id) => !present.has(id))) s.ids.value = new Set([...ids].filter((id) => present.has(id)));
  if (s.focus.value >= items.length && items.length) s.focus.value = items.length - 1;
}
