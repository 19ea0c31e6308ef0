import type { Clock } from '../clock.ts';

export interface PresenceEntry {
  /** The login whose session (or desktop client) sent the heartbeat. */
  loginId: string;
  sessionId: string;
  ip: string;
  lastSeen: number;
  firstSeen: number;
  /** Desktop clients: app version and platform. */
  meta?: Record<string, string>;
}

/** Heartbeats with expiry, keyed by session id or `<loginId>:<clientId>`. Expired entries read as absent. */
export class Presence {
  private readonly entries = new Map<string, PresenceEntry>();

  constructor(
    private readonly clock: Clock,
    readonly ttlMs: number,
  ) {}

  beat(key: string, entry: Omit<PresenceEntry, 'lastSeen' | 'firstSeen'>): PresenceEntry {
    const now = this.clock.now();
    const previous = this.get(key);
    const next = { ...entry, firstSeen: previous?.firstSeen ?? now, lastSeen: now };
    this.entries.set(key, next);
    return next;
  }

  get(key: string): PresenceEntry | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (this.clock.now() - e.lastSeen > this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  /** Entries seen within `withinMs` (default: the TTL). */
  live(withinMs = this.ttlMs): Array<[string, PresenceEntry]> {
    const cutoff = this.clock.now() - withinMs;
    return [...this.entries].filter(([, e]) => e.lastSeen >= cutoff);
  }

  remove(key: string): boolean {
    return this.entries.delete(key);
  }

  removeWhere(predicate: (entry: PresenceEntry, key: string) => boolean): number {
    let n = 0;
    for (const [key, e] of this.entries) {
      if (predicate(e, key)) {
        this.entries.delete(key);
        n++;
      }
    }
    return n;
  }

  /** Drops expired entries; run by a schedule so the map cannot grow without bound. */
  sweep(): number {
    const cutoff = this.clock.now() - this.ttlMs;
    return this.removeWhere((e) => e.lastSeen < cutoff);
  }

  get size(): number {
    return this.entries.size;
  }
}
