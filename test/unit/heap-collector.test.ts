import { afterEach, expect, spyOn, test } from 'bun:test';
import { heapCollector } from '../../src/lib/heap-collector.ts';

const collector = heapCollector();
afterEach(() => collector.stop?.(0));

/** Objects of about `mib` MiB on the JavaScript heap (strings too short to live outside it). */
function allocate(mib: number): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < mib * 16; i++) out.push(Array.from({ length: 1024 }, (_, j) => `${i}:${j}`));
  return out;
}

test('a heap that does not grow is never collected', async () => {
  const gc = spyOn(Bun, 'gc');
  try {
    collector.start?.();
    await Bun.sleep(1600);
    expect(gc).not.toHaveBeenCalled();
  } finally {
    gc.mockRestore();
  }
});

test('a heap that grew and went quiet is collected; one still allocating is not', async () => {
  const gc = spyOn(Bun, 'gc');
  try {
    collector.start?.();
    let kept: string[][] = [];
    // Busy: it grows between every two checks for 1.5 s.
    for (let t = 0; t < 15; t++) {
      kept = kept.concat(allocate(4));
      await Bun.sleep(100);
    }
    expect(gc).not.toHaveBeenCalled();
    expect(kept.length).toBe(15 * 4 * 16);
    kept = [];
    await Bun.sleep(1600);
    expect(gc).toHaveBeenCalledWith(true);
  } finally {
    gc.mockRestore();
  }
});
