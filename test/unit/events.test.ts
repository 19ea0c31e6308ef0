import { describe, expect, test } from 'bun:test';
import { EventHub, type HubEvent } from '../../src/events/hub.ts';
import { Presence } from '../../src/events/presence.ts';
import { SseStreams } from '../../src/events/sse.ts';
import { ManualClock } from '../../src/clock.ts';

describe('EventHub', () => {
  test("delivers to the account's subscribers only, and stops after unsubscribe", () => {
    const hub = new EventHub();
    const a: HubEvent[] = [];
    const b: HubEvent[] = [];
    const offA = hub.subscribe('acc-a', (e) => a.push(e));
    hub.subscribe('acc-b', (e) => b.push(e));
    hub.publish('acc-a', 'file.uploaded', { id: '1' });
    expect(a.map((e) => e.type)).toEqual(['file.uploaded']);
    expect(a[0]!.data).toEqual({ id: '1' });
    expect(Number.isNaN(Date.parse(a[0]!.timestamp))).toBe(false);
    expect(b).toEqual([]);
    offA();
    hub.publish('acc-a', 'file.deleted', { id: '1' });
    expect(a.length).toBe(1);
    expect(hub.subscriberCount('acc-a')).toBe(0);
  });

  test('a stream ends when its login is signed out elsewhere: at once through the hub, or at the next keepalive when the check says so', async () => {
    const hub = new EventHub();
    const streams = new SseStreams(hub, { keepaliveMs: 20 });
    const readAll = async (s: ReadableStream<Uint8Array>) => new TextDecoder().decode(await new Response(s).arrayBuffer());
    const first = streams.open('acc', 'login-1')!;
    const other = streams.open('acc', 'login-2')!;
    hub.endLogin('login-1');
    expect(await readAll(first)).toBe('data: {"type":"connected"}\n\n');
    expect(streams.openCount('login-1')).toBe(0);
    expect(streams.openCount('login-2')).toBe(1);
    let signedIn = true;
    const checked = streams.open('acc', 'login-3', undefined, () => signedIn)!.getReader();
    // Signed out only once a keepalive came (a fixed delay raced the keepalive timer on a loaded machine).
    let seen = '';
    while (!seen.includes(': keepalive')) {
      const { done, value } = await checked.read();
      expect(done).toBe(false);
      seen += new TextDecoder().decode(value);
    }
    signedIn = false;
    while (!(await checked.read()).done);
    expect(streams.openCount('login-3')).toBe(0);
    await other.cancel();
  });

  test('a throwing subscriber does not stop the others; close notifies streams', () => {
    const hub = new EventHub();
    let got = 0;
    let closed = false;
    hub.subscribe('x', () => {
      throw new Error('boom');
    });
    hub.subscribe('x', () => got++);
    hub.onClose(() => (closed = true));
    hub.publish('x', 't', {});
    expect(got).toBe(1);
    hub.close();
    expect(closed).toBe(true);
    expect(hub.subscriberCount('x')).toBe(0);
  });
});

describe('SseStreams', () => {
  test("an event is encoded once for all of its account's streams: every stream gets the same bytes", async () => {
    const hub = new EventHub();
    const streams = new SseStreams(hub);
    const readers = Array.from({ length: 3 }, (_, i) => streams.open('acc', `login-${i}`)!.getReader());
    for (const r of readers) await r.read();
    hub.publish('acc', 'file.uploaded', { id: '1' });
    const chunks = await Promise.all(readers.map(async (r) => (await r.read()).value!));
    expect(new TextDecoder().decode(chunks[0])).toStartWith('data: {"type":"file.uploaded"');
    expect(chunks[1]).toBe(chunks[0]!);
    expect(chunks[2]).toBe(chunks[0]!);
    await Promise.all(readers.map((r) => r.cancel()));
  });

  test('one timer keeps every stream alive; it stops with the last stream, and a failing sign-in check ends only its own stream', async () => {
    const hub = new EventHub();
    const streams = new SseStreams(hub, { keepaliveMs: 60 });
    const realSetInterval = globalThis.setInterval;
    let timers = 0;
    const counting = ((...args: Parameters<typeof setInterval>) => {
      timers++;
      return realSetInterval(...args);
    }) as typeof setInterval;
    globalThis.setInterval = counting;
    const { readers, broken } = (() => {
      try {
        return {
          readers: Array.from({ length: 50 }, (_, i) => streams.open('acc', `login-${i}`)!.getReader()),
          broken: streams.open('acc', 'broken', undefined, () => {
            throw new Error('database is locked');
          })!,
        };
      } finally {
        globalThis.setInterval = realSetInterval;
      }
    })();
    expect(timers).toBe(1);
    const text = async (r: (typeof readers)[number]) => new TextDecoder().decode((await r.read()).value);
    for (const r of readers) expect(await text(r)).toContain('connected');
    expect(new TextDecoder().decode(await new Response(broken).arrayBuffer())).toBe('data: {"type":"connected"}\n\n');
    for (const r of readers) expect(await text(r)).toBe(': keepalive\n\n');
    expect(streams.openCount('broken')).toBe(0);
    await Promise.all(readers.map((r) => r.cancel()));
    expect((streams as unknown as { ticker: unknown }).ticker).toBeNull();
  });
});

describe('Presence', () => {
  test('entries expire after the TTL; live() filters by a shorter window; sweep drops expired', () => {
    const clock = new ManualClock(0);
    const p = new Presence(clock, 5 * 60_000);
    p.beat('s1', { loginId: 'u1', sessionId: 's1', ip: '10.0.0.1' });
    clock.advance(60_000);
    p.beat('s2', { loginId: 'u2', sessionId: 's2', ip: '10.0.0.2' });
    clock.advance(150_000);
    expect(p.live(3 * 60_000).map(([k]) => k)).toEqual(['s2']);
    expect(p.get('s1')?.ip).toBe('10.0.0.1');
    clock.advance(100_000);
    expect(p.get('s1')).toBeUndefined();
    clock.advance(200_000);
    expect(p.sweep()).toBe(1);
    expect(p.size).toBe(0);
  });

  test("a repeated beat keeps firstSeen; removeWhere drops a login's entries", () => {
    const clock = new ManualClock(1000);
    const p = new Presence(clock, 60_000);
    p.beat('u1:c', { loginId: 'u1', sessionId: 's', ip: 'a' });
    clock.advance(10);
    const e = p.beat('u1:c', { loginId: 'u1', sessionId: 's', ip: 'b' });
    expect([e.firstSeen, e.lastSeen, e.ip]).toEqual([1000, 1010, 'b']);
    p.beat('u2:c', { loginId: 'u2', sessionId: 't', ip: 'c' });
    expect(p.removeWhere((x) => x.loginId === 'u1')).toBe(1);
    expect(p.size).toBe(1);
  });
});
