import { afterAll, describe, expect, test } from 'bun:test';
import dns from 'node:dns/promises';
import fs from 'node:fs';
import path from 'node:path';
import { ManualClock } from '../../../src/clock.ts';
import { PENDING_DELIVERIES_MAX } from '../../../src/contract/webhooks.ts';
import { json } from '../../helpers/client.ts';
import { folder } from '../../helpers/files.ts';
import { eventually } from '../../helpers/eventually.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, tempDir, type TestServer } from '../../helpers/server.ts';
import { startReceiver, verifyStandardWebhook } from '../../helpers/webhook-receiver.ts';

const HOUR = 3600_000;
const cleanup: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function setup(env: Record<string, string> = {}) {
  const receiver = startReceiver();
  const clock = new ManualClock();
  const t = await startTestServer({ clock, startWorker: false, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', ...env } });
  cleanup.push(
    () => receiver.stop(),
    () => t.stop(),
  );
  const admin = await seed.admin(t);
  return { receiver, clock, t, admin };
}

async function hook(t: TestServer, client: seed.SeededLogin['client'], url: string, events = ['account.signed_in']) {
  const res = await client.post('/api/webhooks', { url, events });
  expect(res.status).toBe(201);
  return (await json(res)) as { webhook: { id: string }; secret: string };
}

const deliveries = async (client: seed.SeededLogin['client'], id: string) =>
  (await json(await client.get(`/api/webhooks/${id}/deliveries`))).deliveries as any[];

describe('retries', () => {
  test('a failed delivery is retried after a restart with the same webhook-id: none lost, none duplicated', async () => {
    const { receiver, clock, t, admin } = await setup();
    receiver.answer(() => ({ status: 503, body: 'busy' }));
    const { webhook, secret } = await hook(t, admin.client, `${receiver.url}/in`, ['item.created']);
    await admin.client.post(`/api/webhooks/${webhook.id}/test`);
    await t.server.worker.drain();
    let [d] = await deliveries(admin.client, webhook.id);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, responseStatus: 503, response: 'busy', error: 'answered 503' });
    expect(Date.parse(d.nextAttemptAt) - clock.now()).toBe(30_000);
    expect(receiver.received).toHaveLength(1);

    await t.restart();
    receiver.answer(() => ({ status: 204 }));
    // Not due yet: nothing is sent.
    await t.server.worker.drain();
    expect(receiver.received).toHaveLength(1);
    clock.advance(30_000);
    await t.server.worker.drain();
    await t.server.worker.drain();
    const client = await seed.login(t, admin.email);
    [d] = await deliveries(client, webhook.id);
    expect(d).toMatchObject({ status: 'succeeded', attempts: 2, responseStatus: 204, error: null, nextAttemptAt: null });
    // The sign-in just now is a new message of its own; the test message came twice, under one id.
    const test = receiver.received.filter((r) => JSON.parse(r.body).type === 'webhook.test');
    expect(test).toHaveLength(2);
    expect(new Set(test.map((r) => r.headers['webhook-id']))).toEqual(new Set([d.messageId]));
    expect(test.every((r) => verifyStandardWebhook(secret, r))).toBe(true);
    await t.server.worker.drain();
    expect(receiver.received.filter((r) => JSON.parse(r.body).type === 'webhook.test')).toHaveLength(2);
  });

  test('the backoff doubles from 30 s; a hook failing for 24 hours is disabled and its owner notified', async () => {
    const { receiver, clock, t, admin } = await setup();
    receiver.answer(() => ({ status: 500 }));
    const { webhook } = await hook(t, admin.client, `${receiver.url}/down`);
    await admin.client.post(`/api/webhooks/${webhook.id}/test`);
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      await t.server.worker.drain();
      const [d] = await deliveries(admin.client, webhook.id);
      const wait = Date.parse(d.nextAttemptAt) - clock.now();
      waits.push(wait);
      clock.advance(wait);
    }
    expect(waits).toEqual([30_000, 60_000, 120_000, 240_000]);
    const hookNow = (await json(await admin.client.get(`/api/webhooks/${webhook.id}`))).webhook;
    expect(hookNow.enabled).toBe(true);
    expect(hookNow.failingSince).not.toBeNull();

    clock.advance(25 * HOUR);
    await t.server.worker.drain();
    const after = (await json(await admin.client.get(`/api/webhooks/${webhook.id}`))).webhook;
    expect(after).toMatchObject({ enabled: false, disabledReason: 'Disabled after failing for 24 hours' });
    const [d] = await deliveries(admin.client, webhook.id);
    expect(d.status).toBe('failed');
    const notes = (await json(await admin.client.get('/api/notifications'))).notifications;
    expect(notes[0]).toMatchObject({
      type: 'webhook.disabled',
      text: `Webhook to ${receiver.url}/down was disabled: it failed for 24 hours.`,
    });
    // Nothing more is sent to a disabled hook; enabling it again starts afresh.
    const count = receiver.received.length;
    await seed.login(t, admin.email);
    await t.server.worker.drain();
    expect(receiver.received).toHaveLength(count);
    const enabled = (await json(await admin.client.send('PATCH', `/api/webhooks/${webhook.id}`, { enabled: true }))).webhook;
    expect(enabled).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
  });

  test('a delivery whose retries would pass 24 hours fails for good; a success in between clears the failing mark', async () => {
    const { receiver, clock, t, admin } = await setup();
    receiver.answer(() => ({ status: 500 }));
    const { webhook } = await hook(t, admin.client, `${receiver.url}/flaky`);
    await admin.client.post(`/api/webhooks/${webhook.id}/test`);
    // Read through the service: a day of the manual clock outlives the session.
    const scope = { accountId: admin.id };
    const log = () => t.server.ctx.services.webhooks.deliveries(scope, webhook.id).deliveries;
    const hookNow = () => t.server.ctx.services.webhooks.get(scope, webhook.id).webhook;
    let failed = false;
    for (let i = 0; i < 40 && !failed; i++) {
      await t.server.worker.drain();
      const d = log().at(-1)!;
      failed = d.status === 'failed';
      // A success of another message keeps the hook from being disabled.
      if (i % 5 === 4) {
        receiver.answer(() => ({ status: 200 }));
        t.server.ctx.services.webhooks.sendTest(scope, webhook.id);
        await t.server.worker.drain();
        receiver.answer(() => ({ status: 500 }));
        expect(hookNow().failingSince).toBeNull();
      }
      if (!failed) clock.advance(Date.parse(d.nextAttemptAt!) - clock.now());
    }
    const first = log().at(-1)!;
    expect(first.status).toBe('failed');
    expect(first.attempts).toBeGreaterThan(10);
    expect(Date.parse(first.attemptedAt!) - Date.parse(first.createdAt)).toBeLessThanOrEqual(24 * HOUR);
    expect(hookNow().enabled).toBe(true);
  });

  test('a burst of more changes than the log lists (150 files in one bulk upload) is delivered whole; only finished deliveries leave the log', async () => {
    const { receiver, t, admin } = await setup();
    const { webhook, secret } = await hook(t, admin.client, `${receiver.url}/burst`, ['item.uploaded']);
    const form = new FormData();
    for (let i = 0; i < 150; i++) form.append('file', new File([`${i}`], `f${i}.txt`));
    expect((await admin.client.request('/api/files/upload/bulk', { method: 'POST', body: form })).status).toBe(200);
    const kept = () =>
      t.server.ctx.db.$client
        .query<{ n: number }, [string]>('SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ?')
        .get(webhook.id)!.n;
    // The dispatcher reads every row; no worker runs yet, so all 150 deliveries wait.
    while (t.server.ctx.services.webhooks.dispatch() > 0);
    expect(kept()).toBe(150);
    await t.server.worker.drain();
    const names = receiver.received.filter((r) => verifyStandardWebhook(secret, r)).map((r) => JSON.parse(r.body).data.after.name);
    expect(new Set(names).size).toBe(150);
    expect(await deliveries(admin.client, webhook.id)).toHaveLength(100);
    // Done, they are trimmed to the newest 100 as the next one is queued.
    await admin.client.post(`/api/webhooks/${webhook.id}/test`);
    expect(kept()).toBe(100);
  });

  test('a receiver that does not answer in WEBHOOK_TIMEOUT_MS is a timed-out attempt', async () => {
    const { receiver, t, admin } = await setup({ WEBHOOK_TIMEOUT_MS: '300' });
    receiver.answer(() => 'hang');
    const { webhook } = await hook(t, admin.client, `${receiver.url}/slow`);
    await admin.client.post(`/api/webhooks/${webhook.id}/test`);
    await t.server.worker.drain();
    const [d] = await deliveries(admin.client, webhook.id);
    expect(d).toMatchObject({ status: 'pending', error: 'timed out after 0.3 s', responseStatus: null });
    expect(d.durationMs).toBeGreaterThanOrEqual(290);
    expect(d.durationMs).toBeLessThan(5000);
  });

  test('a host whose DNS lookup never answers is a failed attempt after WEBHOOK_TIMEOUT_MS, saying so; the delivery is retried', async () => {
    const { t, admin } = await setup({ WEBHOOK_TIMEOUT_MS: '300' });
    const lookup = dns.lookup;
    // A resolver that never answers (a dead DNS server behind a long timeout).
    dns.lookup = (() => new Promise(() => {})) as unknown as typeof dns.lookup;
    const { webhook } = await hook(t, admin.client, 'http://hooks.silent.example/in');
    try {
      await admin.client.post(`/api/webhooks/${webhook.id}/test`);
      const drained = await Promise.race([t.server.worker.drain().then(() => true), Bun.sleep(10_000).then(() => false)]);
      expect(drained).toBe(true);
    } finally {
      dns.lookup = lookup;
    }
    const [d] = await deliveries(admin.client, webhook.id);
    expect(d).toMatchObject({
      status: 'pending',
      attempts: 1,
      responseStatus: null,
      error: 'could not resolve hooks.silent.example: no answer from DNS within 0.3 s',
    });
    expect(d.durationMs).toBeGreaterThanOrEqual(290);
    expect(d.durationMs).toBeLessThan(5000);
  });

  test(`a hook holds at most ${PENDING_DELIVERIES_MAX.toLocaleString('en')} deliveries waiting: a new one is failed at once with the reason, Redeliver is 429; they go again once the backlog drains`, async () => {
    const { receiver, t, admin } = await setup();
    const { webhook } = await hook(t, admin.client, `${receiver.url}/in`, ['item.created']);
    // The backlog of a receiver down for hours on a busy instance, written as the dispatcher writes it.
    const sqlite = t.server.ctx.db.$client;
    const insert = sqlite.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, message_id, type, body, created_at) VALUES (?, ?, ?, 'item.created', '{}', ?)`,
    );
    sqlite.transaction(() => {
      for (let i = 0; i < PENDING_DELIVERIES_MAX; i++) insert.run(`backlog-${i}`, webhook.id, `msg_backlog_${i}`, Date.now());
    })();
    const jobsBefore = sqlite.query('SELECT count(*) AS n FROM jobs').get() as { n: number };
    await folder(admin.client, 'One too many');
    while (t.server.ctx.services.webhooks.dispatch() > 0);
    const [refused] = await deliveries(admin.client, webhook.id);
    expect(refused).toMatchObject({
      status: 'failed',
      attempts: 0,
      error: expect.stringContaining('10,000 earlier deliveries of this webhook are still waiting'),
    });
    // No job was queued for it.
    expect((sqlite.query('SELECT count(*) AS n FROM jobs').get() as { n: number }).n).toBe(jobsBefore.n);
    const again = await admin.client.post(`/api/webhooks/${webhook.id}/deliveries/${refused.id}/redeliver`);
    expect(again.status).toBe(429);
    expect((await json(again)).message).toContain('redeliver once they have gone');
    // The backlog sent (here: dropped), the refused one goes again.
    sqlite.query(`UPDATE webhook_deliveries SET status = 'succeeded' WHERE id LIKE 'backlog-%'`).run();
    expect((await admin.client.post(`/api/webhooks/${webhook.id}/deliveries/${refused.id}/redeliver`)).status).toBe(202);
    await t.server.worker.drain();
    expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(['item.created']);
  });

  test('deliveries waiting on a receiver that never answers hold up no other job: a copy finishes meanwhile', async () => {
    const { receiver, t, admin } = await setup({ WEBHOOK_TIMEOUT_MS: '60000' });
    receiver.answer(() => 'hang');
    const { webhook } = await hook(t, admin.client, `${receiver.url}/tarpit`);
    for (let i = 0; i < 8; i++) expect((await admin.client.post(`/api/webhooks/${webhook.id}/test`)).status).toBe(202);
    t.server.worker.start();
    // Deliveries run in 4 slots of their own: 4 requests held open, and the worker's 2 shared slots stay free.
    await eventually(() => receiver.received.length === 4);
    const box = await folder(admin.client, 'Box');
    const { jobId } = await json(await admin.client.post('/api/files/copy', { ids: [box.id] }));
    await eventually(async () => (await admin.client.get(`/api/files/jobs/${jobId}`)).status === 200);
    expect((await deliveries(admin.client, webhook.id)).every((d) => d.status === 'pending' && d.attempts === 0)).toBe(true);
    expect(receiver.received).toHaveLength(4);
    // The receiver gone, the requests held open fail at once and the server stops without waiting for them.
    receiver.stop();
  });

  test('backup.failed goes to the instance hooks', async () => {
    const root = tempDir('coffer-webhook-backup-');
    cleanup.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const passFile = path.join(root, 'passphrase');
    fs.writeFileSync(passFile, 'a long household passphrase\n', { mode: 0o600 });
    const dir = path.join(root, 'archives');
    const { receiver, t, admin } = await setup({ BACKUP_DIR: dir, BACKUP_PASSPHRASE_FILE: passFile });
    const res = await admin.client.post('/api/admin/webhooks', { url: `${receiver.url}/ops`, events: ['backup.failed'] });
    const { webhook } = await json(res);
    fs.writeFileSync(dir, 'a file where the directory should be');
    await admin.client.post('/api/user/backups/run', {});
    await t.server.worker.drain();
    await t.server.worker.drain();
    const [d] = (await json(await admin.client.get(`/api/admin/webhooks/${webhook.id}/deliveries`))).deliveries;
    expect(d).toMatchObject({ type: 'backup.failed', status: 'succeeded' });
    const body = JSON.parse(receiver.received.at(-1)!.body);
    expect(body).toMatchObject({ type: 'backup.failed', data: { run: { trigger: 'manual' }, error: expect.stringContaining('EEXIST') } });
  });
});
