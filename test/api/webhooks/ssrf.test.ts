import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { startReceiver } from '../../helpers/webhook-receiver.ts';
import { addressClass } from '../../../src/services/webhooks/destination.ts';

let t: TestServer;
let owner: seed.SeededLogin;
let receiver: ReturnType<typeof startReceiver>;

beforeAll(async () => {
  receiver = startReceiver();
  // No WEBHOOK_ALLOWED_HOSTS: the defaults a real instance has.
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
  owner = await seed.owner(t);
});
afterAll(async () => {
  await t.stop();
  receiver.stop();
});

// One URL of each refused class, as a person could type it (URL parsing normalizes the odd spellings).
const REFUSED: Array<[url: string, kind: string]> = [
  ['http://127.0.0.1/', 'loopback'],
  ['http://127.8.9.10:8080/', 'loopback'],
  ['http://2130706433/', 'loopback'],
  ['http://0x7f.1/', 'loopback'],
  ['http://[::1]/', 'loopback'],
  ['http://10.1.2.3/', 'private'],
  ['http://172.16.0.1/', 'private'],
  ['http://172.31.255.255/', 'private'],
  ['http://192.168.1.1/', 'private'],
  ['http://[fd12:3456::1]/', 'unique local (ULA)'],
  ['http://[fc00::1]/', 'unique local (ULA)'],
  ['http://169.254.169.254/latest/meta-data/', 'link-local'],
  ['http://[fe80::1]/', 'link-local'],
  ['http://100.64.0.1/', 'shared (CGNAT)'],
  ['http://100.127.255.254/', 'shared (CGNAT)'],
  ['http://224.0.0.1/', 'multicast'],
  ['http://239.255.255.250/', 'multicast'],
  ['http://[ff02::1]/', 'multicast'],
  ['http://0.0.0.0/', 'unspecified'],
  ['http://[::]/', 'unspecified'],
  ['http://255.255.255.255/', 'broadcast'],
  ['http://[::ffff:127.0.0.1]/', 'loopback'],
  ['http://[::ffff:10.0.0.1]/', 'private'],
  ['http://[::ffff:169.254.169.254]/', 'link-local'],
  ['http://[64:ff9b::7f00:1]/', 'loopback'],
];

describe('server-side request forgery', () => {
  test('a URL naming a refused address of any class is refused when the hook is made, with the reason', async () => {
    for (const [url, kind] of REFUSED) {
      const res = await owner.client.post('/api/webhooks', { url, events: ['item.created'] });
      const body = await json(res);
      expect([url, res.status]).toEqual([url, 400]);
      expect([url, body.message]).toEqual([url, expect.stringContaining(`${kind} address`)]);
      expect(body.message).toContain('WEBHOOK_ALLOWED_HOSTS');
    }
  });

  test('public addresses are classed as such', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect([address, addressClass(address)]).toEqual([address, null]);
    }
  });

  test('a host name is checked after DNS resolution, at each delivery: localhost is refused and nothing is sent', async () => {
    const port = new URL(receiver.url).port;
    for (const host of ['localhost', 'LOCALHOST']) {
      const res = await owner.client.post('/api/webhooks', { url: `http://${host}:${port}/in`, events: ['item.created'] });
      expect(res.status).toBe(201);
      const { webhook } = await json(res);
      await owner.client.post(`/api/webhooks/${webhook.id}/test`);
      await t.server.worker.drain();
      const [d] = (await json(await owner.client.get(`/api/webhooks/${webhook.id}/deliveries`))).deliveries;
      expect(d.status).toBe('pending');
      expect(d.responseStatus).toBeNull();
      expect(d.error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    }
    expect(receiver.received).toHaveLength(0);
  });
});

describe('redirects', () => {
  test('a redirect to loopback from an allowed receiver is not followed: recorded as a failure, the loopback target never reached', async () => {
    const target = startReceiver();
    const bouncer = startReceiver(() => ({ status: 307, headers: { location: `${target.url.replace('127.0.0.1', 'localhost')}/admin` } }));
    const allowed = await startTestServer({ startWorker: false, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
    try {
      const a = await seed.admin(allowed);
      const { webhook } = await json(await a.client.post('/api/webhooks', { url: `${bouncer.url}/in`, events: ['item.created'] }));
      await a.client.post(`/api/webhooks/${webhook.id}/test`);
      await allowed.server.worker.drain();
      const [d] = (await json(await a.client.get(`/api/webhooks/${webhook.id}/deliveries`))).deliveries;
      expect(d).toMatchObject({ status: 'pending', responseStatus: 307 });
      expect(d.error).toStartWith('redirect not followed (307 to http://localhost:');
      expect(bouncer.received).toHaveLength(1);
      expect(target.received).toHaveLength(0);
    } finally {
      await allowed.stop();
      bouncer.stop();
      target.stop();
    }
  });
});
