import { signal } from '@preact/signals';
import type { FileEvent } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** The live-update stream's state, shown in the shell when it is not live. */
export const streamState = signal<StreamState>('closed');

type Listener = (event: FileEvent) => void;
const listeners = new Set<Listener>();
/**
 * Called for every change event, and with `{type: 'resync'}` when events may have been missed: after a
 * new connection, or a resume the server could not replay (`event: reset`). The browser's own reconnect
 * sends `Last-Event-ID` and the server replays what was missed, so a short drop needs no re-listing:
 * `{type: 'resumed'}` then, for what the log does not replay (notifications, a share taken away).
 */
export function onFileEvent(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

let source: EventSource | null = null;
let retry: ReturnType<typeof setTimeout> | null = null;
let backoff = 1000;
let everConnected = false;

function connect(): void {
  streamState.value = everConnected ? 'reconnecting' : 'connecting';
  const es = new EventSource(api.files.eventsUrl);
  source = es;
  let opened = false;
  const resync = () => {
    for (const fn of listeners) fn({ type: 'resync' });
  };
  es.addEventListener('reset', resync);
  es.onmessage = (m) => {
    let event: FileEvent;
    try {
      event = JSON.parse(m.data) as FileEvent;
    } catch {
      return;
    }
    if (event.type === 'connected') {
      // A new EventSource has no last id to resume from; the same one reconnecting has.
      const missed = everConnected && !opened;
      const resumed = opened;
      everConnected = true;
      opened = true;
      backoff = 1000;
      streamState.value = 'live';
      if (missed) resync();
      if (resumed) for (const fn of listeners) fn({ type: 'resumed' });
      return;
    }
    for (const fn of listeners) fn(event);
  };
  // A dropped stream the browser retries itself, resuming after its last id; a refused one (401, 429) it
  // gives up on: retry ourselves, with backoff.
  es.onerror = () => {
    if (es.readyState === EventSource.CONNECTING) {
      streamState.value = 'reconnecting';
      return;
    }
    es.close();
    if (source !== es) return;
    streamState.value = 'reconnecting';
    retry = setTimeout(connect, backoff + Math.random() * 500);
    backoff = Math.min(backoff * 2, 30_000);
  };
}

// Back online: try at once instead of waiting out the backoff.
const onOnline = () => {
  // Still the browser's to retry (it resumes after the last id): only a stream given up on starts over.
  if (!source || source.readyState !== EventSource.CLOSED) return;
  if (retry) clearTimeout(retry);
  source.close();
  backoff = 1000;
  connect();
};

export function startEvents(): void {
  if (source) return;
  everConnected = false;
  addEventListener('online', onOnline);
  connect();
}

export function stopEvents(): void {
  if (retry) clearTimeout(retry);
  removeEventListener('online', onOnline);
  source?.close();
  source = null;
  streamState.value = 'closed';
}
