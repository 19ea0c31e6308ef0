import { afterEach, describe, expect, spyOn, test } from 'bun:test';
import fs from 'node:fs';
import { ManualClock } from '../../src/clock.ts';
import { DiskSpaceService } from '../../src/services/files/disk-space.ts';

const MiB = 1024 * 1024;
const BLOCK = 4096;

/** A disk whose free space the test sets, and the service over it with a reserve of `reserve`. */
function disk(reserve: number, startFree: number) {
  const state = { free: startFree };
  const reading = () => ({ bavail: Math.floor(state.free / BLOCK), bsize: BLOCK, blocks: 1e9, bfree: 0, ffree: 0, files: 0, type: 0 });
  const statfs = spyOn(fs, 'statfsSync').mockImplementation(reading as unknown as typeof fs.statfsSync);
  const clock = new ManualClock(1_000_000);
  const ctx = {
    config: { minFreeBytes: reserve },
    paths: { root: '/data' },
    log: { warn: () => {} },
    driver: { location: { driver: 'local' } },
    clock,
  } as unknown as ConstructorParameters<typeof DiskSpaceService>[0];
  return { state, statfs, clock, service: new DiskSpaceService(ctx) };
}

const refused = (f: () => void) => {
  try {
    f();
    return false;
  } catch (err) {
    expect((err as { status?: number }).status).toBe(507);
    return true;
  }
};

afterEach(() => {
  (fs.statfsSync as unknown as { mockRestore?: () => void }).mockRestore?.();
});

describe('the disk-space check', () => {
  test('4 KiB uploads with room to spare read the free space once a second, not once each', () => {
    const { statfs, clock, service } = disk(512 * MiB, 100 * 1024 * MiB);
    for (let i = 0; i < 500; i++) service.assertRoom(4096);
    expect(statfs).toHaveBeenCalledTimes(1);
    clock.advance(1000);
    service.assertRoom(4096);
    expect(statfs).toHaveBeenCalledTimes(2);
  });

  test('uploads that fill the disk are refused at the same one as when every upload read it', () => {
    const reserve = 8 * MiB;
    const { state, statfs, service } = disk(reserve, 64 * MiB);
    let accepted = 0;
    for (;;) {
      if (refused(() => service.assertRoom(4 * MiB))) break;
      state.free -= 4 * MiB;
      accepted++;
    }
    // Each accepted while free - 4 MiB >= the reserve: 64, 60, ..., 12 MiB free.
    expect(accepted).toBe(14);
    expect(state.free).toBe(8 * MiB);
    expect(statfs.mock.calls.length).toBeGreaterThan(1);
  });

  test('a disk filled by another program is seen within a second', () => {
    const { state, clock, service } = disk(512 * MiB, 100 * 1024 * MiB);
    service.assertRoom(4096);
    state.free = 512 * MiB;
    clock.advance(1000);
    expect(refused(() => service.assertRoom(4096))).toBe(true);
  });

  test('space freed since is seen at once when the last reading was near the reserve', () => {
    const reserve = 512 * MiB;
    const { state, service } = disk(reserve, reserve + 2 * MiB);
    expect(refused(() => service.assertRoom(4 * MiB))).toBe(true);
    state.free = 10 * 1024 * MiB;
    expect(refused(() => service.assertRoom(4 * MiB))).toBe(false);
  });
});
