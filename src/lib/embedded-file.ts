import fs from 'node:fs';
import path from 'node:path';

/** Where a compiled executable's embedded files are (Bun's virtual file system, on the POSIX systems it is built for). */
const EMBEDDED_ROOT = '/$bunfs/root';

/**
 * The file the build embedded whose name (the bundler adds a content hash) starts with `prefix`, opened
 * lazily; undefined when not running as a compiled executable or when none is there. Not Bun.embeddedFiles:
 * it holds every embedded file as a Blob whose whole size the collector counts as heap memory (24 MiB with
 * libvips), which doubled what the server allocated between collections and so its peak.
 */
export function embeddedFile(prefix: string): { name: string; file: Blob } | undefined {
  if (!Bun.isStandaloneExecutable) return undefined;
  // Beside each file is the module the bundler made to import it (`web-app.js`): not the file.
  const name = fs.readdirSync(EMBEDDED_ROOT).find((n) => n.startsWith(prefix) && !n.endsWith('.js'));
  return name === undefined ? undefined : { name, file: Bun.file(path.join(EMBEDDED_ROOT, name)) };
}
