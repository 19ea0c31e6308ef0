/**
 * Frees the memory behind `chunk` now instead of at the next garbage collection. On a host with 16 GiB
 * or more the runtime collects rarely, and a 1 GiB transfer's dead 64-256 KiB chunks pile up: 15-30 MiB
 * more peak RSS per upload or download. Only for a chunk its caller owns outright: every view of the
 * same memory becomes empty.
 */
export function releaseChunk(chunk: Uint8Array): void {
  const { buffer } = chunk;
  // A view of part of a buffer may share it with other views: left to the GC.
  if (buffer instanceof ArrayBuffer && !buffer.detached && chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength)
    buffer.transfer(0);
}

/**
 * Frees the memory behind the buffer `chunk` views, for a chunk that is the only view of it: a cipher's
 * output views all of its buffer but a byte of slack, which releaseChunk leaves to the GC.
 */
export function releaseSoleView(chunk: Uint8Array): void {
  const { buffer } = chunk;
  if (buffer instanceof ArrayBuffer && !buffer.detached) buffer.transfer(0);
}

/** A transfer at least this large is followed by a full collection (collectAfterTransfer), and may be preceded by one. */
const LARGE_TRANSFER_BYTES = 256 * 1024 * 1024;

/**
 * Heap grown by this much since the last collection around a large transfer is garbage worth collecting before
 * the next one: one young generation's allowance (8 MiB); a 1 GiB upload and download in between left 0.6 MiB.
 */
const GARBAGE_BEFORE_TRANSFER = 8 * 1024 * 1024;

/** The heap's capacity (`process.memoryUsage().heapTotal`) right after the last collection around a large transfer. */
let heapAfterCollection = 0;

function collectNow(): void {
  Bun.gc(true);
  heapAfterCollection = process.memoryUsage().heapTotal;
}

/**
 * A full garbage collection once a transfer of `bytes` has ended, when it was large. What sealing it in
 * 64 KiB segments leaves behind (a cipher object per segment, small buffers) waits
 * otherwise for a collection the runtime runs rarely, and the next upload starts 20-50 MiB higher: a
 * chunked upload that followed a tus upload peaked at 172-184 MiB against 125-136 MiB after this
 * (issue 42). It costs about 20 ms of CPU, once per 256 MiB or more.
 */
export function collectAfterTransfer(bytes: number): void {
  if (bytes >= LARGE_TRANSFER_BYTES) collectNow();
}

/**
 * A full garbage collection before the body of an upload declared large, when the heap has grown by
 * GARBAGE_BEFORE_TRANSFER since the last one around a transfer: the upload's own rise (5-11 MiB in its first
 * moments) then reuses the memory other requests' garbage held instead of landing on top of it (WebDAV's
 * peak after 10,000-item PROPFINDs and 2,000 small PUTs; docs/performance.md, the twelfth pass). Back-to-back
 * large transfers skip it: the runtime's own collections during the last one left the heap within 1 MiB of it.
 */
export function collectBeforeTransfer(declaredBytes: number | undefined): void {
  if (declaredBytes === undefined || declaredBytes < LARGE_TRANSFER_BYTES) return;
  if (process.memoryUsage().heapTotal - heapAfterCollection >= GARBAGE_BEFORE_TRANSFER) collectNow();
}

const handedOver = new WeakSet<Uint8Array>();

/**
 * Marks `chunk` as made for its one reader, which may free it with releaseHandedOver once it has passed the
 * bytes on: for a producer that keeps no other reference to it and hands it to no one else.
 */
export function handOver<T extends Uint8Array>(chunk: T): T {
  handedOver.add(chunk);
  return chunk;
}

/** Frees `chunk` now if its producer handed it over (handOver); any other chunk is left to the GC. */
export function releaseHandedOver(chunk: Uint8Array): void {
  if (handedOver.delete(chunk)) releaseSoleView(chunk);
}

/** A body of no bytes, for the callers of an API that takes a stream. */
export async function* noBytes(): AsyncGenerator<Uint8Array> {}

/**
 * A buffer that holds `filled` bytes of `buf` and room for `more`, at most `cap`: sized to what arrived
 * and doubled (copied) as more does, so a 4 KiB body does not take a `cap`-sized buffer of its own.
 */
export function grownFor(buf: Buffer | null, filled: number, more: number, cap: number): Buffer {
  const size = buf?.byteLength ?? 0;
  if (buf && filled + more <= size) return buf;
  const grown = Buffer.allocUnsafe(Math.min(cap, Math.max(filled + more, 2 * size)));
  if (buf && filled > 0) grown.set(buf.subarray(0, filled));
  return grown;
}
