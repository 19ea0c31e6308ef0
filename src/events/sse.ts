import type { EventHub, HubEvent } from './hub.ts';

export interface SseOptions {
  /** A `: keepalive` comment this often (docs/compatibility.md › Events: 30 s). */
  keepaliveMs?: number;
  /** Messages a subscriber may fall behind by before its stream is ended (it reconnects and resyncs). */
  maxBuffered?: number;
  /** Concurrent streams per login (docs/api.md › Limits: 20). */
  maxPerLogin?: number;
}

/**
 * The change log behind a stream: where it starts, asked once it is subscribed (after the client's
 * `Last-Event-ID` up to the latest seq, a reset when changes after it are gone, or fresh at the latest seq),
 * and the missed events, a page at a time.
 */
export interface Replay {
  start(): { afterSeq: number; untilSeq: number } | { reset: true; latestSeq: number } | { latestSeq: number };
  page(afterSeq: number, untilSeq: number, limit: number): { events: HubEvent[]; nextAfterSeq: number; done: boolean };
}

const encoder = new TextEncoder();
const frame = (payload: unknown) => encoder.encode(`data: ${JSON.stringify(payload)}\n\n`);
// `data:` first, `id:` after (the same event to EventSource): clients reading only `data:` blocks see no change.
const eventText = (e: HubEvent) =>
  `data: ${JSON.stringify({ type: e.type, timestamp: e.timestamp, data: e.data })}\n${e.seq === undefined ? '' : `id: ${e.resumeId ?? e.seq}\n`}\n`;
const KEEPALIVE = encoder.encode(': keepalive\n\n');
const CONNECTED = 'data: {"type":"connected"}\n';
// The latest seq as the id: a browser that reconnects after it resumes from there.
const startFrame = (text: string, latestSeq: number) => encoder.encode(`${text}id: ${latestSeq}\n\n`);
// Changes read from the log per page of a replay: one chunk on the stream, so memory stays bounded by the buffer.
const REPLAY_PAGE = 200;
const REPLAY_QUEUED = 4;
/** Slots of the keepalive wheel: one timer ticks a slot every keepaliveMs / WHEEL_SLOTS, however many streams are open. */
const WHEEL_SLOTS = 30;

/**
 * Server-Sent Event streams of an account's file events (docs/compatibility.md › Events: `data: <json>` only, a
 * `{"type":"connected"}` first, keepalive comments). Each stream has a bounded buffer, is counted per
 * login, and is cleaned up at once when the client goes away or the hub closes.
 */
export class SseStreams {
  private readonly perLogin = new Map<string, number>();
  /** Each event's frame, encoded once however many streams of its account are open. */
  private readonly frames = new WeakMap<HubEvent, Uint8Array>();
  private readonly wheel = Array.from({ length: WHEEL_SLOTS }, () => new Set<() => void>());
  private cursor = 0;
  private onWheel = 0;
  private ticker: ReturnType<typeof setInterval> | null = null;
  readonly keepaliveMs: number;
  readonly maxBuffered: number;
  readonly maxPerLogin: number;

  constructor(
    private readonly hub: EventHub,
    opts: SseOptions = {},
  ) {
    this.keepaliveMs = opts.keepaliveMs ?? 30_000;
    this.maxBuffered = opts.maxBuffered ?? 256;
    this.maxPerLogin = opts.maxPerLogin ?? 20;
  }

  private frameOf(event: HubEvent): Uint8Array {
    let bytes = this.frames.get(event);
    if (!bytes) this.frames.set(event, (bytes = encoder.encode(eventText(event))));
    return bytes;
  }

  /** Calls `beat` every keepaliveMs (the first within one slot of that) until the returned function is called. */
  private everyKeepalive(beat: () => void): () => void {
    // The slot that just fired comes round again after a whole turn of the wheel: keepaliveMs from now.
    const slot = this.wheel[this.cursor]!;
    slot.add(beat);
    if (this.onWheel++ === 0) this.ticker = setInterval(() => this.tick(), Math.max(1, Math.round(this.keepaliveMs / WHEEL_SLOTS)));
    return () => {
      if (!slot.delete(beat)) return;
      if (--this.onWheel === 0 && this.ticker) {
        clearInterval(this.ticker);
        this.ticker = null;
      }
    };
  }

  private tick(): void {
    this.cursor = (this.cursor + 1) % WHEEL_SLOTS;
    for (const beat of this.wheel[this.cursor]!) beat();
  }

  openCount(loginId: string): number {
    return this.perLogin.get(loginId) ?? 0;
  }

  /**
   * A new stream for the login, or null when it already has the maximum open. `signedIn` is asked at each
   * keepalive: a session revoked by another process (the CLI disabling the account) ends the stream then.
   * With `replay`, the missed events come first; live events that arrive meanwhile are held (as many as the
   * buffer) and sent after them, those the replay already sent skipped by seq.
   */
  open(
    accountId: string,
    loginId: string,
    signal?: AbortSignal,
    signedIn?: () => boolean,
    replay?: Replay,
    sessionId: string | null = null,
  ): ReadableStream<Uint8Array> | null {
    if (this.openCount(loginId) >= this.maxPerLogin) return null;
    this.perLogin.set(loginId, this.openCount(loginId) + 1);
    let finished = false;
    let range: { afterSeq: number; untilSeq: number } | null = null;
    let replayedUntil = 0;
    const held: HubEvent[] = [];
    const cleanups: Array<() => void> = [];
    const finish = () => {
      if (finished) return;
      finished = true;
      for (const c of cleanups) c();
      const n = this.openCount(loginId) - 1;
      if (n > 0) this.perLogin.set(loginId, n);
      else this.perLogin.delete(loginId);
    };
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          const end = () => {
            if (finished) return;
            finish();
            try {
              controller.close();
            } catch {
              // Already closed or errored by the consumer.
            }
          };
          const send = (chunk: Uint8Array) => {
            if (finished) return;
            // A subscriber this far behind is dropped rather than buffered without bound.
            if ((controller.desiredSize ?? 0) <= 0) return end();
            controller.enqueue(chunk);
          };
          cleanups.push(
            this.hub.subscribe(accountId, (event: HubEvent) => {
              if (range) {
                if (held.length >= this.maxBuffered) return end();
                held.push(event);
              } else if (event.seq === undefined || event.seq > replayedUntil) send(this.frameOf(event));
            }),
          );
          const start = replay?.start();
          if (!start) controller.enqueue(frame({ type: 'connected' }));
          else if ('afterSeq' in start) {
            // No id: the client keeps its own until the replayed events bring theirs.
            controller.enqueue(frame({ type: 'connected' }));
            range = start;
          } else if ('reset' in start) {
            controller.enqueue(frame({ type: 'connected' }));
            controller.enqueue(startFrame('data: {"type":"reset"}\nevent: reset\n', start.latestSeq));
          } else controller.enqueue(startFrame(CONNECTED, start.latestSeq));
          cleanups.push(this.hub.onClose(end));
          cleanups.push(this.hub.onLoginEnd(loginId, end, sessionId));
          cleanups.push(
            this.everyKeepalive(() => {
              try {
                if (signedIn && !signedIn()) return end();
              } catch {
                // A stream whose sign-in cannot be checked ends (the client reconnects and signs in again); the others go on.
                return end();
              }
              send(KEEPALIVE);
            }),
          );
          if (signal) {
            if (signal.aborted) return end();
            const onAbort = () => end();
            signal.addEventListener('abort', onAbort, { once: true });
            cleanups.push(() => signal.removeEventListener('abort', onAbort));
          }
        },
        pull: (controller) => {
          // A few pages queued at most: the next is read from the log once the client has taken one.
          while (replay && range && !finished && (controller.desiredSize ?? 0) > Math.max(0, this.maxBuffered - REPLAY_QUEUED)) {
            const { afterSeq, untilSeq } = range;
            const page = replay.page(afterSeq, untilSeq, REPLAY_PAGE);
            if (page.events.length > 0) controller.enqueue(encoder.encode(page.events.map(eventText).join('')));
            if (!page.done) {
              range = { afterSeq: page.nextAfterSeq, untilSeq };
              continue;
            }
            range = null;
            replayedUntil = untilSeq;
            for (const event of held.splice(0))
              if (event.seq === undefined || event.seq > replayedUntil) controller.enqueue(this.frameOf(event));
          }
        },
        cancel: finish,
      },
      { highWaterMark: this.maxBuffered, size: () => 1 },
    );
  }
}
