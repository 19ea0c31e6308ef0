import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { eventually } from '../../helpers/eventually.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import { json } from '../../helpers/client.ts';
import { folder, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer } from '../../helpers/server.ts';
import { transactionAtRuns } from '../../helpers/statements.ts';

describe('the dispatcher with no hook enabled (docs/performance.md, the thirteenth pass: single)', () => {
  test('passes the change log unread, and a hook made after reads only what follows it', async () => {
    const s = await startTestServer({ startWorker: false, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
    try {
      const a = await seed.admin(s);
      const { webhooks } = s.server.ctx.services;
      for (let i = 0; i < 5; i++) await upload(a.client, `f${i}.txt`, `file ${i}`);
      let read = -1;
      const pages = await transactionAtRuns(s, 'FROM changes WHERE seq > ?', async () => {
        read = webhooks.dispatch();
      });
      // Without the idle path: the five uploads' rows (and the admin's) read and matched against no hook.
      expect(pages).toEqual([]);
      expect(read).toBe(0);
      expect(webhooks.dispatch()).toBe(0);
      const created = await a.client.post('/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['item.created'] });
      expect(created.status).toBe(201);
      await json(created);
      await folder(a.client, 'after the hook');
      expect(webhooks.dispatch()).toBe(1);
      expect(webhooks.dispatch()).toBe(0);
    } finally {
      await s.stop();
    }
  });
});

describe('the dispatcher failing at every round (a full disk refusing its cursor)', () => {
  test('says so once, then at most every five minutes with how many failed, and says when it works again', async () => {
    const clock = new ManualClock();
    const log = memoryLogger();
    const s = await startTestServer({ clock, logger: log });
    try {
      const { webhooks } = s.server.ctx.services;
      const dispatch = webhooks.dispatch.bind(webhooks);
      // Refused as a full disk refuses the cursor's write (whether a real one does depends on the room left in the log file).
      let full = true;
      let rounds = 0;
      webhooks.dispatch = () => {
        rounds++;
        if (full) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
        return dispatch();
      };
      const failedLines = () => log.lines.filter((l) => l.msg === 'webhook dispatch failed');
      try {
        await eventually(() => expect(failedLines()).toHaveLength(1));
        const seen = rounds;
        await eventually(() => expect(rounds).toBeGreaterThan(seen + 3));
        expect(failedLines()).toHaveLength(1);
        clock.advance(5 * 60_000);
        await eventually(() => expect(failedLines()).toHaveLength(2));
        expect(failedLines()[1]!.fields.failures).toBeGreaterThanOrEqual(4);
        full = false;
        await eventually(() => expect(log.lines.filter((l) => l.msg === 'the webhook dispatcher works again')).toHaveLength(1));
      } finally {
        webhooks.dispatch = dispatch;
      }
    } finally {
      await s.stop();
    }
  }, 60_000);
});
