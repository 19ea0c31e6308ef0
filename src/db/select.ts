import { getTableColumns } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';

/**
 * The select list of a raw prepared statement: `"db_name" AS "key", …` built from the drizzle schema, so
 * the rows come back keyed like `$inferSelect` and a renamed column changes the statement with it.
 */
export function selectList<T extends SQLiteTable>(table: T, keys: ReadonlyArray<keyof T['$inferSelect'] & string>, prefix = ''): string {
  const columns = getTableColumns(table) as Record<string, { name: string }>;
  return keys.map((key) => `${prefix}"${columns[key]!.name}" AS "${key}"`).join(', ');
}

/** SQLite has no boolean: a raw statement returns 0 or 1 where drizzle's row type says boolean. */
export function toBoolean(value: unknown): boolean {
  return value === 1 || value === true;
}

/** Rows a drizzle `run()` changed: bun:sqlite reports them, drizzle's type for this driver says void. */
export function changesOf(result: unknown): number {
  return (result as { changes: number }).changes;
}

/** Runs a bounded DELETE until a round removes fewer than `batch` rows, so no one transaction holds the lock long. */
export function deleteInBatches(batch: number, round: (limit: number) => number): number {
  let total = 0;
  for (;;) {
    const n = round(batch);
    total += n;
    if (n < batch) return total;
  }
}
