import type { Clock } from '../clock.ts';
import { AppError } from '../errors.ts';

/** A WebDAV write lock (RFC 4918 §6) on a path of an account's tree. */
export interface DavLock {
  token: string;
  accountId: string;
  loginId: string;
  /** The locked path as name keys (`/a/b`; the root is ''): the tree's names are case-insensitive. */
  key: string;
  /** The path as the client wrote it, for `lockroot`. */
  href: string;
  depth: '0' | 'infinity';
  scope: 'exclusive' | 'shared';
  /** The `owner` element the client sent, as XML, returned in lock discovery. */
  ownerXml: string;
  timeoutSeconds: number;
  expiresAt: number;
}

const DEFAULT_LOCK_SECONDS = 3600;
const MAX_LOCK_SECONDS = 7 * 24 * 3600;

/** 423 Locked (RFC 4918 §11.3), with the precondition element a client can act on. */
export function locked(href: string): AppError {
  return new AppError(423, 'The resource is locked; send its lock token in the If header', { davCondition: 'lock-token-submitted', href });
}

const isUnder = (key: string, ancestor: string) => key === ancestor || key.startsWith(`${ancestor}/`);

/**
 * Write locks, held in memory: a lock lives at most its timeout and clients refresh or re-take it, so
 * a restart losing them is what a lock timeout would do anyway. Locks name paths, not items, because
 * RFC 4918 locks URLs (a lock on an unmapped URL, a MOVE that leaves the lock behind).
 */
export class DavLockService {
  private readonly locks = new Map<string, DavLock>();

  constructor(private readonly clock: Clock) {}

  /** Seconds from a `Timeout` header (`Second-N`, `Infinite`), capped; the default when absent or unreadable. */
  static timeoutOf(header: string | null): number {
    for (const part of (header ?? '').split(',')) {
      const t = part.trim();
      if (/^infinite$/i.test(t)) return MAX_LOCK_SECONDS;
      const m = /^second-(\d{1,10})$/i.exec(t);
      if (m) return Math.max(1, Math.min(MAX_LOCK_SECONDS, Number(m[1])));
    }
    return DEFAULT_LOCK_SECONDS;
  }

  private live(): DavLock[] {
    // Most requests meet no lock at all: every PROPFIND row asks.
    if (this.locks.size === 0) return [];
    const now = this.clock.now();
    const out: DavLock[] = [];
    for (const [token, lock] of this.locks) {
      if (lock.expiresAt <= now) this.locks.delete(token);
      else out.push(lock);
    }
    return out;
  }

  get(token: string): DavLock | null {
    const lock = this.locks.get(token);
    if (!lock || lock.expiresAt <= this.clock.now()) return null;
    return lock;
  }

  /** Locks that apply to `key`: on it, or depth-infinity locks on an ancestor. */
  covering(accountId: string, key: string): DavLock[] {
    return this.live().filter((l) => l.accountId === accountId && (l.key === key || (l.depth === 'infinity' && isUnder(key, l.key))));
  }

  /** Locks on `key` or anything below it, and those covering it from above (what a DELETE or MOVE of it touches). */
  affecting(accountId: string, key: string): DavLock[] {
    return this.live().filter((l) => l.accountId === accountId && (isUnder(l.key, key) || (l.depth === 'infinity' && isUnder(key, l.key))));
  }

  /** A new lock, unless it conflicts: an exclusive lock shares with nothing, shared locks with each other. */
  lock(input: Omit<DavLock, 'token' | 'expiresAt'>): DavLock {
    const overlapping = input.depth === 'infinity' ? this.affecting(input.accountId, input.key) : this.covering(input.accountId, input.key);
    if (overlapping.some((l) => l.scope === 'exclusive' || input.scope === 'exclusive')) throw locked(input.href);
    const lock: DavLock = {
      ...input,
      token: `urn:uuid:${crypto.randomUUID()}`,
      expiresAt: this.clock.now() + input.timeoutSeconds * 1000,
    };
    this.locks.set(lock.token, lock);
    return lock;
  }

  refresh(lock: DavLock, timeoutSeconds: number): DavLock {
    lock.timeoutSeconds = timeoutSeconds;
    lock.expiresAt = this.clock.now() + timeoutSeconds * 1000;
    return lock;
  }

  unlock(token: string): void {
    this.locks.delete(token);
  }

  /** The resource at `key` is gone (deleted, moved away): locks on it and below go with it. */
  forget(accountId: string, key: string): void {
    for (const l of this.live()) if (l.accountId === accountId && isUnder(l.key, key)) this.locks.delete(l.token);
  }
}
