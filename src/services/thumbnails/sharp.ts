import { dlopen } from 'bun:ffi';
import fs from 'node:fs';
import path from 'node:path';
import type SharpType from 'sharp';
import { embeddedFile } from '../../lib/embedded-file.ts';

const LIBVIPS_PREFIX = 'libvips-cpp.so';

/**
 * sharp, also inside the compiled executable. Bun embeds sharp's native addon, but not the libvips
 * library beside it, which the build embeds as a file: it is written to `cacheDir` once (a data
 * directory, since /tmp may be noexec) and opened first, so the addon finds it already loaded by name.
 */
export async function loadSharp(cacheDir: string): Promise<typeof SharpType> {
  const embedded = embeddedFile(LIBVIPS_PREFIX);
  if (embedded) {
    // Found by its soname once loaded, so the file may keep the embedded name (with its content hash).
    const dest = path.join(cacheDir, embedded.name);
    if (!fs.existsSync(dest) || fs.statSync(dest).size !== embedded.file.size) {
      fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
      const tmp = `${dest}.${process.pid}.${Math.random().toString(36).slice(2)}`;
      fs.writeFileSync(tmp, new Uint8Array(await embedded.file.arrayBuffer()), { mode: 0o700 });
      fs.renameSync(tmp, dest);
    }
    // bun:ffi wants at least one symbol; this keeps the library loaded for the process's life.
    dlopen(dest, { vips_version: { args: ['i32'], returns: 'i32' } });
  }
  // The CommonJS build: its require of the platform's addon is the one Bun embeds.
  const sharp = require('sharp') as typeof SharpType;
  sharp.cache(false);
  sharp.concurrency(1);
  return sharp;
}
