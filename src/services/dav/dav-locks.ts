import type { Clock } from '../../clock.ts';
import { AppError, badRequest } from '../../errors.ts';

/** A WebDAV write lock (RFC 4918 §6) on a path of an account's tree. */
export interface DavLock {
  token: string;
  accountId: string;
  loginId: string;
  /** The credential the lock was taken with (the principal's session id: one app password, or the account password). */
  credential: string;
  /** The locked path as name keys (`/a/b`; the root is ''): the tree's names are case-insensitive. */
  key: string;
  /** The path as the client wrote it, for `lockroot`. */
  href: string;
  /** The path for people (`/Folder/File.txt`), for the owner's list of locks. */
  path: string;
  /** Set for a lock a member took inside a share: it goes when that membership ends. */
  share: { rootId: string; memberAccountId: string } | null;
  depth: '0' | 'infinity';
  scope: 'exclusive' | 'shared';
  /** The `owner` element the client sent, as XML, returned in lock discovery. */
  ownerXml: string;
  /** The xml:lang in scope on that element, returned on it (RFC 4918 §4.3); null for none. */
  ownerLang: string | null;
  timeoutSeconds: number;
  expiresAt: number;
}

const DEFAULT_LOCK_SECONDS = 3600;
const MAX_LOCK_SECONDS = 7 * 24 * 3600;
/** Locks an account holds at once: a client holds one per open file, so only a runaway or hostile one gets near. */
export const MAX_LOCKS_PER_ACCOUNT = 1000;
/** Locks on one path: only shared locks stack, and clients take one each. */
export const MAX_LOCKS_PER_PATH = 16;
/** The `owner` element a lock keeps (clients send a name, an email or a URL) and repeats in every lock discovery. */
export const MAX_LOCK_OWNER_BYTES = 4096;

/** 423 Locked (RFC 4918 §11.3), with the precondition element a client can act on. */
export function locked(href: string): AppError {
  return new AppError(423, 'The resource is locked; send its lock token in the If header', { davCondition: 'lock-token-submitted', href });
}

const isUnder = (key: string, ancestor: string) => key === ancestor || key.startsWith(`${ancestor}/`);

const NO_LOCKS: DavLock[] = [];

/** Of `locks` (already read), those on `key` or covering it from above: DavLockService.covering's rule. */
export function locksCovering(locks: readonly DavLock[], key: string): DavLock[] {
  return locks.length === 0 ? NO_LOCKS : locks.filter((l) => l.key === key || (l.depth === 'infinity' && isUnder(key, l.key)));
}

/**
 * The first of `locks` (all on `key`, covering it or below it) a write to `key` has not proven: an exclusive lock
 * needs its own token, a shared one any proven shared lock on its resource (RFC 4918 §6.2: any holder may write).
 */
export function unprovenLock(locks: readonly DavLock[], key: string, proves: (lock: DavLock) => boolean): DavLock | undefined {
  const proven = locks.filter(proves);
  return locks.find((lock) => {
    if (proven.includes(lock)) return false;
    if (lock.scope === 'exclusive') return true;
    const at = isUnder(lock.key, key) ? lock.key : key;
    return !locksCovering(proven, at).some((p) => p.scope === 'shared');
  });
}

/** `key` and the keys of its ancestors up to the root (''). */
function* selfAndAncestors(key: string): Generator<string> {
  for (let i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) yield key.slice(0, i);
  yield key;
}

/**
 * Write locks, held in memory: a lock lives at most its timeout and clients refresh or re-take it, so
 * a restart losing them is what a lock timeout would do anyway. Locks name paths, not items, because
 * RFC 4918 locks URLs (a lock on an unmapped URL, a MOVE that leaves the lock behind). Indexed by
 * account and path, so a request looks only at the locks on its own path and its ancestors.
 */
export class DavLockService {
  private readonly byToken = new Map<string, DavLock>();
  /** Each account's locks by path key. */
  private readonly byAccount = new Map<string, Map<string, DavLock[]>>();
  /** The access the locks were last checked against. */
  private checkedAt: string | null = null;

  /**
   * `held.stillHeld` says whether a lock's login may still hold it; it is asked again of every lock whenever
   * `held.version` moves, so an end of access no release reached (another process, the sharing switch) frees them too.
   */
  constructor(
    private readonly clock: Clock,
    private readonly held?: { version: () => string; stillHeld: (lock: DavLock) => boolean },
  ) {}

  /** Drops the locks whose login may no longer hold them, when the access they were checked against moved. */
  private recheck(): void {
    if (!this.held || this.byToken.size === 0) return;
    const version = this.held.version();
    if (version === this.checkedAt) return;
    this.checkedAt = version;
    for (const lock of [...this.byToken.values()]) if (!this.held.stillHeld(lock)) this.unlock(lock.token);
  }

  /** A new lock's seconds when its LOCK names none the server reads. */
  static readonly defaultSeconds = DEFAULT_LOCK_SECONDS;

  /** Seconds from a `Timeout` header (`Second-N`, `Infinite`), capped; null when absent or unreadable. */
  static timeoutOf(header: string | null): number | null {
    for (const part of (header ?? '').split(',')) {
      const t = part.trim();
      if (/^infinite$/i.test(t)) return MAX_LOCK_SECONDS;
      const m = /^second-(\d{1,10})$/i.exec(t);
      if (m) return Math.max(1, Math.min(MAX_LOCK_SECONDS, Number(m[1])));
    }
    return null;
  }

  /** The live locks on exactly `key`; expired ones met on the way are dropped. */
  private at(accountId: string, key: string): DavLock[] {
    const list = this.byAccount.get(accountId)?.get(key);
    if (!list) return [];
    const now = this.clock.now();
    for (const lock of list.filter((l) => l.expiresAt <= now)) this.unlock(lock.token);
    return this.byAccount.get(accountId)?.get(key) ?? [];
  }

  /** Every live lock of the account. */
  ofAccount(accountId: string): DavLock[] {
    this.recheck();
    const keys = this.byAccount.get(accountId);
    return keys ? [...keys.keys()].flatMap((key) => this.at(accountId, key)) : [];
  }

  get(token: string): DavLock | null {
    this.recheck();
    const lock = this.byToken.get(token);
    if (!lock || lock.expiresAt <= this.clock.now()) return null;
    return lock;
  }

  /** Locks that apply to `key`: on it, or depth-infinity locks on an ancestor. */
  covering(accountId: string, key: string): DavLock[] {
    // Most requests meet no lock at all: every PROPFIND row asks.
    if (!this.byAccount.has(accountId)) return [];
    this.recheck();
    const out: DavLock[] = [];
    for (const k of selfAndAncestors(key)) for (const l of this.at(accountId, k)) if (k === key || l.depth === 'infinity') out.push(l);
    return out;
  }

  /** Locks on `key` or anything below it, and those covering it from above (what a DELETE or MOVE of it touches). */
  affecting(accountId: string, key: string): DavLock[] {
    return this.ofAccount(accountId).filter((l) => isUnder(l.key, key) || (l.depth === 'infinity' && isUnder(key, l.key)));
  }

  /** A new lock, unless it conflicts (an exclusive lock shares with nothing, shared locks with each other) or a limit is reached. */
  lock(input: Omit<DavLock, 'token' | 'expiresAt'>): DavLock {
    if (Buffer.byteLength(input.ownerXml) + Buffer.byteLength(input.ownerLang ?? '') > MAX_LOCK_OWNER_BYTES)
      throw badRequest(`The lock's owner element is over ${MAX_LOCK_OWNER_BYTES} bytes; send a shorter one (a name or an address)`);
    const overlapping = input.depth === 'infinity' ? this.affecting(input.accountId, input.key) : this.covering(input.accountId, input.key);
    const conflict = overlapping.find((l) => l.scope === 'exclusive' || input.scope === 'exclusive');
    // RFC 4918 §9.10.6: no token makes a conflicting lock compatible, so the answer names the lock in the way, not a token to send.
    if (conflict)
      throw new AppError(423, 'The resource is already locked by a lock this one conflicts with (see its lockdiscovery)', {
        davCondition: 'no-conflicting-lock',
        href: conflict.href,
      });
    if (this.at(input.accountId, input.key).length >= MAX_LOCKS_PER_PATH)
      throw new AppError(423, `This resource has ${MAX_LOCKS_PER_PATH} locks, the most it takes; release one (UNLOCK) first`, {
        davCondition: 'no-conflicting-lock',
      });
    if (this.ofAccount(input.accountId).length >= MAX_LOCKS_PER_ACCOUNT)
      throw new AppError(
        507,
        `Your account holds ${MAX_LOCKS_PER_ACCOUNT} WebDAV locks, the most it may; release some (UNLOCK, or Settings → App passwords → WebDAV locks) or let them expire`,
      );
    const lock: DavLock = {
      ...input,
      token: `urn:uuid:${crypto.randomUUID()}`,
      expiresAt: this.clock.now() + input.timeoutSeconds * 1000,
    };
    this.byToken.set(lock.token, lock);
    let keys = this.byAccount.get(lock.accountId);
    if (!keys) this.byAccount.set(lock.accountId, (keys = new Map()));
    const list = keys.get(lock.key);
    if (list) list.push(lock);
    else keys.set(lock.key, [lock]);
    return lock;
  }

  /** A refresh without a timeout it reads keeps the lock's own (RFC 4918 §9.10.2), as Sabre does, not the default. */
  refresh(lock: DavLock, timeoutSeconds: number | null): DavLock {
    lock.timeoutSeconds = timeoutSeconds ?? lock.timeoutSeconds;
    lock.expiresAt = this.clock.now() + lock.timeoutSeconds * 1000;
    return lock;
  }

  unlock(token: string): void {
    const lock = this.byToken.get(token);
    if (!lock) return;
    this.byToken.delete(token);
    const keys = this.byAccount.get(lock.accountId)!;
    const rest = keys.get(lock.key)!.filter((l) => l !== lock);
    if (rest.length) keys.set(lock.key, rest);
    else keys.delete(lock.key);
    if (keys.size === 0) this.byAccount.delete(lock.accountId);
  }

  /** The resource at `key` is gone (deleted, moved away): locks on it and below go with it. */
  forget(accountId: string, key: string): void {
    for (const l of this.ofAccount(accountId)) if (isUnder(l.key, key)) this.unlock(l.token);
  }

  /** The account is disabled or deleted: all its locks go. */
  forgetAccount(accountId: string): void {
    for (const l of this.ofAccount(accountId)) this.unlock(l.token);
  }

  /** A login is removed or loses a permission or all its app passwords: the locks it took go, in shares too. */
  forgetLogin(loginId: string): void {
    for (const l of this.all()) if (l.loginId === loginId) this.unlock(l.token);
  }

  /** An account stops being an editor of `rootId` (removed, made viewer): the locks its logins took inside that share go. */
  forgetShare(ownerId: string, rootId: string, memberAccountId: string): void {
    for (const l of this.ofAccount(ownerId))
      if (l.share?.rootId === rootId && l.share.memberAccountId === memberAccountId) this.unlock(l.token);
  }

  /** An account is disabled or deleted: the locks its logins took inside other accounts' shares go. */
  forgetMember(memberAccountId: string): void {
    for (const l of this.all()) if (l.share?.memberAccountId === memberAccountId) this.unlock(l.token);
  }

  private all(): DavLock[] {
    return [...this.byAccount.keys()].flatMap((accountId) => this.ofAccount(accountId));
  }

  /** One credential (an app password) is revoked: the locks taken with it go. */
  forgetCredential(accountId: string, credential: string): void {
    for (const l of this.ofAccount(accountId)) if (l.credential === credential) this.unlock(l.token);
  }
}
