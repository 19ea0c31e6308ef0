import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import { folder, SseReader, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { EventHub } from '../../../src/events/hub.ts';
import { SseStreams } from '../../../src/events/sse.ts';
import { eventually } from '../../helpers/eventually.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
});
afterAll(() => t.stop());

async function connect(client: TestClient): Promise<SseReader> {
  const res = await client.get('/api/files/events');
  expect(res.status).toBe(200);
  const reader = new SseReader(res);
  expect(await reader.nextData()).toEqual({ type: 'connected' });
  return reader;
}

describe('GET /api/files/events', () => {
  test('text/event-stream without buffering; `data:` lines only, {"type":"connected"} first', async () => {
    const o = await seed.owner(t);
    const res = await o.client.get('/api/files/events');
    expect(res.headers.get('content-type')).toStartWith('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    const reader = new SseReader(res);
    expect(await reader.next()).toMatch(/^data: \{"type":"connected"\}\nid: \d+$/);
    await reader.close();
    expect((await t.client().get('/api/files/events')).status).toBe(401);
  });

  test('an upload reaches every stream of the account (a second connection, a sub-user) and nothing reaches another account', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.upload']);
    const other = await seed.owner(t);
    const [first, second, subStream, stranger] = await Promise.all([
      connect(o.client),
      connect(o.client),
      connect(sub.client),
      connect(other.client),
    ]);
    const item = await upload(sub.client, 'live.txt', 'hello', { type: 'text/plain' });
    for (const reader of [first, second, subStream]) {
      const event = await reader.nextData();
      expect(event).toEqual({
        type: 'file.uploaded',
        timestamp: expect.any(String),
        data: { id: item.id, name: 'live.txt', type: 'file', parentId: null, userId: sub.id, size: 5, mimeType: 'text/plain' },
      });
    }
    expect(await stranger.quietFor(300)).toBe(true);
    await Promise.all([first, second, subStream, stranger].map((r) => r.close()));
  });

  test('every change publishes its event', async () => {
    const o = await seed.owner(t);
    const stream = await connect(o.client);
    const dir = await folder(o.client, 'box');
    expect(await stream.nextData()).toMatchObject({
      type: 'folder.created',
      data: { id: dir.id, name: 'box', type: 'folder', parentId: null, userId: o.id },
    });
    const file = await upload(o.client, 'a.txt', 'a');
    expect((await stream.nextData()).type).toBe('file.uploaded');
    await o.client.post('/api/files/rename', { id: file.id, name: 'b.txt' });
    expect(await stream.nextData()).toMatchObject({ type: 'file.renamed', data: { id: file.id, name: 'b.txt', oldName: 'a.txt' } });
    await o.client.post('/api/files/move', { ids: [file.id], parentId: dir.id });
    expect(await stream.nextData()).toMatchObject({ type: 'file.moved', data: { id: file.id, parentId: dir.id } });
    await o.client.post('/api/files/star', { ids: [file.id], starred: true });
    expect(await stream.nextData()).toMatchObject({ type: 'file.starred', data: { id: file.id, starred: true } });
    const form = new FormData();
    form.append('file', new File(['longer content'], 'ignored.txt'));
    await o.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form });
    expect(await stream.nextData()).toMatchObject({ type: 'file.updated', data: { id: file.id, size: 14 } });
    await o.client.post('/api/files/delete', { ids: [dir.id] });
    expect(await stream.nextData()).toMatchObject({ type: 'file.deleted', data: { id: dir.id } });
    await o.client.post('/api/files/trash/restore', { ids: [dir.id] });
    expect(await stream.nextData()).toMatchObject({ type: 'file.restored', data: { id: dir.id } });

    const { jobId } = await json(await o.client.post('/api/files/copy', { ids: [dir.id] }));
    await t.server.worker.drain();
    const copied = await stream.nextData();
    expect(copied).toMatchObject({ type: 'file.copied', data: { name: 'box (1)', type: 'folder', userId: o.id } });
    expect(await stream.nextData()).toEqual({
      type: 'file.copied',
      timestamp: expect.any(String),
      data: { userId: o.id, action: 'copy', count: 1, jobId },
    });

    await o.client.post('/api/files/delete', { ids: [dir.id] });
    await stream.nextData();
    await o.client.post('/api/files/trash/delete', { ids: [dir.id] });
    await t.server.worker.drain();
    expect(await stream.nextData()).toMatchObject({ type: 'file.permanently_deleted', data: { id: dir.id } });
    expect(await stream.nextData()).toMatchObject({ type: 'file.permanently_deleted', data: { userId: o.id, action: 'delete', count: 2 } });
    await stream.close();
  });

  test('the 21st stream of a login → 429; closing one frees its slot at once', async () => {
    const o = await seed.owner(t);
    const streams: SseReader[] = [];
    for (let i = 0; i < 20; i++) streams.push(await connect(o.client));
    const refused = await o.client.get('/api/files/events');
    expect(refused.status).toBe(429);
    expect(await json(refused)).toEqual(errors.tooManyRequests);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    // Another login of the same account has its own budget.
    const sub = await seed.subUser(t, o, []);
    const subStream = await connect(sub.client);
    expect(t.server.ctx.hub.subscriberCount(o.id)).toBe(21);
    await streams.pop()!.close();
    await eventually(() => t.server.ctx.hub.subscriberCount(o.id) <= 20, { intervalMs: 10 });
    expect(t.server.ctx.hub.subscriberCount(o.id)).toBe(20);
    streams.push(await connect(o.client));
    await Promise.all([...streams, subStream].map((s) => s.close()));
  });

  test('HEAD is answered at once with the stream headers and holds no stream: 25 of them leave every slot free', async () => {
    const o = await seed.owner(t);
    const heads = await Promise.all(
      Array.from({ length: 25 }, () => o.client.request('/api/files/events', { method: 'HEAD', signal: AbortSignal.timeout(5000) })),
    );
    expect(heads.map((r) => r.status)).toEqual(Array(25).fill(200));
    expect(heads[0]!.headers.get('content-type')).toStartWith('text/event-stream');
    expect(t.server.ctx.hub.subscriberCount(o.id)).toBe(0);
    const stream = await connect(o.client);
    await stream.close();
  });
});

describe('SseStreams', () => {
  const read = async (stream: ReadableStream<Uint8Array>) => new SseReader(new Response(stream));

  test('a stream ends at once, before any further event, when its session is revoked (alone or with the others) or its sub-user deleted; the current session’s stays', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, []);
    const laptop = await connect(sub.client);
    const phone = await seed.login(t, sub.email);
    const phoneStream = await connect(phone);
    const tablet = await seed.login(t, sub.email);
    const tabletStream = await connect(tablet);
    const ended = async (reader: SseReader) => {
      await upload(o.client, `after ${Math.random()}.txt`, 'x');
      await expect(reader.nextData(1000)).rejects.toThrow('SSE stream ended');
    };
    // The laptop revokes the phone's session: only the phone's stream ends.
    const { sessions } = await json(await sub.client.get('/api/sessions?refreshIp=true'));
    expect(sessions.filter((s: { isCurrent: boolean }) => !s.isCurrent)).toHaveLength(2);
    const phoneId = (await json(await phone.get('/api/sessions?refreshIp=true'))).sessions.find(
      (s: { isCurrent: boolean }) => s.isCurrent,
    ).id;
    expect((await sub.client.delete(`/api/sessions/${phoneId}`)).status).toBe(200);
    await ended(phoneStream);
    expect((await laptop.nextData()).type).toBe('file.uploaded');
    expect((await tabletStream.nextData()).type).toBe('file.uploaded');
    // "Sign out other sessions" ends the tablet's; the laptop's own goes on.
    expect((await sub.client.post('/api/sessions/revoke-others')).status).toBe(200);
    await ended(tabletStream);
    expect((await laptop.nextData()).type).toBe('file.uploaded');
    // The owner deletes the sub-user: its last stream ends too.
    expect((await o.client.delete(`/api/user/sub-users/${sub.id}`)).status).toBe(200);
    await ended(laptop);
  });

  test('signing out (POST /api/logout) ends that session’s streams at once, before any further event; another session’s stays', async () => {
    const o = await seed.owner(t);
    const other = await seed.login(t, o.email);
    const staying = await connect(other);
    const leaving = await connect(o.client);
    expect((await o.client.post('/api/logout')).status).toBe(200);
    await upload(other, `after logout ${Math.random()}.txt`, 'x');
    await expect(leaving.nextData(1000)).rejects.toThrow('SSE stream ended');
    expect((await staying.nextData()).type).toBe('file.uploaded');
    await staying.close();
  });

  test('a stream checked with the session service ends at its next keepalive once its session is gone or its login disabled, and not before', async () => {
    const o = await seed.owner(t);
    const { sessions } = t.server.ctx.services;
    const { repos } = t.server.ctx;
    const streams = new SseStreams(new EventHub(), { keepaliveMs: 30 });
    const openChecked = async () => {
      const { sessionId } = await sessions.start(o.id, { ip: '127.0.0.1', userAgent: 'test' });
      const reader = await read(streams.open(o.id, o.id, undefined, () => sessions.isSignedIn(o.id, sessionId))!);
      expect(await reader.next()).toBe('data: {"type":"connected"}');
      // Signed in: keepalives go on.
      expect(await reader.next(1000)).toBe(': keepalive');
      expect(await reader.next(1000)).toBe(': keepalive');
      return { reader, sessionId };
    };
    const revoked = await openChecked();
    // The session row removed behind the server's back (another process), so only the keepalive's check can see it.
    repos.sessions.delete(o.id, revoked.sessionId);
    await expect(revoked.reader.nextData(1000)).rejects.toThrow('SSE stream ended');

    const disabled = await openChecked();
    repos.users.setAccountDisabled(o.id, Date.now(), Date.now());
    await expect(disabled.reader.nextData(1000)).rejects.toThrow('SSE stream ended');
    expect(streams.openCount(o.id)).toBe(0);
  });

  test('sends a keepalive comment on its interval', async () => {
    const hub = new EventHub();
    const streams = new SseStreams(hub, { keepaliveMs: 30 });
    const reader = await read(streams.open('acc', 'login')!);
    expect(await reader.next()).toBe('data: {"type":"connected"}');
    expect(await reader.next(1000)).toBe(': keepalive');
    await reader.close();
    expect(streams.openCount('login')).toBe(0);
    expect(hub.subscriberCount('acc')).toBe(0);
  });

  test('a subscriber that falls too far behind is dropped; hub.close() ends every stream', async () => {
    const hub = new EventHub();
    const streams = new SseStreams(hub, { maxBuffered: 5 });
    const slow = streams.open('acc', 'slow')!;
    for (let i = 0; i < 10; i++) hub.publish('acc', 'file.uploaded', { i });
    expect(streams.openCount('slow')).toBe(0);
    expect(hub.subscriberCount('acc')).toBe(0);
    const text = await new Response(slow).text();
    expect(text.split('\n\n').filter(Boolean).length).toBeLessThanOrEqual(6);

    const live = await read(streams.open('acc', 'live')!);
    await live.next();
    hub.close();
    await expect(live.next(1000)).rejects.toThrow('SSE stream ended');
    expect(streams.openCount('live')).toBe(0);
  });
});
