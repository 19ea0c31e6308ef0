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
      // A closed bun:sqlite database keeps its files open until the collector finalizes the statements
      // drizzle prepared on it (sqlite3_close_v2), which kept the mount busy in the full suite.
      const deadline = Date.now() + 3000;
      let result = spawnSync('umount', [dir], { encoding: 'utf8' });
      while (result.status !== 0 && Date.now() < deadline) {
        Bun.gc(true);
        Bun.sleepSync(100);
        result = spawnSync('umount', [dir], { encoding: 'utf8' });
      }
      if (result.status !== 0) {
        console.log(`umount ${dir} failed (${result.stderr.trim()}); still open here: ${openFilesUnder(dir).join(', ') || 'none'}`);
        spawnSync('umount', ['-l', dir]);
      }
      // Only the empty mount point: never recurse into a file system that is still mounted.
      try {
        fs.rmdirSync(dir);
      } catch (err) {
        console.log(`could not remove ${dir}: ${(err as Error).message}`);
      }
    },
  };
}

function openFilesUnder(dir: string): string[] {
  const open: string[] = [];
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(`${dir}/`)) open.push(target);
    } catch {
      // closed while listing
    }
  }
  return open;
}
