import { describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { folder, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { serverWithReceiver } from '../../helpers/suite.ts';
import { type Received, verifyStandardWebhook, type startReceiver } from '../../helpers/webhook-receiver.ts';

let t: TestServer;
let receiver: ReturnType<typeof startReceiver>;
let admin: seed.SeededLogin;

serverWithReceiver((s) => ({ t, admin, receiver } = s));

async function hook(
  client: seed.SeededLogin['client'],
  path: string,
  events: string[],
  extra: Record<string, unknown> = {},
  base = '/api/webhooks',
) {
  const res = await client.post(base, { url: `${receiver.url}/${path}`, events, ...extra });
  expect(res.status).toBe(201);
  return (await json(res)) as { webhook: { id: string }; secret: string };
}

const bodies = (rs: Received[]) => rs.map((r) => JSON.parse(r.body));

describe('change-log events', () => {
  test("an account's hook gets its own changes, signed, in order, with who did what before and after; another account's never", async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const mine = await hook(o.client, 'mine', ['item.created', 'item.renamed', 'item.moved', 'item.trashed', 'item.uploaded']);
    const theirs = await hook(other.client, 'theirs', ['item.created']);
    const mark = receiver.received.length;
    const docs = await folder(o.client, 'Docs');
    const archive = await folder(o.client, 'Archive');
    const file = await upload(o.client, 'scan.pdf', 'pdf bytes', { parentId: docs.id });
    expect((await o.client.post('/api/files/rename', { id: file.id, name: 'scan-2026.pdf' })).status).toBe(200);
    expect((await o.client.post('/api/files/move', { ids: [file.id], parentId: archive.id })).status).toBe(200);
    expect((await o.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
    await folder(other.client, 'Not yours');

    const got = await eventually(
      () => {
        const rs = receiver.received.slice(mark).filter((r) => verifyStandardWebhook(mine.secret, r));
        return rs.length >= 6 && rs;
      },
      { timeoutMs: 15_000 },
    );
    const events = bodies(got);
    expect(events.map((e) => e.type)).toEqual([
      'item.created',
      'item.created',
      'item.uploaded',
      'item.renamed',
      'item.moved',
      'item.trashed',
    ]);
    const seqs = events.map((e) => e.data.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(events[3]).toMatchObject({
      data: {
        accountId: o.id,
        actor: { kind: 'login', id: o.id },
        item: { id: file.id, type: 'file' },
        before: { name: 'scan.pdf', parentId: docs.id },
        after: { name: 'scan-2026.pdf', parentId: docs.id },
      },
    });
    expect(events[4].data).toMatchObject({ before: { parentId: docs.id }, after: { parentId: archive.id } });
    // Their hook heard only their own folder.
    const theirsGot = await eventually(() => {
      const rs = receiver.received.slice(mark).filter((r) => verifyStandardWebhook(theirs.secret, r));
      return rs.length >= 1 && rs;
    });
    expect(bodies(theirsGot).map((e) => [e.type, e.data.accountId])).toEqual([['item.created', other.id]]);
    await Bun.sleep(600);
    expect(receiver.received.slice(mark).filter((r) => verifyStandardWebhook(mine.secret, r))).toHaveLength(6);
    const log = (await json(await o.client.get(`/api/webhooks/${mine.webhook.id}/deliveries`))).deliveries;
    expect(log.every((d: any) => d.status === 'succeeded')).toBe(true);
  });

  test('the folder filter sends changes under the folder (a move out of it included) and nothing else; an instance hook hears every account', async () => {
    const o = await seed.owner(t);
    const watched = await folder(o.client, 'Watched');
    const inner = await folder(o.client, 'Inner', watched.id);
    const elsewhere = await folder(o.client, 'Elsewhere');
    const filtered = await hook(o.client, 'filtered', ['item.created', 'item.moved'], { folderId: watched.id });
    const instance = await hook(admin.client, 'instance', ['item.created'], {}, '/api/admin/webhooks');
    const mark = receiver.received.length;
    const deep = await folder(o.client, 'Deep', inner.id);
    await folder(o.client, 'Outside', elsewhere.id);
    expect((await o.client.post('/api/files/move', { ids: [deep.id], parentId: elsewhere.id })).status).toBe(200);
    const someoneElse = await seed.owner(t);
    await folder(someoneElse.client, 'Theirs');

    const filteredGot = await eventually(
      () => {
        const rs = receiver.received.slice(mark).filter((r) => verifyStandardWebhook(filtered.secret, r));
        return rs.length >= 2 && rs;
      },
      { timeoutMs: 15_000 },
    );
    expect(bodies(filteredGot).map((e) => [e.type, e.data.after.name])).toEqual([
      ['item.created', 'Deep'],
      ['item.moved', 'Deep'],
    ]);
    const instanceGot = await eventually(
      () => {
        const rs = receiver.received.slice(mark).filter((r) => verifyStandardWebhook(instance.secret, r));
        return rs.length >= 3 && rs;
      },
      { timeoutMs: 15_000 },
    );
    expect(bodies(instanceGot).map((e) => [e.data.accountId, e.data.after.name])).toEqual([
      [o.id, 'Deep'],
      [o.id, 'Outside'],
      [someoneElse.id, 'Theirs'],
    ]);
    await Bun.sleep(600);
    expect(receiver.received.slice(mark).filter((r) => verifyStandardWebhook(filtered.secret, r))).toHaveLength(2);
  });

  test("a member's change inside a folder shared with it goes to the owner's hook, not to the member's own", async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Team');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const ownerHook = await hook(o.client, 'owner', ['item.created']);
    const memberHook = await hook(member.client, 'member', ['item.created']);
    const mark = receiver.received.length;
    expect((await member.client.post('/api/files/folder', { name: 'From the member', parentId: shared.id })).status).toBe(200);
    const got = await eventually(
      () => {
        const rs = receiver.received.slice(mark).filter((r) => verifyStandardWebhook(ownerHook.secret, r));
        return rs.length >= 1 && rs;
      },
      { timeoutMs: 15_000 },
    );
    expect(bodies(got)[0].data).toMatchObject({
      accountId: o.id,
      actor: { kind: 'login', id: member.id },
      after: { name: 'From the member' },
    });
    await Bun.sleep(600);
    expect(receiver.received.slice(mark).filter((r) => verifyStandardWebhook(memberHook.secret, r))).toHaveLength(0);
  });
});

describe('the dispatcher across a restart', () => {
  test('changes read before a restart are delivered once; changes made before it and not yet read are read after it', async () => {
    const s = await startTestServer({ startWorker: false, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
    try {
      const a = await seed.admin(s);
      const { webhook, secret } = await json(
        await a.client.post('/api/webhooks', { url: `${receiver.url}/restart`, events: ['item.created'] }),
      );
      const mark = receiver.received.length;
      const mine = () => receiver.received.slice(mark).filter((r) => verifyStandardWebhook(secret, r));
      // Changes made before the hook existed are read and skipped.
      s.server.ctx.services.webhooks.dispatch();
      await folder(a.client, 'one');
      await folder(a.client, 'two');
      expect(s.server.ctx.services.webhooks.dispatch()).toBe(2);
      await folder(a.client, 'three');
      // Down with two deliveries queued and one change not yet read.
      await s.restart();
      expect(s.server.ctx.services.webhooks.dispatch()).toBe(1);
      expect(s.server.ctx.services.webhooks.dispatch()).toBe(0);
      await s.server.worker.drain();
      expect(bodies(mine()).map((e) => e.data.after.name)).toEqual(['one', 'two', 'three']);
      await s.restart();
      expect(s.server.ctx.services.webhooks.dispatch()).toBe(0);
      await s.server.worker.drain();
      expect(mine()).toHaveLength(3);
      expect(new Set(mine().map((r) => r.headers['webhook-id'])).size).toBe(3);
      const log = s.server.ctx.services.webhooks.deliveries({ accountId: a.id }, webhook.id).deliveries;
      expect(log.map((d) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    } finally {
      await s.stop();
    }
  });
});
