import { signal } from '@preact/signals';
import type { FileEvent } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** The live-update stream's state, shown in the shell when it is not live. */
export const streamState = signal<StreamState>('closed');

type Listener = (event: FileEvent) => void;
const listeners = new Set<Listener>();
/** Called for every change event, and with `{type: 'resync'}` after a reconnect (events may have been missed). */
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
  es.onmessage = (m) => {
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
      if (missed) for (const fn of listeners) fn({ type: 'resync' });
      return;
    }
    for (const fn of listeners) fn(event);
  };
  // The browser's own retry gives up on a refused stream (401, 429): retry ourselves, with backoff.
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
