import { signal } from '@preact/signals';
import type { FileEvent } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** The live-update stream's state, shown in the shell when it is not live. */
export const streamState = signal<StreamState>('closed');

type Listener = (event: FileEvent) => void;
const listeners = new Set<Listener>();
/**
 * Called for every change event; after a reconnect, with `{type: 'resumed'}` when the server replayed what
 * was missed (from the last event's id), or `{type: 'resync'}` when it could not (`event: reset`) or there
 * was no id to resume from: then whatever is shown must be listed again.
 */
export function onFileEvent(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

const liveListeners = new Set<() => void>();
/**
 * Called each time a stream is subscribed (the first and every reconnect): what only live events change (the bell,
 * stars, shares with this account) is not in the change log the stream replays, so what shows it is read again.
 */
export function onStreamLive(fn: () => void): () => void {
  liveListeners.add(fn);
  return () => liveListeners.delete(fn);
}

let source: EventSource | null = null;
let retry: ReturnType<typeof setTimeout> | null = null;
let backoff = 1000;
let everConnected = false;
// The id of the last event received: a reconnect asks the server to replay what came after it.
let lastId = '';
// The position read with the session, before the screens' first reads: the first stream replays what came after it.
let firstId = '';

/** Where the next `startEvents` starts: after this id (from `X-Last-Event-Id`), not at whatever is newest when its stream is subscribed. */
export function eventsStartAfter(id: string | null): void {
  firstId = id && /^\d+$/.test(id) ? id : '';
}

function connect(): void {
  streamState.value = everConnected ? 'reconnecting' : 'connecting';
  const resuming = lastId;
  const es = new EventSource(resuming ? `${api.files.eventsUrl}?lastEventId=${encodeURIComponent(resuming)}` : api.files.eventsUrl);
  source = es;
  const resync = () => {
    for (const fn of listeners) fn({ type: 'resync' });
  };
  es.addEventListener('reset', (m) => {
    lastId = (m as MessageEvent).lastEventId;
    resync();
  });
  es.onmessage = (m) => {
    if (m.lastEventId) lastId = m.lastEventId;
    let event: FileEvent;
    try {
      event = JSON.parse(m.data) as FileEvent;
    } catch {
      return;
    }
    if (event.type === 'connected') {
      const missed = everConnected;
      everConnected = true;
      backoff = 1000;
      streamState.value = 'live';
      if (missed && resuming) for (const fn of listeners) fn({ type: 'resumed' });
      else if (missed) resync();
      for (const fn of liveListeners) fn();
      return;
    }
    for (const fn of listeners) fn(event);
  };
  // Every drop is retried here, with backoff, resuming after the last id (the browser's own retry gives up on a
  // refused stream, 401 or 429, and cannot ask for a replay after a new EventSource).
  es.onerror = () => {
    es.close();
    if (source !== es) return;
    streamState.value = 'reconnecting';
    retry = setTimeout(connect, backoff + Math.random() * 500);
    backoff = Math.min(backoff * 2, 30_000);
  };
}

// Back online: try at once instead of waiting out the backoff.
const onOnline = () => {
  if (!source || streamState.value === 'live') return;
  if (retry) clearTimeout(retry);
  source.close();
  backoff = 1000;
  connect();
};

export function startEvents(): void {
  if (source) return;
  everConnected = false;
  lastId = firstId;
  firstId = '';
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
