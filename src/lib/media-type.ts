// `type/subtype` and optional parameters, printable ASCII only (RFC 9110 8.3.1): a stored type becomes every download's Content-Type.
const MEDIA_TYPE = /^[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+(?:[ \t]*;[\x20-\x7e]*)?$/;
const MAX_MEDIA_TYPE = 255;
const UNKNOWN_TYPE = 'application/octet-stream';

/** Whether `type` is a media type a header can carry. */
export function isMediaType(type: string | null | undefined): type is string {
  return Boolean(type) && type!.length <= MAX_MEDIA_TYPE && MEDIA_TYPE.test(type!);
}

/**
 * The Content-Type a file's bytes go out with at every door: its stored type, or application/octet-stream for none
 * or one no header can carry (stored before client-sent types were checked; migration 0043 repairs those rows).
 */
export function servedType(stored: string | null | undefined): string {
  return isMediaType(stored) ? stored : UNKNOWN_TYPE;
}
