import type { FileHandle } from 'node:fs/promises';

/**
 * Writes all of `data` at the handle's position: one write(2) may take only part of it (a disk filling up
 * takes what fits and says so only in the count), and the rest must be written or refused, never dropped.
 */
export async function writeFully(handle: FileHandle, data: Uint8Array): Promise<void> {
  let done = 0;
  while (done < data.byteLength) {
    const { bytesWritten } = await handle.write(data, done);
    // A write that takes nothing would loop for ever; the file system has no room left for it.
    if (bytesWritten === 0) throw Object.assign(new Error('no space left on device, write'), { code: 'ENOSPC' });
    done += bytesWritten;
  }
}
