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
function servedType(stored: string | null | undefined): string {
  return isMediaType(stored) ? stored : UNKNOWN_TYPE;
}

// Types a page loads as code or style (WHATWG's JavaScript MIME types, CSS, JSON and its `+json` kin, WebAssembly).
const ACTIVE_TYPE =
  /^(?:(?:application|text)\/(?:x-)?(?:javascript|ecmascript)|text\/(?:javascript1\.[0-5]|jscript|livescript)|text\/css|(?:application|text)\/json|application\/[\w.+-]*\+json|application\/wasm)$/i;

/**
 * The Content-Type of a file's bytes as a response: servedType, except that a type a page would load as a script, a
 * stylesheet, a JSON module or WebAssembly goes out as text/plain, which with `nosniff` no page runs or applies (as
 * Nextcloud and Seafile serve them). The bytes are unchanged; listings (PROPFIND, the API) keep the stored type.
 */
export function inertType(stored: string | null | undefined): string {
  const type = servedType(stored);
  return ACTIVE_TYPE.test(type.split(';')[0]!.trim()) ? 'text/plain' : type;
}
