import { useEffect, useRef } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { cutItems } from '../app/clipboard.ts';
import type { Listing } from '../app/listings.ts';
import { can } from '../app/session.ts';
import type { Selection } from '../ui/selection.ts';
import { startUploads } from '../uploads/start.tsx';
import { type Action, type ActionContext, openItem } from './actions.tsx';
import { actionForKey, isTyping } from './key-map.ts';

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

/** What the list's keys act on. */
export interface KeyTarget {
  selection: Selection<Item>;
  ctx: ActionContext;
  actions: Action[];
  run: (a: Action) => unknown;
  infoOpen: boolean;
  closeInfo: () => void;
  /** Backspace and Alt+↑: to the parent folder, or nothing outside a folder. */
  up?: () => void;
  showMenu: (index: number, x: number, y: number) => void;
  /** The person acted on the list: an item waiting to be revealed no longer is. */
  acted: () => void;
  /** The actions, and how to run them, for this item alone. */
  alone: (item: Item) => { actions: Action[]; run: (a: Action) => unknown };
}

/** The file list's keys: moving and selecting, opening, the context menu, and every action's key from the ACTIONS table. */
export function onListKey(e: KeyboardEvent, c: number, t: KeyTarget): void {
  if (e.defaultPrevented || isTyping(e.target) || document.querySelector('dialog[open], .menu')) return;
  t.acted();
  const sel = t.selection;
  const items = sel.items;
  const focus = sel.focus.value;
  const k = e.key;
  const page = 10 * c;
  const kind = t.ctx.kind;
  if (k === 'ArrowDown') sel.move(focus + c, e);
  else if (k === 'ArrowUp' && !e.altKey) sel.move(focus - c, e);
  else if (k === 'ArrowRight' && c > 1) sel.move(focus + 1, e);
  else if (k === 'ArrowLeft' && c > 1) sel.move(focus - 1, e);
  else if (k === 'Home') sel.move(0, e);
  else if (k === 'End') sel.move(items.length - 1, e);
  else if (k === 'PageDown') sel.move(focus + page, e);
  else if (k === 'PageUp') sel.move(focus - page, e);
  else if ((k === 'Backspace' || (k === 'ArrowUp' && e.altKey)) && t.up) t.up();
  else if (k === 'a' && (e.ctrlKey || e.metaKey)) sel.all();
  else if (k === 'Escape' && (sel.ids.value.size || t.infoOpen)) {
    sel.clear();
    t.closeInfo();
  } else if (k === ' ' && (e.ctrlKey || e.metaKey) && items[focus]) sel.toggle(focus, false);
  else if (k === ' ' && items[focus]?.type === 'file' && kind !== 'trash') openItem(t.ctx, items[focus]!);
  else if ((k === 'ContextMenu' || (k === 'F10' && e.shiftKey)) && items[focus]) {
    const el = document.querySelector(`[data-index="${focus}"]`)?.getBoundingClientRect();
    t.showMenu(focus, el?.left ?? 100, el?.bottom ?? 100);
  } else if (k === 'Enter' && items[focus] && kind !== 'trash') openItem(t.ctx, items[focus]!);
  else if (onUnselectedRow(e, items[focus], sel)) {
    // An action's key on a focused row left out of the selection acts on that row, never on a selection elsewhere.
    const alone = t.alone(items[focus]!);
    const a = actionForKey(alone.actions, e);
    if (!a) return;
    if (!a.global) sel.only(focus);
    alone.run(a);
  } else {
    const a = actionForKey(t.actions, e);
    if (!a) return;
    t.run(a);
  }
  e.preventDefault();
}

/** Whether the key was pressed on the focused row while that row is not selected. */
const onUnselectedRow = (e: KeyboardEvent, focused: Item | undefined, sel: Selection<Item>): focused is Item =>
  focused !== undefined && e.target instanceof HTMLElement && e.target.closest('[data-index]') !== null && !sel.has(focused.id);

/**
 * Keys typed with nothing focused act on the list too; Ctrl/Cmd+V pastes into the folder shown: files on the
 * clipboard are uploaded here, otherwise cut items are moved here.
 */
export function usePageKeys(
  onKey: (e: KeyboardEvent) => void,
  here: { ctx: ActionContext; actions: Action[]; run: (a: Action) => unknown; listing: Listing },
) {
  const page = useRef<PageHandlers>(null!);
  page.current = {
    keydown: (e) => {
      if (e.target === document.body) onKey(e);
    },
    paste: (e) => {
      if (here.ctx.kind !== 'folder' || isTyping(e.target) || document.querySelector('dialog[open]')) return;
      const files = [...(e.clipboardData?.files ?? [])];
      if (files.length && can('files.upload')) {
        e.preventDefault();
        void startUploads(
          files.map((file) => ({ file })),
          here.ctx.folderId,
          here.listing,
        );
      } else if (cutItems.value && can('files.edit')) {
        e.preventDefault();
        const a = here.actions.find((x) => x.id === 'paste');
        if (a) here.run(a);
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
}
