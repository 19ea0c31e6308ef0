import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { AuditActions } from '../../../src/services/admin/audit.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
});
afterAll(() => t.stop());

const sqlite = () => t.server.ctx.db.$client;
const audit = () => t.server.ctx.services.audit;

/** Details whose JSON has every kind of character and number the per-event path wrote (docs/performance.md, the twelfth pass). */
const TRICKY: Array<Record<string, unknown>> = [
  { name: 'naïve "quoted" \\ path/with\nnewline\ttab 😀 中文', size: 4096, mimeType: 'text/plain' },
  { big: 1e21, tiny: 5e-324, negZero: -0, fraction: 0.1 + 0.2, max: Number.MAX_SAFE_INTEGER + 2, nan: Number.NaN },
  { nested: { a: [1, 'two', { b: null, c: true }], empty: {}, list: [] }, when: new Date(0) },
  { control: 'bell \u0007 and nul \u0000', lone: 'half \ud800 pair' },
  {},
];

/** The log rows of `targetId`'s events, in the order they were written. */
const logged = (targetId: string) =>
  sqlite()
    .query<{ action: string; status: string; actor: string; details: string | null; request_id: string | null }, [string]>(
      'SELECT action, status, actor, details, request_id FROM audit_log WHERE target_id = ? ORDER BY id',
    )
    .all(targetId);

/** INSERT statements into the log run while `fn` does. */
function inserts(fn: () => void): number {
  const db = sqlite();
  const query = db.query;
  let runs = 0;
  db.query = ((sql: string) => {
    const statement = query.call(db, sql);
    if (!sql.trimStart().startsWith('INSERT INTO audit_log')) return statement;
    return new Proxy(statement, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        if (prop !== 'run') return value.bind(target);
        return (...args: unknown[]) => {
          runs++;
          return value.apply(target, args);
        };
      },
    });
  }) as typeof db.query;
  try {
    fn();
  } finally {
    db.query = query;
  }
  return runs;
}

describe('the audit batch copies plain events in one statement', () => {
  test('a batch of events as recorded is written with one INSERT, each row and its details byte for byte what the per-event path wrote', () => {
    audit().flush();
    const target = 'copy-target';
    for (let i = 0; i < 20; i++)
      audit().record({
        action: AuditActions.fileUpload,
        targetType: 'file',
        targetId: target,
        details: TRICKY[i % TRICKY.length],
        requestId: `r${i}`,
      });
    audit().record({ action: AuditActions.fileTrash, status: 'denied', actor: 'cli', targetId: target });
    // One statement per run of plain events (5), and one per event whose JSON has a \u escape (a control character, a
    // lone surrogate: 4), which goes through the per-event path; 21 before, one per event.
    expect(inserts(() => audit().flush())).toBe(5 + 4);
    const rows = logged(target);
    expect(rows).toHaveLength(21);
    rows.slice(0, 20).forEach((row, i) => {
      expect(row).toEqual({
        action: 'file.upload',
        status: 'success',
        actor: 'anonymous',
        details: JSON.stringify(JSON.parse(JSON.stringify({ ...TRICKY[i % TRICKY.length] }))),
        request_id: `r${i}`,
      });
    });
    expect(rows[20]).toEqual({ action: 'file.trash', status: 'denied', actor: 'cli', details: null, request_id: null });
  });

  test('events queued by an older version (details as an object) move through the per-event path, in queue order among plain ones', () => {
    audit().flush();
    const target = 'older-target';
    const old = (n: number) =>
      sqlite()
        .query('INSERT INTO audit_queue (event, queued_at) VALUES (?, ?)')
        .run(
          JSON.stringify({
            at: n,
            action: 'file.move',
            status: 'success',
            actor: 'login',
            targetId: target,
            details: { n, name: 'é "x"' },
          }),
          n,
        );
    old(1);
    audit().record({ action: AuditActions.fileRename, targetId: target, details: { n: 2 } });
    audit().record({ action: AuditActions.fileRename, targetId: target, details: { n: 3 } });
    old(4);
    // A row that cannot be one is parked, as before.
    sqlite().query('INSERT INTO audit_queue (event, queued_at) VALUES (\'{"action": 5}\', 5)').run();
    audit().record({ action: AuditActions.fileRename, targetId: target, details: { n: 6 } });
    expect(inserts(() => audit().flush())).toBe(4);
    expect(logged(target).map((r) => [r.action, r.details])).toEqual([
      ['file.move', '{"n":1,"name":"é \\"x\\""}'],
      ['file.rename', '{"n":2}'],
      ['file.rename', '{"n":3}'],
      ['file.move', '{"n":4,"name":"é \\"x\\""}'],
      ['file.rename', '{"n":6}'],
    ]);
    expect(sqlite().query("SELECT event, status FROM audit_queue WHERE status = 'failed'").all()).toEqual([
      { event: '{"action": 5}', status: 'failed' },
    ]);
  });
});
