import { type SegmentInput, type SegmentOutput, writeSegment } from './replica-segment.ts';
import { jitAtFullSpeed } from '../../lib/jit-policy.ts';

/**
 * Reads, seals and writes replication's segments on a thread of its own, so the thread that answers
 * requests and commits only hands it a position and takes back the next one.
 */
declare const self: Worker;
jitAtFullSpeed();

export type SegmentReply = { ok: true; output: SegmentOutput } | { ok: false; error: string; code?: string };

self.onmessage = (event: MessageEvent<SegmentInput>) => {
  try {
    self.postMessage({ ok: true, output: writeSegment(event.data) } satisfies SegmentReply);
  } catch (err) {
    self.postMessage({
      ok: false,
      error: err instanceof Error ? err.message : String(err),
      code: (err as NodeJS.ErrnoException).code,
    } satisfies SegmentReply);
  }
};
