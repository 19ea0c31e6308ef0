import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { Pages } from '../app/load.ts';

/**
 * Reads a paged list's next page when its end (the element given the returned ref) scrolls into view: of `root`, the
 * list's own scroller, `margin` ahead; of the window without one.
 */
export function useLoadAtEnd<E extends Element>(pages: Pages<unknown>, opts: { root?: RefObject<Element | null>; margin?: string } = {}) {
  const end = useRef<E>(null);
  // After a failed page the end stays in view: the next read waits for Try again, not the observer, which would ask in a loop.
  const reading = pages.more && !pages.busy && !pages.error;
  useEffect(() => {
    const node = end.current;
    if (!node || !reading) return;
    const seen = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) void pages.loadMore();
      },
      { root: opts.root?.current ?? null, rootMargin: opts.margin },
    );
    seen.observe(node);
    return () => seen.disconnect();
  }, [reading, pages.items]);
  return end;
}
