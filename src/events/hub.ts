/** A change in an account's file tree (or a finished job), as SSE clients receive it. */
export interface HubEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  /** The change log's seq of the change (events that are not item changes have none). */
  seq?: number;
  /**
   * The SSE `id:`: the seq a stream that stops here resumes after. Below `seq` while a change made before it
   * is still to be announced (published late, after a longer write), so a resume replays that one; else `seq`.
   */
  resumeId?: number;
}

export type HubListener = (event: HubEvent) => void;

/** In-process publish/subscribe, one channel per account; delivery never crosses accounts. */
export class EventHub {
  private readonly channels = new Map<string, Set<HubListener>>();
  private readonly closeListeners = new Set<() => void>();
  private readonly accessListeners = new Set<(accountId: string) => void>();
  /** Each login's open streams, with the session each was opened by. */
  private readonly loginEndListeners = new Map<string, Set<{ sessionId: string | null; end: () => void }>>();
  private closed = false;

  subscribe(accountId: string, listener: HubListener): () => void {
    if (this.closed) return () => {};
    let set = this.channels.get(accountId);
    if (!set) this.channels.set(accountId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.channels.get(accountId) === set) this.channels.delete(accountId);
    };
  }

  publish(accountId: string, type: string, data: Record<string, unknown>, timestamp = new Date(), seq?: number, resumeId?: number): void {
    const set = this.channels.get(accountId);
    if (!set) return;
    const event: HubEvent = { type, timestamp: timestamp.toISOString(), data };
    if (seq !== undefined) event.seq = seq;
    if (resumeId !== undefined) event.resumeId = resumeId;
    this.deliver(set, event);
  }

  private deliver(set: Set<HubListener>, event: HubEvent): void {
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch {
        // One broken subscriber must not stop delivery to the others.
      }
    }
  }

  subscriberCount(accountId: string): number {
    return this.channels.get(accountId)?.size ?? 0;
  }

  /**
   * Called when a login, or one of its sessions (`sessionId`, the one the stream was opened by), is signed out by
   * someone else (a session revoked, a sub-user deleted, its account disabled or deleted): its streams end.
   */
  onLoginEnd(loginId: string, listener: () => void, sessionId: string | null = null): () => void {
    let set = this.loginEndListeners.get(loginId);
    if (!set) this.loginEndListeners.set(loginId, (set = new Set()));
    const entry = { sessionId, end: listener };
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.loginEndListeners.get(loginId) === set) this.loginEndListeners.delete(loginId);
    };
  }

  /** Ends the login's streams: all of them, or those of the sessions `ended` names. */
  endLogin(loginId: string, ended: (sessionId: string | null) => boolean = () => true): void {
    for (const l of [...(this.loginEndListeners.get(loginId) ?? [])]) if (ended(l.sessionId)) l.end();
  }

  /**
   * An account's rights changed (a share's role, a membership or a group ended, a sub-user's permissions): its folder
   * ETags moved without a change below them, so a desktop client that waits for push is told to look again. Not an
   * event of the streams: the web app reads rights at each request.
   */
  accessChanged(accountId: string): void {
    for (const l of [...this.accessListeners]) l(accountId);
  }

  onAccessChange(listener: (accountId: string) => void): () => void {
    this.accessListeners.add(listener);
    return () => this.accessListeners.delete(listener);
  }

  /** Called on shutdown: streams end so in-flight requests can finish. */
  onClose(listener: () => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.closeListeners) l();
    this.channels.clear();
  }
}
