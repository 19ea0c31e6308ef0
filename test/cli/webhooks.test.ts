import { describe, expect, test } from 'bun:test';
import { parseJson, runCli } from '../helpers/cli.ts';
import { json } from '../helpers/client.ts';
import { eventually } from '../helpers/eventually.ts';
import * as seed from '../helpers/seed.ts';
import type { TestServer } from '../helpers/server.ts';
import { serverWithReceiver } from '../helpers/suite.ts';
import { verifyStandardWebhook, type startReceiver } from '../helpers/webhook-receiver.ts';

let t: TestServer;
let admin: seed.SeededLogin;
let receiver: ReturnType<typeof startReceiver>;

serverWithReceiver((s) => ({ t, admin, receiver } = s));

const cli = (args: string[]) => runCli([...args, '--data-dir', t.dataDir]);

describe('coffer webhooks, beside the running server', () => {
  test.each(['webhooks list', 'webhooks test', 'webhooks disable'])('coffer %s --help', async (command) => {
    const r = await runCli([...command.split(' '), '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: coffer ${command}`);
    expect(r.stdout).toContain('--data-dir');
    expect(r.stdout).toContain('Exit codes');
  });

  test('list shows instance and account hooks (--user for one account); test queues a signed event the server sends; disable stops the hook', async () => {
    const o = await seed.owner(t);
    const mine = await json(await o.client.post('/api/webhooks', { url: `${receiver.url}/o`, events: ['item.uploaded'] }));
    const instance = await json(await admin.client.post('/api/admin/webhooks', { url: `${receiver.url}/i`, events: ['backup.failed'] }));

    const all = parseJson(await cli(['webhooks', 'list', '--json'])).webhooks;
    expect(all.map((h: any) => [h.id, h.accountId])).toEqual([
      [instance.webhook.id, null],
      [mine.webhook.id, o.id],
    ]);
    expect(JSON.stringify(all)).not.toContain(mine.secret.slice(6));
    expect(parseJson(await cli(['webhooks', 'list', '--user', o.email, '--json'])).webhooks.map((h: any) => h.id)).toEqual([
      mine.webhook.id,
    ]);
    const human = await cli(['webhooks', 'list']);
    expect(human.stdout).toMatch(new RegExp(`${mine.webhook.id}\\s+${o.email}\\s+${receiver.url}/o\\s+item.uploaded\\s+yes`));
    expect(human.stdout).toMatch(new RegExp(`${instance.webhook.id}\\s+instance`));
    expect((await cli(['webhooks', 'list', '--user', 'nobody@example.test'])).code).toBe(1);

    const queued = await cli(['webhooks', 'test', mine.webhook.id]);
    expect(queued.code).toBe(0);
    expect(queued.stdout).toContain('queued the test delivery');
    const r = await eventually(() => receiver.received.find((x) => x.body.includes('"webhook.test"')) ?? false, { timeoutMs: 10_000 });
    expect(verifyStandardWebhook(mine.secret, r)).toBe(true);

    const disabled = await cli(['webhooks', 'disable', mine.webhook.id, '--json']);
    expect([disabled.code, disabled.stderr]).toEqual([0, '']);
    expect(parseJson(disabled).webhook.enabled).toBe(false);
    expect((await json(await o.client.get(`/api/webhooks/${mine.webhook.id}`))).webhook.enabled).toBe(false);
    const missing = await cli(['webhooks', 'disable', 'no-such-hook']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Webhook not found');
  });

  test('coffer keys rotate re-seals every webhook secret under the new key; deliveries still sign with the same secret', async () => {
    const o = await seed.owner(t);
    const { webhook, secret } = await json(await o.client.post('/api/webhooks', { url: `${receiver.url}/k`, events: ['item.moved'] }));
    const sealed = () =>
      t.server.ctx.db.$client.query<{ s: string }, [string]>('SELECT secret_sealed AS s FROM webhooks WHERE id = ?').get(webhook.id)!.s;
    const before = sealed();
    const rotated = await cli(['keys', 'rotate', '--json']);
    expect(rotated.code).toBe(0);
    const { keyId, remaining } = parseJson(rotated);
    expect(remaining).toBe(0);
    expect(before.startsWith(`k1.${keyId}.`)).toBe(false);
    expect(sealed().startsWith(`k1.${keyId}.`)).toBe(true);
    const mark = receiver.received.length;
    await o.client.post(`/api/webhooks/${webhook.id}/test`);
    const r = await eventually(() => receiver.received[mark] ?? false, { timeoutMs: 10_000 });
    expect(verifyStandardWebhook(secret, r)).toBe(true);
  });
});
