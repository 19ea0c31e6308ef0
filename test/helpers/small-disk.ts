import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
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

export interface FailingDisk extends SmallDisk {
  /** An error on the file system, as a failing USB disk gives: ext4 (errors=remount-ro) turns read-only at once. */
  fail(): void;
  /** What the administrator does once nothing uses it: unmount, `e2fsck -fy`, mount again. */
  repair(): void;
}

/**
 * A small ext4 file system on a loop device, mounted with errors=remount-ro (a Raspberry Pi's USB disk):
 * `fail()` makes the kernel record an error on it. Needs root and loop devices; a string says why not.
 */
export function mountFailingDisk(sizeMiB: number): FailingDisk | string {
  if (process.getuid?.() !== 0) return 'mounting a loop ext4 file system needs root; run the tests as root to include them';
  const image = path.join(tempDir('coffer-image-'), 'disk.img');
  fs.writeFileSync(image, '');
  fs.truncateSync(image, sizeMiB * 1024 * 1024);
  const made = spawnSync('mkfs.ext4', ['-q', '-F', image], { encoding: 'utf8' });
  const dir = tempDir('coffer-disk-');
  const mounted = made.status === 0 && spawnSync('mount', ['-o', 'loop,errors=remount-ro', image, dir], { encoding: 'utf8' });
  const device =
    mounted && mounted.status === 0 ? spawnSync('findmnt', ['-n', '-o', 'SOURCE', dir], { encoding: 'utf8' }).stdout.trim() : '';
  const trigger = `/sys/fs/ext4/${path.basename(device)}/trigger_fs_error`;
  if (!device || !fs.existsSync(trigger)) {
    if (device) spawnSync('umount', [dir]);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(path.dirname(image), { recursive: true, force: true });
    return `a loop-mounted ext4 file system with trigger_fs_error could not be made (${(made.stderr || (mounted && mounted.stderr) || 'no trigger_fs_error').trim()})`;
  }
  // As mountSmallDisk's unmount: the collector lets go of a closed database's files.
  const unmount = (): boolean => {
    const deadline = Date.now() + 15000;
    let result = spawnSync('umount', [dir], { encoding: 'utf8' });
    while (result.status !== 0 && Date.now() < deadline) {
      Bun.gc(true);
      Bun.sleepSync(100);
      result = spawnSync('umount', [dir], { encoding: 'utf8' });
    }
    return result.status === 0;
  };
  return {
    dir,
    fail: () => fs.writeFileSync(trigger, 'coffer test'),
    repair() {
      if (!unmount()) throw new Error(`umount ${dir} failed: still open here: ${openFilesUnder(dir).join(', ') || 'none'}`);
      spawnSync('e2fsck', ['-fy', image]);
      const again = spawnSync('mount', ['-o', 'loop,errors=remount-ro', image, dir], { encoding: 'utf8' });
      if (again.status !== 0) throw new Error(`mount ${image} again failed: ${again.stderr.trim()}`);
    },
    unmount() {
      if (!unmount()) spawnSync('umount', ['-l', dir]);
      fs.rmdirSync(dir);
      fs.rmSync(path.dirname(image), { recursive: true, force: true });
    },
  };
}
