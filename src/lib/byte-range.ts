/**
 * A single `Range: bytes=…` request against an object of `size` bytes: the half-open range, null to
 * serve the whole object (no header, or one we ignore as RFC 9110 allows: malformed or multi-range),
 * or 'unsatisfiable' for a 416.
 */
export function parseRange(header: string | null, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header.trim());
  if (!m) return null;
  const [, first = '', last = ''] = m;
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    // Satisfiable (RFC 9110 14.1.1) but no 206 can state an empty range: the whole, empty, file.
    if (size === 0) return null;
    return { start: Math.max(0, size - suffix), end: size };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: last === '' ? size : Math.min(Number(last) + 1, size) };
}
