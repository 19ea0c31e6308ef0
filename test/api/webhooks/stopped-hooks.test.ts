import { afterAll, describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { json } from '../../helpers/client.ts';
import { folder, upload } from '../../helpers/files.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer } from '../../helpers/server.ts';
import { startReceiver } from '../../helpers/webhook-receiver.ts';

const DAY = 24 * 3600_000;
const receiver = startReceiver();
const clock = new ManualClock();
const logger = memoryLogger();
const t = await startTestServer({
  clock,
  startWorker: false,
  logger,
  env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_TIMEOUT_MS: '500' },
});
let admin = await seed.admin(t);
afterAll(async () => {
  await t.stop();
  receiver.stop();
});

const deliveries = async (client: seed.SeededLogin['client'], id: string) =>
  (await json(await client.get(`/api/webhooks/${id}/deliveries`))).deliveries as any[];
const setDisabled = async (id: string, disabled: boolean) =>
  expect((await admin.client.send('PATCH', `/api/user/${id}`, { disabled })).status).toBe(200);
const sendAll = async () => {
  t.server.ctx.services.webhooks.dispatch();
  await t.server.worker.drain();
};
const sentFor = (accountId: string) =>
  receiver.received.map((r) => JSON.parse(r.body)).filter((b) => b.data?.accountId === accountId && b.type !== 'account.signed_in');

describe("a disabled account's webhooks", () => {
  test('are called no more: a retry queued before is failed, changes made meanwhile (the trash purged) are not sent; enabled again, new changes are', async () => {
    const o = await seed.owner(t);
    const res = await o.client.post('/api/webhooks', { url: `${receiver.url}/o`, events: ['item.created', 'item.purged'] });
    expect(res.status).toBe(201);
    const { webhook } = await json(res);
    const file = await upload(o.client, 'private-name.txt', 'x');
    expect((await o.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
    receiver.answer(() => ({ status: 503, body: 'busy' }));
    await folder(o.client, 'Before');
    await sendAll();
    expect(sentFor(o.id).map((b) => b.type)).toEqual(['item.created']);
    expect((await deliveries(o.client, webhook.id))[0]).toMatchObject({ status: 'pending', attempts: 1 });
    receiver.answer(() => ({ status: 200, body: 'ok' }));

    await setDisabled(o.id, true);
    clock.advance(31 * DAY);
    expect(t.server.ctx.services.trash.purgeExpired(30)).toBe(1);
    await sendAll();
    await sendAll();
    // Neither the retry nor the purge reached the receiver.
    expect(sentFor(o.id).map((b) => b.type)).toEqual(['item.created']);

    // Sessions last 7 days.
    admin = { ...admin, client: await seed.login(t, admin.email) };
    await setDisabled(o.id, false);
    const client = await seed.login(t, o.email);
    const [retried] = await deliveries(client, webhook.id);
    expect(retried).toMatchObject({ status: 'failed', error: 'the account is disabled' });
    await folder(client, 'After');
    await sendAll();
    expect(sentFor(o.id).map((b) => [b.type, b.data.after.name])).toEqual([
      ['item.created', 'Before'],
      ['item.created', 'After'],
    ]);
  });
});

describe('a hook deleted while a delivery to it is under way', () => {
  test('the attempt that then fails ends the delivery quietly: no failed job, nothing retried', async () => {
    const o = await seed.owner(t);
    const res = await o.client.post('/api/webhooks', { url: `${receiver.url}/slow`, events: ['item.created'] });
    const { webhook } = await json(res);
    receiver.answer(() => 'hang');
    try {
      const mark = receiver.received.length;
      expect((await o.client.post(`/api/webhooks/${webhook.id}/test`)).status).toBe(202);
      const sending = t.server.worker.drain();
      while (receiver.received.length === mark) await Bun.sleep(5);
      expect((await o.client.delete(`/api/webhooks/${webhook.id}`)).status).toBe(200);
      await sending;
      clock.advance(60 * 60_000);
      await t.server.worker.drain();
      expect(receiver.received.length).toBe(mark + 1);
      expect(logger.lines.filter((l) => /job failed/.test(l.msg))).toEqual([]);
    } finally {
      receiver.answer(() => ({ status: 200, body: 'ok' }));
    }
  });
});
