import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { Listing } from '../app/listings.ts';
import { navigate } from '../app/router.ts';
import type { Selection } from '../ui/selection.ts';

// What the next file browser focuses and selects once it lists it: the folder Backspace left, or an item
// a notification names.
let revealNext: string | null = null;

/** Opens `path` with `id` focused and selected in its list (when it is there). */
export function navigateToItem(path: string, id: string): void {
  revealNext = id;
  navigate(path);
}

/**
 * The item `navigateToItem` asked for, focused and selected once its page is listed. `acted` drops the wish
 * (the person acts on the list themselves); `claimFocus` changes to move keyboard focus into the list.
 */
export function useReveal(sel: Selection<Item>, listing: Listing) {
  const reveal = useRef<string | null>(null);
  if (revealNext) {
    reveal.current = revealNext;
    revealNext = null;
  }
  const [claimFocus, setClaimFocus] = useState(0);
  const items = listing.items.value;
  const loaded = listing.loaded.value;
  // Before the next paint, so keys pressed as soon as the list shows act after it, not before.
  useLayoutEffect(() => {
    const id = reveal.current;
    if (!id || !loaded) return;
    const at = items.findIndex((i) => i.id === id);
    if (at < 0) {
      // Folders come first, so the folder left is found after a few pages at most.
      if (listing.more.value) void listing.loadMore();
      else reveal.current = null;
      return;
    }
    reveal.current = null;
    sel.only(at);
    setClaimFocus((n) => n + 1);
  }, [items, loaded]);
  return { claimFocus, acted: () => void (reveal.current = null) };
}

/** The listing kept fresh while shown, and whether its first page is slow enough to show skeletons. */
export function useWatchedListing(listing: Listing): boolean {
  const [slow, setSlow] = useState(false);
  useEffect(() => {
    listing.watchers++;
    if (listing.stale || !listing.loaded.value) void listing.refresh();
    // Skeletons only when the wait is noticeable.
    const t = setTimeout(() => setSlow(true), 150);
    return () => {
      listing.watchers--;
      clearTimeout(t);
      setSlow(false);
    };
  }, [listing]);
  return slow;
}
