const STRICT = new TextDecoder('utf-8', { fatal: true });

/** The bytes as UTF-8 text, or null when they are not valid UTF-8: never a U+FFFD quietly in place of a byte. */
export function strictUtf8(bytes: Uint8Array): string | null {
  try {
    return STRICT.decode(bytes);
  } catch {
    return null;
  }
}
