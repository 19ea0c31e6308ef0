import type { Clock } from '../../clock.ts';
import { AppError, Messages, RateLimitedError } from '../../errors.ts';
import { parseRange } from '../../lib/byte-range.ts';
import { limitAddress } from '../../lib/ip.ts';
import { FixedWindowLimiter, rateLimitHeaders } from '../../lib/rate-limit.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';
import type { CurrentFile, ZipDownload } from '../files/downloads.ts';
import { currentValidators, evaluateRead, type ReadConditions, rangeUnder } from '../../lib/etags.ts';

/** Password attempts on one link from one address per window; a right password gives its attempt back. */
const UNLOCK_ATTEMPTS = 10;
/** Wrong passwords per link from all addresses together: many addresses must not multiply the guesses a link takes. */
const LINK_UNLOCK_ATTEMPTS = 100;
const UNLOCK_WINDOW_MS = 15 * 60_000;
/** Page views go to the audit log once per link, address and this long, so browsing a folder is one event. */
const VISIT_DEDUP_MS = 10 * 60_000;

/**
 * What a request under a link does to its download cap: `page` is refused once the downloads are used up,
 * `count` spends one download, `none` is the rest of a download already counted (or asking about an upload).
 */
export type DownloadCap = 'page' | 'count' | 'none';

/** A visitor's request under a link, as the rules need it (the door reads it from the request). */
export interface LinkVisit {
  /** The link-scoped unlock cookie's value, if the visitor sent one. */
  unlockCookie: string | null;
  ip: string;
  /** HEAD: the answer's headers without its bytes. */
  headOnly: boolean;
  /** Its Range and conditional headers, as sent. */
  conditions: ReadConditions;
}

/** A password-protected link opened without a valid unlock cookie: its door answers with the password form. */
export class LinkLockedError extends AppError {
  constructor(
    readonly token: string,
    readonly kind: 'file' | 'album',
  ) {
    super(401, Messages.sharePasswordRequired);
  }
}

/**
 * Whether serving `item` counts as a download: when what is served covers byte 0, read by the parser that
 * serves the Range (under its If-Range), so every form of it (a suffix, any case, spaces, leading zeros, one
 * ignored) counts as its bytes do; HEAD, a 304 and a 412 send no bytes, so never do.
 */
export function downloadCap(visit: LinkVisit, item: CurrentFile): DownloadCap {
  if (visit.headOnly) return 'page';
  // A folder's ZIP has no validators and ignores Range: it is always served whole.
  if (item.type === 'folder') return 'count';
  const validators = currentValidators(item);
  if (evaluateRead(visit.conditions, validators) !== 'send') return 'page';
  const range = parseRange(rangeUnder(visit.conditions, validators.etag), item.size);
  return range === 'unsatisfiable' || (range !== null && range.start > 0) ? 'none' : 'count';
}

/**
 * A ZIP under a link is counted once its slot is taken, so one refused for want of a slot (429, 503) spends no
 * download; when the count is refused (the cap reached meanwhile), the ZIP is ended and its slot freed.
 */
export function countedZip(zip: ZipDownload, count: () => void): ZipDownload {
  try {
    count();
  } catch (err) {
    void zip.stream.cancel();
    throw err;
  }
  return zip;
}

/**
 * Password attempts on links, per link and address and per link from every address: spent before the check, so at
 * most the limits of guesses are ever checked; a window, so a link guessed at is closed to new unlocks for a quarter
 * of an hour at most (visitors who unlocked it keep their cookie).
 */
export class UnlockAttempts {
  private readonly perAddress: FixedWindowLimiter;
  private readonly perLink: FixedWindowLimiter;

  constructor(private readonly clock: Clock) {
    this.perAddress = new FixedWindowLimiter(UNLOCK_ATTEMPTS, UNLOCK_WINDOW_MS, clock);
    this.perLink = new FixedWindowLimiter(LINK_UNLOCK_ATTEMPTS, UNLOCK_WINDOW_MS, clock);
  }

  /** Runs `check` with one attempt of `link` from `ip` spent (429 past either limit, after `refused`); a check that passes gives it back. */
  async spend<T>(link: string, ip: string, check: () => Promise<T>, refused?: () => void): Promise<T> {
    const key = `${link}|${limitAddress(ip)}`;
    const counted = this.perAddress.hit(key);
    // An address past its own limit does not count against the link's, so one address cannot close it to others.
    const linkCounted = counted.allowed ? this.perLink.hit(link) : null;
    const over = !counted.allowed ? counted : !linkCounted!.allowed ? linkCounted! : null;
    if (over) {
      refused?.();
      throw new RateLimitedError(rateLimitHeaders(over, this.clock.now()));
    }
    const result = await check();
    this.perAddress.release(key, counted);
    this.perLink.release(link, linkCounted!);
    return result;
  }
}

/** A public link's visits and downloads as audit records, file links and album links alike (the visitor is known only by address). */
export class LinkVisits {
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  /** Records a download, or a page view unless this link and address had one in the last 10 minutes (then false). */
  record(
    kind: 'access' | 'download',
    visit: { ip: string; accountId: string; targetType: 'share' | 'album'; targetId: string; details: Record<string, unknown> },
  ): boolean {
    if (kind === 'access') {
      const key = `${visit.targetId}|${visit.ip}`;
      const now = this.clock.now();
      const last = this.recent.get(key);
      if (last !== undefined && now - last < VISIT_DEDUP_MS) return false;
      if (this.recent.size >= 10_000) this.recent.clear();
      this.recent.set(key, now);
    }
    this.audit.record({ action: kind === 'access' ? AuditActions.shareAccess : AuditActions.shareDownload, ...visit });
    return true;
  }
}
