import fs from 'node:fs';

/** The paths of the files this process holds open (Linux). */
export function openPaths(): string[] {
  return fs.readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [fs.readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return []; // the descriptor that listed the directory is already closed
    }
  });
}
