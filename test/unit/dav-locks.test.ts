import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../src/clock.ts';
import { DavLockService } from '../../src/services/dav-locks.ts';

const lockOn = (key: string, extra: Partial<Parameters<DavLockService['lock']>[0]> = {}) => ({
  accountId: 'a',
  loginId: 'l',
  key,
  href: `/dav${key}`,
  depth: 'infinity' as const,
  scope: 'exclusive' as const,
  ownerXml: '',
  timeoutSeconds: 60,
  ...extra,
});

describe('WebDAV locks', () => {
  test('Timeout: Second-N and Infinite are capped at a week; anything else is an hour', () => {
    expect(DavLockService.timeoutOf('Second-30')).toBe(30);
    expect(DavLockService.timeoutOf('Infinite, Second-4100000000')).toBe(7 * 24 * 3600);
    expect(DavLockService.timeoutOf('Second-99999999999')).toBe(3600);
    expect(DavLockService.timeoutOf(null)).toBe(3600);
    expect(DavLockService.timeoutOf('soon')).toBe(3600);
  });

  test('a lock lapses at its timeout and a refresh extends it', () => {
    const clock = new ManualClock(1_000_000);
    const locks = new DavLockService(clock);
    const lock = locks.lock(lockOn('/doc.txt'));
    clock.advance(59_000);
    expect(locks.covering('a', '/doc.txt').map((l) => l.token)).toEqual([lock.token]);
    locks.refresh(lock, 60);
    clock.advance(59_000);
    expect(locks.get(lock.token)).not.toBeNull();
    clock.advance(2_000);
    expect(locks.get(lock.token)).toBeNull();
    expect(locks.covering('a', '/doc.txt')).toEqual([]);
    // Once lapsed, the path can be locked again.
    expect(locks.lock(lockOn('/doc.txt')).token).not.toBe(lock.token);
  });

  test('depth infinity covers descendants, depth 0 only the resource; other accounts never meet them', () => {
    const locks = new DavLockService(new ManualClock());
    const deep = locks.lock(lockOn('/dir', { scope: 'shared' }));
    locks.lock(lockOn('/other', { depth: '0' }));
    expect(locks.covering('a', '/dir/sub/file').map((l) => l.token)).toEqual([deep.token]);
    expect(locks.covering('a', '/other/file')).toEqual([]);
    expect(locks.covering('b', '/dir/sub/file')).toEqual([]);
    expect(locks.affecting('a', '/dir').length).toBe(1);
    // A shared lock shares with another shared lock, not with an exclusive one, below or above.
    expect(() => locks.lock(lockOn('/dir', { scope: 'shared' }))).not.toThrow();
    expect(() => locks.lock(lockOn('/dir/sub/file', { depth: '0' }))).toThrow('locked');
    // The root's depth-infinity lock would take in /other's exclusive lock.
    expect(() => locks.lock(lockOn('', { scope: 'shared' }))).toThrow('locked');
    expect(() => locks.lock(lockOn('/dirt', { depth: '0' }))).not.toThrow();
    locks.forget('a', '/dir');
    expect(locks.covering('a', '/dir/sub/file')).toEqual([]);
    expect(locks.covering('a', '/dirt').length).toBe(1);
  });
});
