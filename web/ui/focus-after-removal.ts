import { type RefObject } from 'preact';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';

/**
 * When the entry holding the focus leaves a list (revoked, removed, restored), the focus goes to the first button
 * of the entry now in its place, or of the last one, rather than to the page's start, where a keyboard or screen
 * reader would have to find the list again. Its answer goes on the `<ul>` as props; the entries are `<li data-key>`.
 */
export function useFocusAfterRemoval(keys: string[]) {
  const list = useRef<HTMLUListElement>(null);
  const held = useRef<{ key: string; index: number } | null>(null);
  useLayoutEffect(() => {
    const was = held.current;
    if (!was) return;
    // Still there, perhaps moved by entries added before it (a page read above a More button): where it is now.
    if (keys.includes(was.key)) {
      was.index = keys.indexOf(was.key);
      return;
    }
    held.current = null;
    if (document.activeElement && document.activeElement !== document.body) return;
    const entries = [...(list.current?.querySelectorAll<HTMLLIElement>(':scope > li') ?? [])].filter((li) => li.querySelector('button'));
    const next = entries.find((li) => keys.indexOf(li.dataset.key ?? '') >= was.index) ?? entries.at(-1);
    next?.querySelector('button')?.focus();
  });
  return {
    ref: list,
    onFocusIn: (e: FocusEvent) => {
      const key = (e.target as HTMLElement).closest('li')?.dataset.key;
      if (key) held.current = { key, index: keys.indexOf(key) };
    },
    onFocusOut: (e: FocusEvent) => {
      // The focus moved on elsewhere by the person, not lost with its entry.
      if (e.relatedTarget && !list.current?.contains(e.relatedTarget as Node)) held.current = null;
    },
  };
}

/**
 * The same for a virtual list's items (`[data-index]` inside `scroller`; the files, Photos): when the item holding the
 * focus leaves (Delete, trashed on another device), the focus goes to `next()`, the item now in its place. `watch`
 * names what replaces the scroller's element (the list's mode), so the listener follows it.
 */
export function useFocusInPlace(scroller: RefObject<HTMLElement | null>, watch: unknown, next: () => HTMLElement | null | undefined) {
  const focused = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const onFocusIn = (e: FocusEvent) => {
      focused.current = (e.target as HTMLElement).closest<HTMLElement>('[data-index]');
    };
    el.addEventListener('focusin', onFocusIn);
    return () => el.removeEventListener('focusin', onFocusIn);
  }, [watch]);
  useLayoutEffect(() => {
    const was = focused.current;
    if (!was || was.isConnected) return;
    focused.current = null;
    const active = document.activeElement;
    if (active && active !== document.body) return;
    next()?.focus({ preventScroll: true });
  });
}
