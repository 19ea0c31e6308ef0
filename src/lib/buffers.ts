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

/** A transfer at least this large is followed by a full collection (collectAfterTransfer). */
const COLLECT_AFTER_BYTES = 256 * 1024 * 1024;

/**
 * A full garbage collection once a transfer of `bytes` has ended, when it was large. What sealing it in
 * 64 KiB segments leaves behind (a cipher object per segment, small buffers) waits
 * otherwise for a collection the runtime runs rarely, and the next upload starts 20-50 MiB higher: a
 * chunked upload that followed a tus upload peaked at 172-184 MiB against 125-136 MiB after this
 * (issue 42). It costs about 20 ms of CPU, once per 256 MiB or more.
 */
export function collectAfterTransfer(bytes: number): void {
  if (bytes >= COLLECT_AFTER_BYTES) Bun.gc(true);
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
