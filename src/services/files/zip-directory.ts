/**
 * The central directory of a ZIP being written, kept as bytes. archiver's engine (zip-stream) keeps every entry it
 * has written, an object of some 850 bytes, to write the directory at the end, and then writes each record in about
 * twenty small writes buffered all at once: one ZIP of 100,000 entries held 870 MiB as it ended. Here each entry's
 * record is encoded by the engine itself as the entry ends, copied into blocks (about 70 bytes and its name each), the
 * entry is let go, and the blocks are written one at a time at the end.
 */

const BLOCK_BYTES = 64 * 1024;
/** What stays in the engine's list of entries in place of each one written: the list's length still counts them (ZIP64, the end record). */
const RECORD_KEPT = Object.freeze({});

/** The parts of zip-stream's engine this relies on (compress-commons' ZipArchiveOutputStream). */
interface ZipEngine {
  _entries: unknown[];
  _afterAppend(entry: unknown): void;
  _writeCentralFileHeader(entry: unknown): void;
  write(chunk: Buffer | string): boolean;
}

function engineOf(archive: object): ZipEngine {
  const engine = (archive as { _module?: { engine?: Partial<ZipEngine> } })._module?.engine;
  if (
    !engine ||
    !Array.isArray(engine._entries) ||
    typeof engine._afterAppend !== 'function' ||
    typeof engine._writeCentralFileHeader !== 'function'
  ) {
    // A new archiver whose engine changed shape: failing the download says so, where a ZIP without its directory would not.
    throw new Error("archiver's ZIP engine is not the one this version of Coffer knows (src/services/files/zip-directory.ts)");
  }
  return engine as ZipEngine;
}

/** Makes a ZipArchive (archiver) keep its central directory as bytes; call before the first entry is appended. */
export function keepCentralDirectoryAsBytes(archive: object): void {
  const engine = engineOf(archive);
  const full: Buffer[] = [];
  let block = Buffer.allocUnsafe(BLOCK_BYTES);
  let used = 0;
  const keep = (chunk: Buffer | string) => {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    while (bytes.length > 0) {
      const n = bytes.copy(block, used);
      used += n;
      bytes = bytes.subarray(n);
      if (used === BLOCK_BYTES) {
        full.push(block);
        block = Buffer.allocUnsafe(BLOCK_BYTES);
        used = 0;
      }
    }
    return true;
  };
  const afterAppend = engine._afterAppend;
  const writeRecord = engine._writeCentralFileHeader;
  const write = engine.write;
  engine._afterAppend = (entry) => {
    // The record is complete once the entry is: its sizes, checksum and offset are known.
    engine.write = keep;
    try {
      writeRecord.call(engine, entry);
    } finally {
      engine.write = write;
    }
    afterAppend.call(engine, entry);
    const last = engine._entries.lastIndexOf(entry);
    if (last >= 0) engine._entries[last] = RECORD_KEPT;
  };
  let written = false;
  // Called once per entry when the ZIP ends: the first call writes every kept record, the others nothing.
  engine._writeCentralFileHeader = () => {
    if (written) return;
    written = true;
    for (const b of full.splice(0)) engine.write(b);
    if (used > 0) engine.write(block.subarray(0, used));
  };
}
