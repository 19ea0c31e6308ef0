import { badRequest, Messages } from '../errors.ts';

/** Opaque keyset cursor: base64url of the last row's sort key values. */
export function encodeCursor(values: ReadonlyArray<string | number | null>): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

/** Decodes a cursor whose values must have the given types (`null` allowed where listed); else 400 `Invalid cursor`. */
export function decodeCursor(cursor: string, types: ReadonlyArray<'string' | 'number' | 'number|null'>): Array<string | number | null> {
  try {
    if (cursor.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('shape');
    const values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (!Array.isArray(values) || values.length !== types.length) throw new Error('length');
    values.forEach((v, i) => {
      const t = types[i]!;
      const ok = t === 'number|null' ? v === null || Number.isFinite(v) : t === 'number' ? Number.isFinite(v) : typeof v === 'string';
      if (!ok) throw new Error('type');
    });
    return values as Array<string | number | null>;
  } catch {
    throw badRequest(Messages.invalidCursor);
  }
}
