import { heapSize } from 'bun:jsc';
import os from 'node:os';
import { extractText, HostileDocumentError } from './extract.ts';
import { plainClone } from './plain-clone.ts';
import { indexedBytes } from './text.ts';
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

export interface ExtractRequest {
  id: number;
  name: string;
  bytes: Uint8Array;
  maxTextBytes: number;
}

/**
 * `heapBytes`: this thread's heap once the document is done, so the server can end a thread that grew.
 * `text`: UTF-8, transferred, so neither the request thread nor the index writer copies it on the way.
 */
export type ExtractReply = { id: number; heapBytes: number } & ({ text: Uint8Array } | { error: string; hostile: boolean });

self.onmessage = async (event: MessageEvent<ExtractRequest>) => {
  const { id, name, bytes, maxTextBytes } = event.data;
  try {
    // Prepared for the index here too, so the request thread does no work proportional to the text.
    const text = indexedBytes(await extractText(name, bytes, { maxTextBytes }));
    self.postMessage({ id, heapBytes: heapSize(), text } satisfies ExtractReply, { transfer: [text.buffer] });
  } catch (err) {
    self.postMessage({
      id,
      heapBytes: heapSize(),
      error: String(err),
      hostile: err instanceof HostileDocumentError,
    } satisfies ExtractReply);
  }
};
