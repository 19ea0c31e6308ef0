import { elementScroll, observeElementOffset, observeElementRect, Virtualizer } from '@tanstack/virtual-core';
import { useLayoutEffect, useReducer, useState } from 'preact/hooks';

/** @tanstack/virtual-core bound to Preact: only the rows in view (plus overscan) are rendered. */
export function useVirtualizer(opts: {
  count: number;
  getScrollElement: () => HTMLElement | null;
  estimateSize: (index: number) => number;
  overscan?: number;
}) {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const [v] = useState(
    () =>
      new Virtualizer<HTMLElement, HTMLElement>({
        count: opts.count,
        getScrollElement: opts.getScrollElement,
        estimateSize: opts.estimateSize,
        overscan: opts.overscan ?? 8,
        scrollToFn: elementScroll,
        observeElementRect,
        observeElementOffset,
        onChange: () => rerender(0),
      }),
  );
  v.setOptions({ ...v.options, count: opts.count, estimateSize: opts.estimateSize, getScrollElement: opts.getScrollElement });
  useLayoutEffect(() => v._didMount(), []);
  useLayoutEffect(() => {
    v._willUpdate();
  });
  return v;
}
