import { heapSize } from 'bun:jsc';
import os from 'node:os';
import { extractText, HostileDocumentError } from './extract.ts';
import { plainClone } from './plain-clone.ts';
import { indexedBytes } from './text.ts';
import type { ChannelText } from './text-channels.ts';
import { jitAtFullSpeed } from '../../lib/jit-policy.ts';

/** One document's text extraction, off the request thread: the server terminates this worker when it runs too long. */
declare const self: Worker;
jitAtFullSpeed();

// pdf.js clones each message between its two halves in this thread; the runtime's clone was 12% of a PDF's extraction.
globalThis.structuredClone = plainClone;

// Indexing is background work: this thread yields the CPU to request handling.
try {
  os.setPriority(10);
} catch {
  // Not permitted in some containers: extraction then competes at normal priority.
}

/** The first message: where this thread's texts go (the index writer's end of its channel). */
export interface TextsPort {
  port: MessagePort;
}

export interface ExtractRequest {
  id: number;
  name: string;
  bytes: Uint8Array;
  maxTextBytes: number;
}

/**
 * `heapBytes`: this thread's heap once the document is done, so the server can end a thread that grew.
 * `textBytes`: the size of the text sent to the index writer under the document's id (0: none sent).
 */
export type ExtractReply = { id: number; heapBytes: number } & ({ textBytes: number } | { error: string; hostile: boolean });

let texts: MessagePort | null = null;

self.onmessage = async (event: MessageEvent<ExtractRequest | TextsPort>) => {
  if ('port' in event.data) {
    texts = event.data.port;
    return;
  }
  const { id, name, bytes, maxTextBytes } = event.data;
  try {
    // Prepared for the index here too, so the request thread does no work proportional to the text.
    const text = indexedBytes(await extractText(name, bytes, { maxTextBytes }));
    // Straight to the writer, transferred: the text never counts towards the request thread's heap. Sent before the reply,
    // so a text the request thread hears of is on its way even if this thread is ended right after.
    const textBytes = text.byteLength;
    if (textBytes > 0) texts!.postMessage({ job: id, text } satisfies ChannelText, { transfer: [text.buffer] });
    self.postMessage({ id, heapBytes: heapSize(), textBytes } satisfies ExtractReply);
  } catch (err) {
    self.postMessage({
      id,
      heapBytes: heapSize(),
      error: String(err),
      hostile: err instanceof HostileDocumentError,
    } satisfies ExtractReply);
  }
};
