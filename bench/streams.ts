// Light helpers only: the storage benchmark's RSS child imports this, so nothing of the app is loaded here.
import { randomBytes } from 'node:crypto';

/** A 1 GiB stream made of one reused random MiB, in 256 KiB chunks as a socket would deliver them. */
export async function* source(total = 1024 ** 3): AsyncGenerator<Uint8Array> {
  const block = randomBytes(1024 ** 2);
  for (let sent = 0; sent < total; sent += 1024 ** 2) {
    for (let o = 0; o < 1024 ** 2; o += 256 * 1024) yield block.subarray(o, o + 256 * 1024);
  }
}

/** Reads a stream to its end; its length in bytes. */
export async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const chunk of stream) n += chunk.byteLength;
  return n;
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
