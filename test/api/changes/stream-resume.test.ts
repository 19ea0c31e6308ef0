import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';
import { ChangeKinds } from '../../../src/services/changes/change-log.ts';
import { runCli } from '../../helpers/cli.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { folder, SseReader, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const DAY = 24 * 3600_000;
const clock = new ManualClock(Date.now());
let t: TestServer;
let adminEmail: string;

beforeAll(async () => {
  t = await startTestServer({ clock, startWorker: false });
  adminEmail = (await seed.admin(t)).email;
});
afterAll(() => t.stop());

async function open(client: TestClient, lastEventId?: string): Promise<SseReader> {
  const res = await client.get('/api/files/events', lastEventId === undefined ? undefined : { 'Last-Event-ID': lastEventId });
  expect(res.status).toBe(200);
  const reader = new SseReader(res);
  const connected = await reader.nextEvent();
  expect(connected.data).toEqual({ type: 'connected' });
  // A fresh stream's first id is the latest seq (a reconnect resumes from there); a resumed one keeps the client's.
  if (lastEventId === undefined) expect(Number(connected.id)).toBeGreaterThanOrEqual(0);
  else expect(connected.id).toBeUndefined();
  return reader;
}

describe('GET /api/files/events with Last-Event-ID', () => {
  /** A folder shared by link (`expiry` its link's) holding files that joined its link (link-parent-share), and that link's id. */
  async function joinedAlbum(o: seed.SeededLogin, names: string[], expiry?: string) {
    const album = await folder(o.client, 'Album');
    expect((await o.client.post('/api/files/share', { ids: [album.id], shared: true, ...(expiry ? { expiry } : {}) })).status).toBe(200);
    const files: any[] = [];
    for (const name of names) files.push(await upload(o.client, name, name, { parentId: album.id }));
    expect((await o.client.post('/api/files/link-parent-share', { ids: files.map((f) => f.id) })).status).toBe(200);
    const created = t.server.ctx.repos.changes.pageOfAccounts([o.id], 0, 100);
    const { linkId } = JSON.parse(created.find((r) => r.kind === ChangeKinds.linkCreated && r.itemId === album.id)!.details!);
    return { album, files, linkId: linkId as string };
  }

  /** The link.removed changes of the account after `seq`: item and details. */
  const linkRemovals = (accountId: string, seq: number) =>
    t.server.ctx.repos.changes
      .pageOfAccounts([accountId], seq, 100)
      .filter((r) => r.kind === ChangeKinds.linkRemoved)
      .map((r) => [r.itemId, JSON.parse(r.details!)]);

  /** What a stream opened now hears while `act` runs (type and data), checked to be what a stream resumed from before it replays. */
  async function heardAndReplayed(client: TestClient, act: () => Promise<void>, only: (id: unknown) => boolean = () => true) {
    const from = t.server.ctx.services.changes.latestSeq();
    const live = await open(client);
    await act();
    const seen = async (reader: SseReader) =>
      (await reader.untilQuiet()).filter((e) => only(e.data?.id)).map((e) => ({ type: e.type, data: e.data }));
    const heard = await seen(live);
    await live.close();
    const resumed = await open(client, String(from));
    expect(await seen(resumed)).toEqual(heard);
    await resumed.close();
    return { heard, from };
  }

  test('each change event carries its seq as `id:` after its `data:` line; a star (not a change) has none', async () => {
    const o = await seed.owner(t);
    const stream = await open(o.client);
    const dir = await folder(o.client, 'box');
    const block = await stream.next();
    const seq = t.server.ctx.services.changes.latestSeq();
    expect(block).toStartWith('data: {"type":"folder.created"');
    expect(block).toEndWith(`\nid: ${seq}`);
    await o.client.post('/api/files/star', { ids: [dir.id], starred: true });
    expect(await stream.nextEvent()).toEqual({ data: expect.objectContaining({ type: 'file.starred' }) });
    await stream.close();
  });

  test('a stream that saw no change resumes from the id of its `connected` message', async () => {
    const o = await seed.owner(t);
    const quiet = await open(o.client);
    await quiet.close();
    const res = await o.client.get('/api/files/events');
    const first = new SseReader(res);
    const { id } = await first.nextEvent();
    await first.close();
    const missed = await folder(o.client, 'missed');
    const resumed = await open(o.client, id);
    expect((await resumed.nextEvent()).data).toMatchObject({ type: 'folder.created', data: { id: missed.id } });
    await resumed.close();
  });

  test('after a drop: 50 missed changes replayed in order, the same events as live, then live without a gap or duplicate', async () => {
    const o = await seed.owner(t);
    const live = await open(o.client);
    const first = await upload(o.client, 'first.txt', 'one', { type: 'text/plain' });
    const seen = await live.nextEvent();
    expect(seen.data).toMatchObject({ type: 'file.uploaded', data: { id: first.id } });
    await live.close();

    // Every kind the stream announces, then folders up to 50 changes: each is recorded while no stream is open.
    const watcher = await open(o.client);
    const dir = await folder(o.client, 'dir');
    const file = await upload(o.client, 'a.txt', 'abc', { type: 'text/plain' });
    await o.client.post('/api/files/rename', { id: file.id, name: 'b.txt' });
    await o.client.post('/api/files/move', { ids: [file.id], parentId: dir.id });
    await o.client.post('/api/files/delete', { ids: [file.id] });
    await o.client.post('/api/files/trash/restore', { ids: [file.id] });
    for (let i = 0; i < 44; i++) await folder(o.client, `f${i}`);
    const liveEvents = [];
    for (let i = 0; i < 50; i++) liveEvents.push(await watcher.nextEvent());
    await watcher.close();

    const resumed = await open(o.client, seen.id);
    const replayed = [];
    for (let i = 0; i < 50; i++) replayed.push(await resumed.nextEvent());
    const ids = replayed.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(50);
    expect(ids[0]).toBeGreaterThan(Number(seen.id));
    // The same types, data and ids as the live stream sent them (timestamps are the change's time).
    const shape = (e: { data: any; id?: string }) => ({ id: e.id, type: e.data.type, data: e.data.data });
    expect(replayed.map(shape)).toEqual(liveEvents.map(shape));
    expect(await resumed.quietFor(200)).toBe(true);
    const after = await folder(o.client, 'after');
    const next = await resumed.nextEvent();
    expect(next.data).toMatchObject({ type: 'folder.created', data: { id: after.id } });
    expect(Number(next.id)).toBe(ids[49]! + 1);
    await resumed.close();
  });

  test('through WebDAV too (a move that also renames is two events, one id): the replay is what was sent live', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const watcher = await open(o.client);
    expect((await dav.request('MKCOL', 'Docs')).status).toBe(201);
    const first = await watcher.nextEvent();
    expect((await dav.put('Docs/n.txt', 'one')).status).toBe(201);
    expect((await dav.put('Docs/n.txt', 'two')).status).toBe(204);
    expect((await dav.request('MOVE', 'Docs/n.txt', { headers: { destination: `${t.url}/dav/Docs/m.txt` } })).status).toBe(201);
    expect((await dav.request('MOVE', 'Docs/m.txt', { headers: { destination: `${t.url}/dav/m2.txt` } })).status).toBe(201);
    expect((await dav.request('COPY', 'm2.txt', { headers: { destination: `${t.url}/dav/Docs/c.txt` } })).status).toBe(201);
    expect((await dav.request('DELETE', 'm2.txt')).status).toBe(204);
    const live = await watcher.untilQuiet();
    await watcher.close();
    expect(live.map((e) => e.type)).toEqual([
      'file.uploaded',
      'file.updated',
      'file.renamed',
      'file.moved',
      'file.renamed',
      'file.copied',
      'file.deleted',
    ]);
    expect(live[3]!.id).toBeDefined();
    expect(live[4]!.id).toBeUndefined();
    const resumed = await open(o.client, first.id);
    expect(await resumed.untilQuiet()).toEqual(live);
    await resumed.close();
  });

  test('a client that cannot send the header (a new EventSource) names its last id in `?lastEventId=`', async () => {
    const o = await seed.owner(t);
    const mark = await open(o.client);
    await folder(o.client, 'one');
    const { id } = await mark.nextEvent();
    await mark.close();
    const missed = await folder(o.client, 'two');
    const res = await o.client.get(`/api/files/events?lastEventId=${id}`);
    const reader = new SseReader(res);
    expect(await reader.nextEvent()).toEqual({ data: { type: 'connected' } });
    expect((await reader.nextEvent()).data).toMatchObject({ type: 'folder.created', data: { id: missed.id } });
    await reader.close();
    expect((await o.client.get(`/api/files/events?lastEventId=${'9'.repeat(40)}`)).status).toBe(422);
  });

  test("the profile's `X-Last-Event-Id` is where a first stream starts: a change made after the read and before the stream is replayed", async () => {
    const o = await seed.owner(t);
    // Only when asked for: the profile route is hot.
    expect((await o.client.get('/api/profile')).headers.get('X-Last-Event-Id')).toBeNull();
    const asked = { Prefer: 'last-event-id' };
    const read = await o.client.get('/api/profile', asked);
    expect(read.status).toBe(200);
    const position = read.headers.get('X-Last-Event-Id')!;
    expect(position).toBe(String(t.server.ctx.services.changes.latestSeq()));
    const between = await folder(o.client, 'between');
    const reader = await open(o.client, position);
    expect((await reader.nextEvent()).data).toMatchObject({ type: 'folder.created', data: { id: between.id } });
    await reader.close();
    // Nothing since: the stream replays nothing and goes on live.
    const quiet = await open(o.client, (await o.client.get('/api/profile', asked)).headers.get('X-Last-Event-Id')!);
    expect(await quiet.untilQuiet()).toEqual([]);
    await quiet.close();
  });

  test('changes made while the replay is running come once, after it', async () => {
    const o = await seed.owner(t);
    const mark = await open(o.client);
    await folder(o.client, 'mark');
    const { id } = await mark.nextEvent();
    await mark.close();
    for (let i = 0; i < 30; i++) await folder(o.client, `m${i}`);
    const resumed = await open(o.client, id);
    const during = folder(o.client, 'during');
    const names: string[] = [];
    for (let i = 0; i < 31; i++) names.push((await resumed.nextEvent()).data.data.name);
    await during;
    expect(names).toEqual([...Array.from({ length: 30 }, (_, i) => `m${i}`), 'during']);
    expect(await resumed.quietFor(200)).toBe(true);
    await resumed.close();
  });

  test('a change announced after a later one (as a bulk upload announces its files once all are written) is replayed to a stream that resumes from the later id', async () => {
    const o = await seed.owner(t);
    const x = await upload(o.client, 'x.txt', 'x');
    const y = await upload(o.client, 'y.txt', 'y');
    const live = await open(o.client);
    const { changes } = t.server.ctx.services;
    // Committed now, its live event still to come.
    const lateSeq = t.server.ctx.repos.transactions.immediate(() =>
      changes.record({ accountId: o.id, loginId: o.id }, ChangeKinds.renamed, { id: x.id, type: 'file', name: 'x2.txt', parentId: null }),
    );
    await o.client.post('/api/files/rename', { id: y.id, name: 'y2.txt' });
    const later = await live.nextEvent();
    expect(later.data).toMatchObject({ type: 'file.renamed', data: { id: y.id } });
    // Its id stops short of the change still to be announced, so resuming from it cannot pass over that one.
    expect(Number(later.id)).toBe(lateSeq - 1);
    await live.close();

    const resumed = await open(o.client, later.id);
    const replayed = [await resumed.nextEvent(), await resumed.nextEvent()];
    expect(replayed.map((e) => [Number(e.id), e.data.data.id])).toEqual([
      [lateSeq, x.id],
      [lateSeq + 1, y.id],
    ]);
    expect(await resumed.quietFor(200)).toBe(true);

    // Once it is announced, ids are each change's own seq again.
    expect(changes.claimSeq(x.id)).toEqual({ seq: lateSeq, resumeId: lateSeq });
    const dir = await folder(o.client, 'after');
    const next = await resumed.nextEvent();
    expect(next.data).toMatchObject({ type: 'folder.created', data: { id: dir.id } });
    expect(Number(next.id)).toBe(lateSeq + 2);
    await resumed.close();
  });

  test('a seq already thinned, not handed out, or not a number starts with `event: reset`, then live', async () => {
    const o = await seed.owner(t);
    const stream = await open(o.client);
    await folder(o.client, 'old');
    const { id } = await stream.nextEvent();
    await stream.close();
    expect(await (await open(o.client, id)).quietFor(100)).toBe(true);

    const latest = String(t.server.ctx.services.changes.latestSeq());
    for (const bad of [String(Number(latest) + 10), 'abc']) {
      const reader = await open(o.client, bad);
      expect(await reader.nextEvent()).toEqual({ data: { type: 'reset' }, event: 'reset', id: latest });
      await reader.close();
    }

    // Nothing was missed after the latest seq, even with the log emptied: a change after it must be thinned for a reset.
    await folder(o.client, 'lost');
    clock.advance(31 * DAY);
    t.server.ctx.services.changes.thin();
    const again = await seed.login(t, o.email);
    const reset = await open(again, id);
    expect(await reset.nextEvent()).toEqual({
      data: { type: 'reset' },
      event: 'reset',
      id: String(t.server.ctx.services.changes.latestSeq()),
    });
    const fresh = await folder(again, 'fresh');
    expect((await reset.nextEvent()).data).toMatchObject({ type: 'folder.created', data: { id: fresh.id } });
    await reset.close();
  });

  test('replay shows only what the login may see: not another account, not a share after removal; a sub-user its account', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const stranger = await seed.owner(t);
    const sub = await seed.subUser(t, o, []);
    const shared = await folder(o.client, 'Shared');
    const from = String(t.server.ctx.services.changes.latestSeq());
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    await upload(o.client, 'inside.txt', 'ours', { parentId: shared.id });
    await upload(o.client, 'private.txt', 'mine');
    expect((await o.client.send('DELETE', `/api/files/${shared.id}/members/${member.id}`)).status).toBe(200);
    await upload(o.client, 'after.txt', 'later', { parentId: shared.id });

    // Removed: nothing of the owner's, not even what happened while it was a member.
    for (const client of [stranger.client, member.client]) {
      const reader = await open(client, from);
      expect(await reader.quietFor(300)).toBe(true);
      await reader.close();
    }
    const ofSub = await open(sub.client, from);
    const got: string[] = [];
    for (let i = 0; i < 3; i++) got.push((await ofSub.nextEvent()).data.data.name);
    expect(got).toEqual(['inside.txt', 'private.txt', 'after.txt']);
    expect(await ofSub.quietFor(200)).toBe(true);
    await ofSub.close();
  });

  test('a member removed mid-stream: live events stop at the removal, and resuming after it replays nothing', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Project');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const live = await open(member.client);
    const before = await upload(o.client, 'before.txt', 'b', { parentId: shared.id });
    const seen = await live.nextEvent();
    expect(seen.data).toMatchObject({ type: 'file.uploaded', data: { id: before.id } });
    expect((await o.client.send('DELETE', `/api/files/${shared.id}/members/${member.id}`)).status).toBe(200);
    const after = await upload(o.client, 'after.txt', 'a', { parentId: shared.id });
    await o.client.post('/api/files/rename', { id: before.id, name: 'renamed.txt' });
    // The removal's own notice may come; nothing about the items does.
    const got: any[] = [];
    for (;;) {
      const next = await live.nextEvent(300).catch(() => null);
      if (!next) break;
      got.push(next.data);
    }
    expect(got.filter((e) => [before.id, after.id].includes(e.data?.id))).toEqual([]);
    await live.close();
    const resumed = await open(member.client, seen.id);
    expect(await resumed.quietFor(300)).toBe(true);
    await resumed.close();
  });

  test('a member hears live an item leave the share (moved out by the API and by WebDAV), as a resumed stream replays it', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Outbox');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const live = await open(member.client);
    const from = String(t.server.ctx.services.changes.latestSeq());
    const byApi = await upload(o.client, 'a.txt', 'a', { parentId: shared.id });
    const byDav = await upload(o.client, 'b.txt', 'b', { parentId: shared.id });
    expect((await o.client.post('/api/files/move', { ids: [byApi.id], parentId: null })).status).toBe(200);
    const dav = await davLogin(t, o);
    expect((await dav.request('MOVE', 'Outbox/b.txt', { headers: { destination: `${t.url}/dav/b.txt` } })).status).toBe(201);
    const heard = await live.untilQuiet();
    await live.close();
    expect(heard.map((e) => [e.type, e.data.id, e.data.parentId])).toEqual([
      ['file.uploaded', byApi.id, shared.id],
      ['file.uploaded', byDav.id, shared.id],
      ['file.moved', byApi.id, null],
      ['file.moved', byDav.id, null],
    ]);
    const resumed = await open(member.client, from);
    expect(await resumed.untilQuiet()).toEqual(heard);
    await resumed.close();
  });

  test('an item moved out of the folder whose link it joined (by the API and by WebDAV) is a link.removed of its own: heard live as an unshare, replayed alike', async () => {
    const o = await seed.owner(t);
    const { files, linkId } = await joinedAlbum(o, ['a.jpg', 'b.jpg']);
    const [a, b] = files;
    const dav = await davLogin(t, o);
    const { heard, from } = await heardAndReplayed(o.client, async () => {
      expect((await o.client.post('/api/files/move', { ids: [a.id], parentId: null })).status).toBe(200);
      expect((await dav.request('MOVE', 'Album/b.jpg', { headers: { destination: `${t.url}/dav/b.jpg` } })).status).toBe(201);
    });
    expect(heard.map((e) => [e.type, e.data.id, e.data.shared])).toEqual([
      ['file.moved', a.id, undefined],
      ['file.shared', a.id, false],
      ['file.moved', b.id, undefined],
      ['file.shared', b.id, false],
    ]);
    expect(linkRemovals(o.id, from)).toEqual([
      [a.id, { linkId, joined: true }],
      [b.id, { linkId, joined: true }],
    ]);
  });

  test('an item that joined a folder’s link, restored from the trash to the top because the folder is in the trash too, leaves the link: a link.removed of its own, heard live as an unshare, replayed alike', async () => {
    const o = await seed.owner(t);
    const { album, files, linkId } = await joinedAlbum(o, ['a.jpg', 'b.jpg']);
    const [a, b] = files;
    expect((await o.client.post('/api/files/delete', { ids: [a.id] })).status).toBe(200);
    expect((await o.client.post('/api/files/delete', { ids: [album.id] })).status).toBe(200);
    const { heard, from } = await heardAndReplayed(o.client, async () => {
      expect((await o.client.post('/api/files/trash/restore', { ids: [a.id] })).status).toBe(200);
      expect((await o.client.post('/api/files/trash/restore', { ids: [album.id] })).status).toBe(200);
    });
    expect(heard.map((e) => [e.type, e.data.id, e.data.parentId ?? null, e.data.shared])).toEqual([
      ['file.restored', a.id, null, undefined],
      ['file.shared', a.id, null, false],
      ['file.restored', album.id, null, undefined],
    ]);
    expect(linkRemovals(o.id, from)).toEqual([[a.id, { linkId, joined: true }]]);
    const listed = async (query: string) =>
      (await (await o.client.get(`/api/files${query}`)).json()) as Array<{ id: string; shared: boolean }>;
    expect((await listed('')).find((i) => i.id === a.id)?.shared).toBe(false);
    expect((await listed(`?parentId=${album.id}`)).map((i) => [i.id, i.shared])).toEqual([[b.id, true]]);
  });

  test('an item that joined a folder’s link leaves it as a link.removed of its own when it is unshared and when the folder’s link is: heard live as an unshare, replayed alike', async () => {
    const o = await seed.owner(t);
    const { album, files, linkId } = await joinedAlbum(o, ['a.jpg', 'b.jpg']);
    const [a, b] = files;
    const { heard, from } = await heardAndReplayed(o.client, async () => {
      expect((await o.client.post('/api/files/share', { ids: [a.id], shared: false })).status).toBe(200);
      expect((await o.client.post('/api/files/share', { ids: [album.id], shared: false })).status).toBe(200);
    });
    expect(heard.map((e) => [e.type, e.data.id, e.data.shared])).toEqual([
      ['file.shared', a.id, false],
      ['file.shared', album.id, false],
      ['file.shared', b.id, false],
    ]);
    expect(linkRemovals(o.id, from)).toEqual([
      [a.id, { linkId, joined: true }],
      [album.id, { linkId }],
      [b.id, { linkId, joined: true }],
    ]);
  });

  test('a member hears live an item of the share deleted for good (from the trash, and by a WebDAV MOVE onto a file outside), as a resumed stream replays it', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Bin');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const binned = await upload(o.client, 'gone.txt', 'g', { parentId: shared.id });
    const moved = await upload(o.client, 'over.txt', 'o', { parentId: shared.id });
    await upload(o.client, 'target.txt', 't');
    const live = await open(member.client);
    const from = String(t.server.ctx.services.changes.latestSeq());
    expect((await o.client.post('/api/files/delete', { ids: [binned.id] })).status).toBe(200);
    expect((await o.client.post('/api/files/trash/delete', { ids: [binned.id] })).status).toBe(202);
    await t.server.worker.drain();
    const dav = await davLogin(t, o);
    const onto = await dav.request('MOVE', 'Bin/over.txt', { headers: { destination: `${t.url}/dav/target.txt`, overwrite: 'T' } });
    expect(onto.status).toBe(204);
    const heard = await live.untilQuiet();
    await live.close();
    expect(heard.map((e) => [e.type, e.data.id, e.data.parentId])).toEqual([
      ['file.deleted', binned.id, shared.id],
      ['file.permanently_deleted', binned.id, shared.id],
      ['file.permanently_deleted', moved.id, shared.id],
    ]);
    const resumed = await open(member.client, from);
    expect(await resumed.untilQuiet()).toEqual(heard);
    await resumed.close();
  });

  test('emptying the trash (by the API and by WebDAV) is heard live item by item by the owner and a member, as a resumed stream replays it; later ids are their own seqs', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Emptied');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const byApi = await upload(o.client, 'api.txt', 'a', { parentId: shared.id });
    const byDav = await upload(o.client, 'dav.txt', 'd', { parentId: shared.id });
    const owned = await open(o.client);
    const live = await open(member.client);
    const from = String(t.server.ctx.services.changes.latestSeq());
    expect((await o.client.post('/api/files/delete', { ids: [byApi.id] })).status).toBe(200);
    expect((await o.client.post('/api/files/trash/empty')).status).toBe(202);
    await t.server.worker.drain();
    expect((await o.client.post('/api/files/delete', { ids: [byDav.id] })).status).toBe(200);
    const dav = await davLogin(t, o);
    const emptied = await fetch(`${t.url}/remote.php/dav/trashbin/${o.id}/trash`, {
      method: 'DELETE',
      headers: { authorization: dav.authorization },
    });
    expect(emptied.status).toBe(204);
    const after = await folder(o.client, 'after');
    const heard = await live.untilQuiet();
    await live.close();
    expect(heard.map((e) => [e.type, e.data.id, e.data.parentId])).toEqual([
      ['file.deleted', byApi.id, shared.id],
      ['file.permanently_deleted', byApi.id, shared.id],
      ['file.deleted', byDav.id, shared.id],
      ['file.permanently_deleted', byDav.id, shared.id],
    ]);
    const resumed = await open(member.client, from);
    expect(await resumed.untilQuiet()).toEqual(heard);
    await resumed.close();
    // The owner hears the same (and the job's end); the folder made after it has its own seq as its id, not one held back.
    const own = await owned.untilQuiet();
    await owned.close();
    expect(own.filter((e) => e.id !== undefined)).toEqual([
      ...heard,
      { id: String(t.server.ctx.services.changes.latestSeq()), type: 'folder.created', data: expect.objectContaining({ id: after.id }) },
    ]);
  });

  test('a team folder made and renamed by the admin is heard live by a member of its group, as a resumed stream replays it', async () => {
    const member = await seed.owner(t);
    // Signed in again: the clock other tests moved ended the admin's first session.
    const admin = { client: await seed.login(t, adminEmail) };
    const group = await json(await admin.client.post('/api/admin/groups', { name: `Crew ${Math.random().toString(36).slice(2)}` }));
    expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: member.email })).status).toBe(201);
    const live = await open(member.client);
    const from = String(t.server.ctx.services.changes.latestSeq());
    const made = await admin.client.post('/api/admin/team-folders', {
      name: 'Crew files',
      groups: [{ groupId: group.id, role: 'editor' }],
    });
    expect(made.status).toBe(201);
    const team = await json(made);
    expect((await admin.client.send('PATCH', `/api/admin/team-folders/${team.id}`, { name: 'Crew docs' })).status).toBe(200);
    // The membership's own notice is not a change of the tree: a resumed stream has no such event.
    const heard = (await live.untilQuiet()).filter((e) => e.type !== 'notification');
    await live.close();
    expect(heard.map((e) => [e.type, e.data.id, e.data.name, e.data.oldName])).toEqual([
      ['folder.created', team.folderId, 'Crew files', undefined],
      ['file.renamed', team.folderId, 'Crew docs', 'Crew files'],
    ]);
    const resumed = await open(member.client, from);
    const replayed = await resumed.untilQuiet();
    await resumed.close();
    // The same events; live, the folder's creation has no id (the membership's change, recorded after it, holds none).
    const event = ({ type, data }: { type: unknown; data: unknown }) => ({ type, data });
    expect(replayed.map(event)).toEqual(heard.map(event));
    expect(replayed[1]!.id).toBe(heard[1]!.id);
  });

  test('an expired link removed by the daily clean-up is heard live as an unshare, by a member too, as a resumed stream replays it', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Linked');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    const file = await upload(o.client, 'short-lived.txt', 's', { parentId: shared.id });
    expect((await o.client.post('/api/files/share', { ids: [file.id], shared: true, expiry: '7d' })).status).toBe(200);
    clock.advance(38 * DAY);
    const [owner, viewer] = [await seed.login(t, o.email), await seed.login(t, member.email)];
    const owned = await open(owner);
    const live = await open(viewer);
    const from = String(t.server.ctx.services.changes.latestSeq());
    t.server.ctx.queue.enqueue(Jobs.sharesCleanup, null);
    await t.server.worker.drain();
    const heard = (await live.untilQuiet()).filter((e) => e.data?.id === file.id);
    await live.close();
    expect(heard.map((e) => [e.type, e.data.parentId, e.data.shared])).toEqual([['file.shared', shared.id, false]]);
    const resumed = await open(viewer, from);
    expect((await resumed.untilQuiet()).filter((e) => e.data?.id === file.id)).toEqual(heard);
    await resumed.close();
    expect((await owned.untilQuiet()).filter((e) => e.data?.id === file.id)).toEqual(heard);
    await owned.close();
  });

  test('an item that joined a folder’s expired link leaves it with the link at the daily clean-up: a link.removed of its own, heard live as an unshare, replayed alike', async () => {
    const o = await seed.owner(t);
    const { album, files, linkId } = await joinedAlbum(o, ['a.jpg'], '7d');
    const [a] = files;
    clock.advance(38 * DAY);
    const owner = await seed.login(t, o.email);
    const { heard, from } = await heardAndReplayed(
      owner,
      async () => {
        t.server.ctx.queue.enqueue(Jobs.sharesCleanup, null);
        await t.server.worker.drain();
      },
      (id) => id === album.id || id === a.id,
    );
    expect(heard.map((e) => [e.type, e.data.id, e.data.shared])).toEqual([
      ['file.shared', album.id, false],
      ['file.shared', a.id, false],
    ]);
    expect(linkRemovals(o.id, from)).toEqual([
      [album.id, { linkId, expired: true }],
      [a.id, { linkId, joined: true, expired: true }],
    ]);
  });

  test('while the admin has sharing with people off, a member hears nothing live of the share, as a resumed stream replays nothing', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Paused');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const settings = t.server.ctx.services.settings;
    settings.set('peopleSharing', false);
    try {
      const live = await open(member.client);
      const from = String(t.server.ctx.services.changes.latestSeq());
      const hidden = await upload(o.client, 'hidden.txt', 'h', { parentId: shared.id });
      await o.client.post('/api/files/rename', { id: hidden.id, name: 'still-hidden.txt' });
      expect(await live.untilQuiet()).toEqual([]);
      await live.close();
      expect(await (await open(member.client, from)).quietFor(300)).toBe(true);
    } finally {
      settings.set('peopleSharing', true);
    }
  });

  test('a member still in the share gets replayed only what is under it', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Team');
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    const from = String(t.server.ctx.services.changes.latestSeq());
    await upload(o.client, 'mine.txt', 'x');
    const inside = await upload(o.client, 'ours.txt', 'y', { parentId: shared.id });
    const reader = await open(member.client, from);
    expect((await reader.nextEvent()).data).toMatchObject({ type: 'file.uploaded', data: { id: inside.id, parentId: shared.id } });
    expect(await reader.quietFor(300)).toBe(true);
    await reader.close();
  });

  test("joining a parent's share link (link-parent-share) is a recorded change: a resumed stream replays the `file.shared` sent live", async () => {
    const o = await seed.owner(t);
    const album = await folder(o.client, 'Album');
    expect((await o.client.post('/api/files/share', { ids: [album.id], shared: true })).status).toBe(200);
    const photo = await upload(o.client, 'photo.jpg', 'jpeg-ish', { parentId: album.id });
    const live = await open(o.client);
    const from = String(t.server.ctx.services.changes.latestSeq());
    expect((await o.client.post('/api/files/link-parent-share', { ids: [photo.id] })).status).toBe(200);
    const heard = await live.untilQuiet();
    await live.close();
    expect(heard).toEqual([{ id: expect.any(String), type: 'file.shared', data: expect.objectContaining({ id: photo.id, shared: true }) }]);
    const resumed = await open(o.client, from);
    expect(await resumed.untilQuiet()).toEqual(heard);
    await resumed.close();
  });

  test("a change the CLI makes in its own process reaches the running server's streams within seconds, as a resume replays it", async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'Handout');
    const shared = await json(await o.client.post('/api/files/share', { ids: [dir.id], shared: true }));
    const token = /\/s\/([\w-]+)/.exec(shared.links[dir.id])![1]!;
    const live = await open(o.client);
    const from = String(t.server.ctx.services.changes.latestSeq());
    const revoked = await runCli(['shares', 'revoke', token, '--data-dir', t.dataDir]);
    expect(revoked.code).toBe(0);
    // Nothing else happens in this server meanwhile: only another process's commit can bring the event.
    const heard = await live.nextEvent(15_000);
    expect(heard.data).toMatchObject({ type: 'file.shared', data: { id: dir.id, shared: false, userId: o.id } });
    expect(Number(heard.id)).toBeGreaterThan(Number(from));
    // A change of the server's own after it is announced once, not again as another process's.
    const after = await folder(o.client, 'after');
    expect((await live.nextEvent()).data).toMatchObject({ type: 'folder.created', data: { id: after.id } });
    expect(await live.quietFor(2500)).toBe(true);
    await live.close();
    const resumed = await open(o.client, from);
    const replayed = await resumed.nextEvent();
    expect({ id: replayed.id, data: replayed.data }).toEqual({ id: heard.id, data: heard.data });
    await resumed.close();
  });

  test("a seq the server was handed in a transaction that rolled back is the CLI's change when the CLI commits it there: announced", async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'Handout');
    const shared = await json(await o.client.post('/api/files/share', { ids: [dir.id], shared: true }));
    const token = /\/s\/([\w-]+)/.exec(shared.links[dir.id])![1]!;
    const live = await open(o.client);
    const { changes } = t.server.ctx.services;
    const next = changes.latestSeq() + 1;
    const handedOut = () =>
      t.server.ctx.repos.transactions.immediate(() => {
        const seq = changes.record({ accountId: o.id, loginId: o.id }, ChangeKinds.created, {
          id: 'never',
          type: 'folder',
          name: 'never',
          parentId: null,
        });
        throw new Error(`rolled back ${seq}`);
      });
    expect(handedOut).toThrow(`rolled back ${next}`);
    expect((await runCli(['shares', 'revoke', token, '--data-dir', t.dataDir])).code).toBe(0);
    const heard = await live.nextEvent(15_000);
    expect(heard).toMatchObject({ id: String(next), data: { type: 'file.shared', data: { id: dir.id, shared: false } } });
    await live.close();
  });
});
