import type { Database, SQLQueryBindings } from 'bun:sqlite';

/**
 * Runs `action` and returns the plan (EXPLAIN QUERY PLAN, with the parameters it ran with) of every read on
 * the items table it ran through `sqlite.query`, its SQL with whitespace collapsed.
 */
export function itemsReadPlans(sqlite: Database, action: () => unknown): Array<{ sql: string; plan: string[] }> {
  const seen: Array<{ sql: string; params: SQLQueryBindings[] }> = [];
  const original = sqlite.query.bind(sqlite);
  (sqlite as { query: unknown }).query = (sql: string) => {
    const stmt = original(sql);
    if (!/\bitems\b/.test(sql) || !/^\s*(SELECT|WITH)/i.test(sql)) return stmt;
    return new Proxy(stmt, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop === 'all' || prop === 'get') {
          return (...params: SQLQueryBindings[]) => {
            seen.push({ sql, params });
            return (value as (...p: SQLQueryBindings[]) => unknown).apply(target, params);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
  try {
    action();
  } finally {
    (sqlite as { query: unknown }).query = original;
  }
  return seen.map(({ sql, params }) => ({
    sql: sql.replace(/\s+/g, ' '),
    plan: original<{ detail: string }, SQLQueryBindings[]>(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...params)
      .map((r) => r.detail),
  }));
}
