type CursorValue = string | number | null;
export type CursorField = 'string' | 'number' | 'number|null';

/** Opaque keyset cursor: base64url of the last row's sort key values. */
export function encodeCursor(values: readonly CursorValue[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

/** The values of a cursor when each has the given type (`null` allowed where listed), else null. */
export function decodeCursor(cursor: string, types: readonly CursorField[]): CursorValue[] | null {
  if (cursor.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(values) || values.length !== types.length) return null;
  const ok = values.every((v, i) => {
    const t = types[i];
    return t === 'number|null' ? v === null || Number.isFinite(v) : t === 'number' ? Number.isFinite(v) : typeof v === 'string';
  });
  return ok ? (values as CursorValue[]) : null;
}
