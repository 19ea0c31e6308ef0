import type { EventHub, HubEvent } from './hub.ts';

export interface SseOptions {
  /** A `: keepalive` comment this often (docs/compatibility.md › Events: 30 s). */
  keepaliveMs?: number;
  /** Messages a subscriber may fall behind by before its stream is ended (it reconnects and resyncs). */
  maxBuffered?: number;
  /** Concurrent streams per login (docs/api.md › Limits: 20). */
  maxPerLogin?: number;
}

const encoder = new TextEncoder();
const frame = (payload: unknown) => encoder.encode(`data: ${JSON.stringify(payload)}\n\n`);
const KEEPALIVE = encoder.encode(': keepalive\n\n');
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
    if (!bytes) this.frames.set(event, (bytes = frame(event)));
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
   */
  open(accountId: string, loginId: string, signal?: AbortSignal, signedIn?: () => boolean): ReadableStream<Uint8Array> | null {
    if (this.openCount(loginId) >= this.maxPerLogin) return null;
    this.perLogin.set(loginId, this.openCount(loginId) + 1);
    let finished = false;
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
          controller.enqueue(frame({ type: 'connected' }));
          cleanups.push(this.hub.subscribe(accountId, (event: HubEvent) => send(this.frameOf(event))));
          cleanups.push(this.hub.onClose(end));
          cleanups.push(this.hub.onLoginEnd(loginId, end));
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
        cancel: finish,
      },
      { highWaterMark: this.maxBuffered, size: () => 1 },
    );
  }
}
