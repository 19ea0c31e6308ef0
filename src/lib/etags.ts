/**
 * Whether an If-None-Match header's list names `etag` by RFC 9110's weak comparison (a `W/` on either side
 * is ignored), as that header is always compared; `*` is the caller's to read.
 */
export function noneMatchNames(header: string, etag: string): boolean {
  const bare = etag.startsWith('W/') ? etag.slice(2) : etag;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return (tag.startsWith('W/') ? tag.slice(2) : tag) === bare;
  });
}

/**
 * Whether an If-Unmodified-Since date fails for a resource last modified at `modifiedAtMs` (RFC 9110 13.1.4): it
 * changed after that date, compared in whole seconds as Last-Modified states it; a date that does not parse is ignored.
 */
export function modifiedSince(header: string, modifiedAtMs: number): boolean {
  const since = Date.parse(header);
  return Number.isFinite(since) && Math.floor(modifiedAtMs / 1000) > Math.floor(since / 1000);
}

/**
 * Whether a Range is served under If-Range (RFC 9110 13.1.5): without one, or while it names `etag` by strong
 * comparison. A date never does: a file's modified time is the client's to set (X-OC-Mtime), no strong validator.
 */
function rangeStillApplies(ifRange: string | null, etag: string): boolean {
  return ifRange === null || ifRange.trim() === etag;
}

/** What names a file's content in its ETag: its object key, or for a library file (no object) its modified time, which every new content sets. */
export const contentPart = (row: { storageKey: string | null; modifiedAt: number }) =>
  row.storageKey === null ? `h${row.modifiedAt}` : row.storageKey.slice(0, 12);

/**
 * A file's strong ETag, one for every door (WebDAV, the API's download, share links): it names the content, so an
 * upload or a document server's save gives a new one, a version restored gives back that version's, and nothing
 * else (a rename, a move, a star, a link's options) moves it.
 */
export const fileEtag = (row: { id: string; storageKey: string | null; modifiedAt: number; size: number }) =>
  `"${row.id}-${contentPart(row)}-${row.size}"`;

/** The validators of a file's current content, from its row as loaded: no other read, no hashing. */
export const currentValidators = (row: { id: string; storageKey: string | null; modifiedAt: number; size: number }): Validators => ({
  etag: fileEtag(row),
  modifiedAt: row.modifiedAt,
});

/** A GET's or HEAD's conditional headers as sent (RFC 9110 13); `range` only on a GET (14.2: other methods ignore it). */
export interface ReadConditions {
  ifMatch: string | null;
  ifUnmodifiedSince: string | null;
  ifNoneMatch: string | null;
  ifModifiedSince: string | null;
  ifRange: string | null;
  range: string | null;
}

export function readConditionsOf(request: Request): ReadConditions {
  const h = request.headers;
  return {
    ifMatch: h.get('if-match'),
    ifUnmodifiedSince: h.get('if-unmodified-since'),
    ifNoneMatch: h.get('if-none-match'),
    ifModifiedSince: h.get('if-modified-since'),
    ifRange: h.get('if-range'),
    range: request.method === 'GET' ? h.get('range') : null,
  };
}

/** A file's validators: its ETag and, for current content, its modified time (Last-Modified). */
export interface Validators {
  etag: string;
  modifiedAt?: number;
}

/**
 * A GET or HEAD of a file under its conditional headers, in RFC 9110 13.2.2's order: If-Match (strong), else
 * If-Unmodified-Since, fails (412, named); If-None-Match (weak), else If-Modified-Since, answers 304; else the content.
 * An empty header counts as none.
 */
export function evaluateRead(c: ReadConditions, v: Validators): 'If-Match' | 'If-Unmodified-Since' | 'not-modified' | 'send' {
  if (c.ifMatch) {
    if (c.ifMatch.trim() !== '*' && !c.ifMatch.split(',').some((t) => t.trim() === v.etag)) return 'If-Match';
  } else if (c.ifUnmodifiedSince && v.modifiedAt !== undefined && modifiedSince(c.ifUnmodifiedSince, v.modifiedAt)) {
    return 'If-Unmodified-Since';
  }
  if (c.ifNoneMatch) return c.ifNoneMatch.trim() === '*' || noneMatchNames(c.ifNoneMatch, v.etag) ? 'not-modified' : 'send';
  if (c.ifModifiedSince && v.modifiedAt !== undefined) {
    const since = Date.parse(c.ifModifiedSince);
    if (Number.isFinite(since) && Math.floor(v.modifiedAt / 1000) <= Math.floor(since / 1000)) return 'not-modified';
  }
  return 'send';
}

/** The Range a read serves: none when If-Range voids it (no `etag` to match, or another one), as rangeStillApplies says. */
export function rangeUnder(c: ReadConditions, etag?: string): string | null {
  if (c.ifRange !== null && (!etag || !rangeStillApplies(c.ifRange, etag))) return null;
  return c.range;
}
