import { beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { folder } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithReceiver } from '../../helpers/suite.ts';
import { verifyStandardWebhook, startReceiver } from '../../helpers/webhook-receiver.ts';

let t: TestServer;
let receiver: ReturnType<typeof startReceiver>;
let admin: seed.SeededLogin;
let owner: seed.SeededLogin;

serverWithReceiver((s) => ({ t, admin, receiver } = s));
beforeAll(async () => {
  owner = await seed.owner(t);
});

async function createHook(client = owner.client, body: Record<string, unknown> = {}, base = '/api/webhooks') {
  const res = await client.post(base, { url: `${receiver.url}/hook`, events: ['account.signed_in'], ...body });
  expect(res.status).toBe(201);
  return (await json(res)) as { webhook: any; secret: string };
}

const deliveries = async (id: string, client = owner.client, base = '/api/webhooks') =>
  (await json(await client.get(`${base}/${id}/deliveries`))).deliveries as any[];

describe('webhooks: create, secret, deliveries', () => {
  test('the secret is shown once, sealed under the instance key, and signs every delivery (checked by an independent verifier)', async () => {
    const { webhook, secret } = await createHook();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhook).toMatchObject({ url: `${receiver.url}/hook`, events: ['account.signed_in'], folderId: null, enabled: true });
    const listed = await json(await owner.client.get('/api/webhooks'));
    expect(JSON.stringify(listed)).not.toContain(secret.slice(6));
    expect(JSON.stringify(await json(await owner.client.get(`/api/webhooks/${webhook.id}`)))).not.toContain(secret.slice(6));
    const stored = t.server.ctx.db.$client
      .query<{ s: string }, [string]>('SELECT secret_sealed AS s FROM webhooks WHERE id = ?')
      .get(webhook.id)!.s;
    expect(stored.startsWith('k1.')).toBe(true);
    expect(stored).not.toContain(secret.slice(6, 20));

    const before = receiver.received.length;
    const res = await owner.client.post(`/api/webhooks/${webhook.id}/test`);
    expect(res.status).toBe(202);
    const { delivery } = await json(res);
    expect(delivery).toMatchObject({ type: 'webhook.test', status: 'pending' });
    const done = await eventually(async () => {
      const [d] = await deliveries(webhook.id);
      return d.status === 'succeeded' && d;
    });
    expect(done).toMatchObject({ responseStatus: 200, response: 'ok', attempts: 1, error: null });
    expect(done.durationMs).toBeGreaterThanOrEqual(0);
    const got = receiver.received.slice(before);
    expect(got).toHaveLength(1);
    const r = got[0]!;
    expect(verifyStandardWebhook(secret, r)).toBe(true);
    expect(r.headers['webhook-id']).toBe(delivery.messageId);
    expect(r.headers['content-type']).toBe('application/json');
    expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    const body = JSON.parse(r.body);
    expect(body).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: { webhookId: webhook.id, message: 'A test event from Coffer' },
    });
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
    // The signature covers the body: one byte changed no longer verifies.
    expect(verifyStandardWebhook(secret, { ...r, body: r.body.replace('test', 'tesT') })).toBe(false);
    expect(verifyStandardWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, r)).toBe(false);
  });

  test('redeliver sends the same message again (same webhook-id and body); rotating the secret signs with the new one only', async () => {
    const { webhook, secret } = await createHook();
    await owner.client.post(`/api/webhooks/${webhook.id}/test`);
    const [first] = await eventually(async () => {
      const list = await deliveries(webhook.id);
      return list[0]?.status === 'succeeded' && list;
    });
    const before = receiver.received.length;
    const res = await owner.client.post(`/api/webhooks/${webhook.id}/deliveries/${first.id}/redeliver`);
    expect(res.status).toBe(202);
    await eventually(async () => (await deliveries(webhook.id)).filter((d) => d.status === 'succeeded').length === 2);
    const again = receiver.received.slice(before);
    expect(again).toHaveLength(1);
    expect(again[0]!.headers['webhook-id']).toBe(first.messageId);
    expect(verifyStandardWebhook(secret, again[0]!)).toBe(true);

    const rotated = await json(await owner.client.post(`/api/webhooks/${webhook.id}/rotate-secret`));
    expect(rotated.secret).not.toBe(secret);
    const mark = receiver.received.length;
    await owner.client.post(`/api/webhooks/${webhook.id}/test`);
    const r = await eventually(() => receiver.received[mark] ?? false);
    expect(verifyStandardWebhook(rotated.secret, r)).toBe(true);
    expect(verifyStandardWebhook(secret, r)).toBe(false);
    expect((await owner.client.post(`/api/webhooks/${webhook.id}/deliveries/nope/redeliver`)).status).toBe(404);
  });

  test('the response kept is its first 1 KiB; a 3xx is a failure and its redirect is not followed', async () => {
    const target = startReceiver();
    try {
      const { webhook } = await createHook();
      receiver.answer(() => ({ status: 200, body: 'x'.repeat(5000) }));
      await owner.client.post(`/api/webhooks/${webhook.id}/test`);
      const ok = await eventually(async () => {
        const [d] = await deliveries(webhook.id);
        return d.status === 'succeeded' && d;
      });
      expect(ok.response).toBe('x'.repeat(1024));

      receiver.answer(() => ({ status: 302, headers: { location: `${target.url}/internal` } }));
      await owner.client.post(`/api/webhooks/${webhook.id}/test`);
      const redirected = await eventually(async () => {
        const [d] = await deliveries(webhook.id);
        return d.attempts === 1 && d;
      });
      expect(redirected.responseStatus).toBe(302);
      expect(redirected.error).toBe(`redirect not followed (302 to ${target.url}/internal)`);
      expect(redirected.status).toBe('pending');
      expect(target.received).toHaveLength(0);
      await owner.client.send('PATCH', `/api/webhooks/${webhook.id}`, { enabled: false });
      const [after] = await deliveries(webhook.id);
      expect(after).toMatchObject({ status: 'failed', error: 'the webhook was disabled' });
    } finally {
      receiver.answer(() => ({ status: 200, body: 'ok' }));
      target.stop();
    }
  });

  test('bad input is a 400 or 422 a person can act on', async () => {
    const bad = async (body: unknown) => {
      const res = await owner.client.post('/api/webhooks', body);
      expect([400, 422]).toContain(res.status);
      return (await json(res)).message as string;
    };
    expect(await bad({ url: 'ftp://example.com/x', events: ['item.created'] })).toContain('http:// or https://');
    expect(await bad({ url: 'not a url', events: ['item.created'] })).toContain('not a valid URL');
    expect(await bad({ url: 'https://u:p@example.com/x', events: ['item.created'] })).toContain('user name or password');
    expect(await bad({ url: 'https://example.com/x', events: [] })).toBeString();
    expect(await bad({ url: 'https://example.com/x', events: ['item.exploded'] })).toBeString();
    expect(await bad({ url: `https://example.com/${'a'.repeat(2100)}`, events: ['item.created'] })).toBeString();
    const missing = await owner.client.post('/api/webhooks', { url: 'https://example.com/x', events: ['item.created'], folderId: 'nope' });
    expect(missing.status).toBe(404);
    expect((await json(missing)).message).toBe('Folder not found');
  });
});

describe('events raised where they happen', () => {
  test('account.signed_in goes to the account hooks and the instance hooks; not to another account', async () => {
    const other = await seed.owner(t);
    const mine = await createHook(owner.client, { events: ['account.signed_in'] });
    const theirs = await createHook(other.client, { events: ['account.signed_in'] });
    const instance = await createHook(admin.client, { events: ['account.signed_in'] }, '/api/admin/webhooks');
    const mark = receiver.received.length;
    await seed.login(t, owner.email);
    await eventually(async () =>
      (await deliveries(mine.webhook.id)).some((d) => d.type === 'account.signed_in' && d.status === 'succeeded'),
    );
    const instanceDeliveries = await deliveries(instance.webhook.id, admin.client, '/api/admin/webhooks');
    expect(instanceDeliveries.some((d) => d.type === 'account.signed_in')).toBe(true);
    expect(await deliveries(theirs.webhook.id, other.client)).toEqual([]);
    const signedIn = receiver.received.slice(mark).find((r) => verifyStandardWebhook(mine.secret, r))!;
    expect(JSON.parse(signedIn.body)).toMatchObject({
      type: 'account.signed_in',
      data: { login: { id: owner.id, email: owner.email }, method: 'password' },
    });
    for (const h of [mine, instance]) {
      const base = h === instance ? '/api/admin/webhooks' : '/api/webhooks';
      await (h === instance ? admin : owner).client.delete(`${base}/${h.webhook.id}`);
    }
  });

  test('share.link_opened, with the folder filter: a link under the folder is sent, one outside is not', async () => {
    const watched = await folder(owner.client, 'Watched');
    const inside = await folder(owner.client, 'Inside', watched.id);
    const outside = await folder(owner.client, 'Outside');
    const hook = await createHook(owner.client, { events: ['share.link_opened'], folderId: watched.id });
    expect(hook.webhook.folderId).toBe(watched.id);
    const links = (await json(await owner.client.post('/api/files/share', { ids: [inside.id, outside.id], shared: true }))).links;
    const token = (id: string) => /\/s\/([A-Za-z0-9_-]+)/.exec(links[id])![1]!;
    for (const id of [outside.id, inside.id])
      expect((await t.client().get(`/s/${token(id)}`, { accept: 'application/json' })).status).toBe(200);
    const [d] = await eventually(async () => {
      const list = await deliveries(hook.webhook.id);
      return list.length > 0 && list[0].status === 'succeeded' && list;
    });
    expect((await deliveries(hook.webhook.id)).length).toBe(1);
    expect(JSON.parse(receiver.received.find((r) => r.headers['webhook-id'] === d.messageId)!.body).data.item).toEqual({
      id: inside.id,
      name: 'Inside',
      type: 'folder',
    });
  });
});

describe('who may manage which hooks', () => {
  test('another account gets 404 on every route; a sub-user 403; a member 403 for a folder shared with it; the admin routes are the admin’s', async () => {
    const { webhook } = await createHook();
    const [d] = await eventually(async () => {
      await owner.client.post(`/api/webhooks/${webhook.id}/test`);
      const list = await deliveries(webhook.id);
      return list.length > 0 && list;
    });
    const other = await seed.owner(t);
    const sub = await seed.subUser(t, owner, ['files.download', 'files.upload', 'files.share']);
    const routes: Array<[string, string, unknown]> = [
      ['GET', `/api/webhooks/${webhook.id}`, undefined],
      ['PATCH', `/api/webhooks/${webhook.id}`, { enabled: false }],
      ['POST', `/api/webhooks/${webhook.id}/rotate-secret`, undefined],
      ['GET', `/api/webhooks/${webhook.id}/deliveries`, undefined],
      ['POST', `/api/webhooks/${webhook.id}/test`, undefined],
      ['POST', `/api/webhooks/${webhook.id}/deliveries/${d.id}/redeliver`, undefined],
      ['DELETE', `/api/webhooks/${webhook.id}`, undefined],
    ];
    for (const [method, path, body] of routes) {
      expect([method, path, (await other.client.send(method, path, body)).status]).toEqual([method, path, 404]);
      expect([method, path, (await sub.client.send(method, path, body)).status]).toEqual([method, path, 403]);
      // The admin's routes hold only instance hooks: an account's hook is not one of them.
      const adminPath = path.replace('/api/webhooks', '/api/admin/webhooks');
      expect([method, adminPath, (await admin.client.send(method, adminPath, body)).status]).toEqual([method, adminPath, 404]);
    }
    expect((await sub.client.get('/api/webhooks')).status).toBe(403);
    expect((await sub.client.post('/api/webhooks', { url: receiver.url, events: ['item.created'] })).status).toBe(403);
    expect((await owner.client.get('/api/admin/webhooks')).status).toBe(403);
    expect((await owner.client.post('/api/admin/webhooks', { url: receiver.url, events: ['item.created'] })).status).toBe(403);
    expect((await json(await other.client.get('/api/webhooks'))).webhooks).toEqual([]);

    const shared = await folder(owner.client, 'Shared with other');
    expect((await owner.client.post(`/api/files/${shared.id}/members`, { email: other.email, role: 'editor' })).status).toBe(201);
    const res = await other.client.post('/api/webhooks', { url: receiver.url, events: ['item.created'], folderId: shared.id });
    expect(res.status).toBe(403);
    expect((await json(res)).message).toContain('not one shared with you');
    const unrelated = await folder(admin.client, 'Not shared');
    expect((await other.client.post('/api/webhooks', { url: receiver.url, events: ['item.created'], folderId: unrelated.id })).status).toBe(
      404,
    );
    expect((await owner.client.get(`/api/webhooks/${webhook.id}`)).status).toBe(200);
  });
});
