import { heapSize } from 'bun:jsc';
import type { Lifecycle } from './lifecycle.ts';

/** How often the heap's size is looked at. */
const CHECK_MS = 500;
/** Growth of the heap since the last full collection past which a quiet moment is used for one. */
const GROWTH_BYTES = 16 * 1024 * 1024;
/** Allocation between two checks below which the process counts as quiet (its timers allocate a little). */
const QUIET_BYTES = 1024 * 1024;

/**
 * A full garbage collection at the first quiet half second once the heap has grown by GROWTH_BYTES since the
 * last one. The runtime's young collections promote what is alive at that instant, so a big listing or a run
 * of uploads leaves 15-35 MiB of dead objects in the old generation, which it collects only once the heap has
 * grown much further: a server that has just worked would otherwise sit that much higher until it works again.
 * A server under load allocates between every two checks and is left to the runtime's own collections.
 */
export function heapCollector(): Lifecycle {
  let timer: ReturnType<typeof setInterval> | null = null;
  let base = 0;
  let last = 0;
  return {
    name: 'heap collector',
    start() {
      base = last = heapSize();
      timer = setInterval(() => {
        const size = heapSize();
        const quiet = Math.abs(size - last) < QUIET_BYTES;
        last = size;
        if (!quiet || size - base < GROWTH_BYTES) return;
        Bun.gc(true);
        base = last = heapSize();
      }, CHECK_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
