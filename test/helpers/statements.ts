import type { TestServer } from './server.ts';

const RUNS = new Set<PropertyKey>(['get', 'all', 'run', 'values', 'iterate']);

/**
 * Whether a transaction was open at each run, in the server's process while `fn` runs, of a statement whose SQL
 * holds `fragment` (and, given `firstArg`, whose first parameter is it).
 */
export async function transactionAtRuns(t: TestServer, fragment: string, fn: () => Promise<void>, firstArg?: unknown): Promise<boolean[]> {
  const sqlite = t.server.ctx.db.$client;
  const seen: boolean[] = [];
  const query = sqlite.query;
  sqlite.query = ((sql: string) => {
    const statement = query.call(sqlite, sql);
    if (!sql.includes(fragment)) return statement;
    return new Proxy(statement, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        if (!RUNS.has(prop)) return value.bind(target);
        return (...args: unknown[]) => {
          if (firstArg === undefined || args[0] === firstArg) seen.push(sqlite.inTransaction);
          return value.apply(target, args);
        };
      },
    });
  }) as typeof sqlite.query;
  try {
    await fn();
  } finally {
    sqlite.query = query;
  }
  return seen;
}
