import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { NOTIFICATIONS_PER_SENDER } from '../../../src/services/sharing/members.ts';
import { json } from '../../helpers/client.ts';
import { folder } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/** COFFER_MEMBER_LOOKUP_RATE_LIMIT's default, which the test server keeps. */
const MEMBER_LOOKUPS = 30;

const HOUR = 3600_000;
// Whole windows: the limiters' windows are aligned to multiples of their length.
const clock = new ManualClock(Math.floor(Date.now() / HOUR) * HOUR + 60_000);
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ clock });
});
afterAll(() => t.stop());

const add = (owner: seed.SeededLogin, itemId: string, email: string) =>
  owner.client.post(`/api/files/${itemId}/members`, { email, role: 'viewer' });
const remove = (owner: seed.SeededLogin, itemId: string, accountId: string) =>
  owner.client.delete(`/api/files/${itemId}/members/${accountId}`);
const notifications = async (login: seed.SeededLogin) => json(await login.client.get('/api/notifications?limit=100'));

describe('notifications of sharing with people', () => {
  test('add and remove again and again leave one unread of each kind per item, updated with the latest', async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const item = await folder(owner.client, 'Family');
    for (let i = 0; i < 5; i++) {
      expect((await add(owner, item.id, member.email)).status).toBe(201);
      clock.advance(1000);
      expect((await remove(owner, item.id, member.id)).status).toBe(200);
      clock.advance(1000);
    }
    let list = await notifications(member);
    expect(list.unread).toBe(2);
    expect(list.notifications.map((n: any) => n.type)).toEqual(['share.removed', 'share.added']);
    expect(list.notifications[0].createdAt).toBe(new Date(clock.now() - 1000).toISOString());

    // Once read, the next one is a new notification again.
    await member.client.post('/api/notifications/read', { all: true });
    expect((await add(owner, item.id, member.email)).status).toBe(201);
    list = await notifications(member);
    expect(list.unread).toBe(1);
    expect(list.notifications.map((n: any) => [n.type, n.readAt === null])).toEqual([
      ['share.added', true],
      ['share.removed', false],
      ['share.added', false],
    ]);
  });

  test(`one account sends another at most ${NOTIFICATIONS_PER_SENDER} an hour; other senders are not held back`, async () => {
    const owner = await seed.owner(t);
    const other = await seed.owner(t);
    const member = await seed.owner(t);
    const items = [];
    // Separate items: nothing coalesces, so every notification would be a new unread one.
    for (let i = 0; i < NOTIFICATIONS_PER_SENDER + 5; i++) items.push(await folder(owner.client, `Spam ${i}`));
    for (const [i, item] of items.entries()) {
      // Past the member lookups' own limit, in the same hour.
      if (i === MEMBER_LOOKUPS) clock.advance(15 * 60_000);
      expect((await add(owner, item.id, member.email)).status).toBe(201);
    }
    expect((await notifications(member)).unread).toBe(NOTIFICATIONS_PER_SENDER);

    const theirs = await folder(other.client, 'Theirs');
    expect((await add(other, theirs.id, member.email)).status).toBe(201);
    expect((await notifications(member)).unread).toBe(NOTIFICATIONS_PER_SENDER + 1);

    // Every share was made; only the notifications were held back.
    const shared = await json(await member.client.get('/api/files/shared-with-me?limit=200'));
    expect(shared.items.length).toBe(items.length + 1);

    clock.advance(HOUR);
    expect((await remove(owner, items[0].id, member.id)).status).toBe(200);
    expect((await notifications(member)).unread).toBe(NOTIFICATIONS_PER_SENDER + 2);
  });
});

describe('adding a member looks an email up: limited per account', () => {
  test(`${MEMBER_LOOKUPS} per 15 minutes for an account and its sub-users, then 429 with Retry-After; other accounts go on`, async () => {
    clock.set(Math.ceil(clock.now() / HOUR) * HOUR + 1000);
    const owner = await seed.owner(t);
    const sub = await seed.subUser(t, owner, ['files.share']);
    const other = await seed.owner(t);
    const item = await folder(owner.client, 'Family');
    const theirs = await folder(other.client, 'Theirs');
    for (let i = 0; i < MEMBER_LOOKUPS; i++) {
      const res = await (i % 2 ? sub : owner).client.post(`/api/files/${item.id}/members`, {
        email: seed.uniqueEmail('probe'),
        role: 'viewer',
      });
      expect(res.status).toBe(404);
    }
    for (const login of [owner, sub]) {
      const res = await login.client.post(`/api/files/${item.id}/members`, { email: other.email, role: 'viewer' });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBe(15 * 60 - 1);
      expect(await json(res)).toEqual({ error: 'Too many requests, please try again later' });
    }
    expect((await add(other, theirs.id, owner.email)).status).toBe(201);
    // The rest of the account's sharing is not held back.
    expect((await owner.client.get(`/api/files/${item.id}/members`)).status).toBe(200);

    clock.advance(15 * 60_000);
    expect((await add(owner, item.id, other.email)).status).toBe(201);
  });
});
