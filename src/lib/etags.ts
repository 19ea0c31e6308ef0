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
export function rangeStillApplies(ifRange: string | null, etag: string): boolean {
  return ifRange === null || ifRange.trim() === etag;
}
