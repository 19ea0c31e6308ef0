import { describe, expect, test } from 'bun:test';
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
