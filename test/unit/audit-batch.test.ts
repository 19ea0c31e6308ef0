import { afterAll, describe, expect, test } from 'bun:test';
import type { Database } from 'bun:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { AuditRepo } from '../../src/db/repos/audit.ts';
import { auditRow } from '../helpers/audit-rows.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('coffer-audit-batch-');
const db = openDatabase(path.join(dir, 'coffer.db'));
migrate(db);
afterAll(() => {
  closeDatabase(db);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The connection with every statement run through it counted by its SQL's first word. */
function counting(sqlite: Database): { sqlite: Database; runs: Map<string, number> } {
  const runs = new Map<string, number>();
  const proxy = new Proxy(sqlite, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== 'query') return typeof value === 'function' ? value.bind(target) : value;
      return (sql: string) => {
        const stmt = target.query(sql);
        const verb = sql.trim().split(/\s+/)[0]!.toUpperCase();
        return new Proxy(stmt, {
          get(s, p) {
            const v = Reflect.get(s, p, s);
            if (typeof v !== 'function') return v;
            if (p !== 'run' && p !== 'get' && p !== 'all') return v.bind(s);
            return (...args: unknown[]) => {
              runs.set(verb, (runs.get(verb) ?? 0) + 1);
              return v.apply(s, args);
            };
          },
        });
      };
    },
  });
  return { sqlite: proxy, runs };
}

describe('the audit batch', () => {
  test('moves a batch into the log with one DELETE, leaving parked and later events queued', () => {
    const sqlite = db.$client;
    const repo = new AuditRepo(sqlite);
    for (let i = 0; i < 30; i++) repo.enqueue(i === 7 ? 'bad' : `e${i}`, i);
    const { sqlite: counted, runs } = counting(sqlite);
    const out = new AuditRepo(counted).moveBatch(20, (event) => {
      if (event === 'bad') throw new Error('cannot parse');
      return auditRow(event);
    });
    expect(out).toMatchObject({ written: 19, parked: 1 });
    expect(runs.get('DELETE')).toBe(1);
    expect(runs.get('INSERT')).toBe(19);
    const left = sqlite.query<{ event: string; status: string }, []>('SELECT event, status FROM audit_queue ORDER BY seq').all();
    expect(left).toEqual([
      { event: 'bad', status: 'failed' },
      ...Array.from({ length: 10 }, (_, i) => ({ event: `e${i + 20}`, status: 'pending' })),
    ]);
    expect(sqlite.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM audit_log').get()!.n).toBe(19);

    const rest = repo.moveBatch(20, auditRow);
    expect(rest).toMatchObject({ written: 10, parked: 0 });
    expect(sqlite.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM audit_queue WHERE status = 'pending'`).get()!.n).toBe(0);
  });
});

describe('the audit pump', () => {
  test('with nothing queued takes no write lock: it neither waits for nor fails on another thread holding one', () => {
    const repo = new AuditRepo(db.$client);
    // Another connection (the index writer's, in the server) holds the write lock; this one would wait 100 ms, then fail.
    const writer = openDatabase(path.join(dir, 'coffer.db'));
    writer.$client.run('BEGIN IMMEDIATE');
    db.$client.run('PRAGMA busy_timeout = 100');
    try {
      expect(repo.moveBatch(20, auditRow)).toEqual({ taken: [], written: 0, parked: 0 });
    } finally {
      db.$client.run('PRAGMA busy_timeout = 5000');
      writer.$client.run('ROLLBACK');
      closeDatabase(writer);
    }
    repo.enqueue('e', 1);
    expect(repo.moveBatch(20, auditRow)).toMatchObject({ written: 1 });
  });
});
