import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { json } from '../../helpers/client.ts';
import { folder } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const DAY = 86_400_000;
const clock = new ManualClock(Date.UTC(2026, 10, 1, 9, 0, 0));
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ clock, env: { COFFER_MEMBER_LOOKUP_RATE_LIMIT: '12' } });
  await seed.admin(t);
});
afterAll(() => t.stop());

describe('what the share dialog asks of the server', () => {
  test('a picked expiry date: kept to the millisecond, re-timed on an existing link; past, too far or malformed refused', async () => {
    const o = await seed.owner(t);
    const box = await folder(o.client, 'Box');
    const link = async () => (await json(await o.client.get(`/api/files/share/links?itemId=${box.id}`))).links[0];
    const at = new Date(clock.now() + 45 * DAY + 1234).toISOString();
    expect((await o.client.post('/api/files/share', { ids: [box.id], shared: true, expiresAt: at })).status).toBe(200);
    expect((await link()).expiresAt).toBe(at);
    // The date wins over a preset sent beside it; a preset alone still works.
    const later = new Date(clock.now() + 400 * DAY).toISOString();
    await o.client.post('/api/files/share', { ids: [box.id], shared: true, expiry: '7d', expiresAt: later });
    expect((await link()).expiresAt).toBe(later);
    await o.client.post('/api/files/share', { ids: [box.id], shared: true, expiry: 'never' });
    expect((await link()).expiresAt).toBeNull();

    for (const [expiresAt, message] of [
      [new Date(clock.now() - 1000).toISOString(), 'Pick an expiry date in the future.'],
      [new Date(clock.now() + 11 * 365 * DAY).toISOString(), 'Pick an expiry date at most ten years ahead, or choose Never.'],
    ]) {
      const res = await o.client.post('/api/files/share', { ids: [box.id], shared: true, expiresAt });
      expect(res.status).toBe(400);
      expect((await json(res)).message).toBe(message);
    }
    const bad = await o.client.post('/api/files/share', { ids: [box.id], shared: true, expiresAt: 'next Tuesday' });
    expect(bad.status).toBe(422);
    expect(JSON.stringify((await json(bad)).details)).toContain('expiresAt');
    expect((await link()).expiresAt).toBeNull();
  });

  test("a link's QR code: a PNG for its owner; another account's token 404; a sub-user without Share 403", async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const box = await folder(o.client, 'Box');
    await o.client.post('/api/files/share', { ids: [box.id], shared: true });
    const { token } = (await json(await o.client.get(`/api/files/share/links?itemId=${box.id}`))).links[0];
    const res = await o.client.get(`/api/files/share/links/${token}/qr`);
    expect(res.status).toBe(200);
    const { qrCode } = await json(res);
    expect(qrCode).toStartWith('data:image/png;base64,');
    expect(Buffer.from(qrCode.split(',')[1], 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect((await other.client.get(`/api/files/share/links/${token}/qr`)).status).toBe(404);
    expect((await o.client.get('/api/files/share/links/no-such-token/qr')).status).toBe(404);
    const helper = await seed.subUser(t, { id: o.id }, ['files.download']);
    expect((await helper.client.get(`/api/files/share/links/${token}/qr`)).status).toBe(403);
  });

  test('people suggestions: owners of this instance by name or email; a sub-user sees names only; the member-lookup allowance', async () => {
    const o = await seed.owner(t, seed.uniqueEmail('ada'), 'Ada Lovelace');
    const grace = await seed.owner(t, seed.uniqueEmail('gracie'), 'Grace Hopper');
    await seed.owner(t, seed.uniqueEmail('hop'), 'Hopeful 100%');
    const ownHelper = await seed.subUser(t, { id: grace.id }, ['files.share']);
    const suggest = async (client: typeof o.client, q: string) => {
      const res = await client.get(`/api/people/suggestions?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      return (await json(res)).people as Array<{ accountId: string; name: string; email?: string }>;
    };
    // A word of the name, and an email prefix: the same person, email and all, for an owner.
    expect(await suggest(o.client, 'hop')).toEqual([
      { accountId: grace.id, name: 'Grace Hopper', email: grace.email },
      expect.objectContaining({ name: 'Hopeful 100%' }),
    ]);
    expect((await suggest(o.client, 'gracie')).map((p) => p.accountId)).toEqual([grace.id]);
    // % and _ are letters here; sub-users and the caller's own account are never offered.
    expect((await suggest(o.client, 'hopeful 100%')).map((p) => p.name)).toEqual(['Hopeful 100%']);
    expect(await suggest(o.client, 'h_p')).toEqual([]);
    expect(await suggest(o.client, 'ada')).toEqual([]);
    expect((await suggest(grace.client, 'su')).map((p) => p.accountId)).not.toContain(ownHelper.id);

    // A sub-user: names only, and an email prefix finds no one.
    const helper = await seed.subUser(t, { id: o.id }, ['files.share']);
    expect(await suggest(helper.client, 'grace')).toEqual([{ accountId: grace.id, name: 'Grace Hopper' }]);
    expect(await suggest(helper.client, 'gracie')).toEqual([]);
    // A picked suggestion adds the person by account id.
    const box = await folder(o.client, 'Box');
    const added = await helper.client.post(`/api/files/${box.id}/members`, { accountId: grace.id, role: 'viewer' });
    expect(added.status).toBe(201);
    expect((await json(added)).member.accountId).toBe(grace.id);
    expect((await helper.client.post(`/api/files/${box.id}/members`, { accountId: ownHelper.id, role: 'viewer' })).status).toBe(404);

    const nosy = await seed.subUser(t, { id: o.id }, ['files.download']);
    expect((await nosy.client.get('/api/people/suggestions?q=grace')).status).toBe(403);
    const short = await o.client.get('/api/people/suggestions?q=a');
    expect(short.status).toBe(422);
    expect((await json(short)).details[0].message).toBe('Type at least 2 characters of a name or email');

    // The account (owner and sub-users together) spends one allowance on lookups: 12 in this server.
    clock.advance(16 * 60_000);
    const spent = [];
    for (let i = 0; i < 12; i++) spent.push((await o.client.get('/api/people/suggestions?q=gr')).status);
    expect(spent.every((s) => s === 200)).toBe(true);
    const limited = await helper.client.get('/api/people/suggestions?q=gr');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBeTruthy();
    expect((await helper.client.post(`/api/files/${box.id}/members`, { email: o.email, role: 'viewer' })).status).toBe(429);
    expect((await grace.client.get('/api/people/suggestions?q=ad')).status).toBe(200);
  });
});
