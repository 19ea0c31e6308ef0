import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { tempDir } from './server.ts';

export interface SmallDisk {
  dir: string;
  unmount(): void;
}

/**
 * A size-limited tmpfs to fill, for disk-full tests. Mounting needs root (and the right to mount):
 * returns the reason as a string when the machine does not allow it, for the caller to print and skip.
 */
export function mountSmallDisk(sizeMiB: number): SmallDisk | string {
  if (process.getuid?.() !== 0) return 'mounting a size-limited tmpfs needs root; run the tests as root to include them';
  const dir = tempDir('coffer-disk-');
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    return `mount -t tmpfs failed (${(mounted.stderr || mounted.error?.message || 'unknown error').trim()})`;
  }
  return {
    dir,
    unmount() {
      spawnSync('umount', [dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
