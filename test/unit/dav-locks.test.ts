import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../src/clock.ts';
import { DavLockService, MAX_LOCK_OWNER_BYTES, MAX_LOCKS_PER_ACCOUNT, MAX_LOCKS_PER_PATH } from '../../src/services/dav/dav-locks.ts';

const lockOn = (key: string, extra: Partial<Parameters<DavLockService['lock']>[0]> = {}) => ({
  accountId: 'a',
  loginId: 'l',
  credential: 'app-password:p',
  key,
  href: `/dav${key}`,
  path: key,
  depth: 'infinity' as const,
  scope: 'exclusive' as const,
  ownerXml: '',
  ownerLang: null,
  timeoutSeconds: 60,
  share: null,
  ...extra,
});

describe('WebDAV locks', () => {
  test('Timeout: Second-N and Infinite are capped at a week; anything else reads as none (a new lock takes an hour, a refresh keeps its own)', () => {
    expect(DavLockService.timeoutOf('Second-30')).toBe(30);
    expect(DavLockService.timeoutOf('Infinite, Second-4100000000')).toBe(7 * 24 * 3600);
    expect(DavLockService.timeoutOf('Second-99999999999')).toBeNull();
    expect(DavLockService.timeoutOf(null)).toBeNull();
    expect(DavLockService.timeoutOf('soon')).toBeNull();
    expect(DavLockService.defaultSeconds).toBe(3600);
    const locks = new DavLockService(new ManualClock(1_000_000));
    const lock = locks.lock(lockOn('/doc.txt', { timeoutSeconds: 120 }));
    expect(locks.refresh(lock, DavLockService.timeoutOf('soon')).timeoutSeconds).toBe(120);
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

  test('an account holds at most MAX_LOCKS_PER_ACCOUNT locks, a path MAX_LOCKS_PER_PATH; an owner element over the limit is refused', () => {
    const clock = new ManualClock();
    const locks = new DavLockService(clock);
    const shared = { scope: 'shared' as const, depth: '0' as const };
    for (let i = 0; i < MAX_LOCKS_PER_PATH; i++) locks.lock(lockOn('/doc.txt', shared));
    expect(() => locks.lock(lockOn('/doc.txt', shared))).toThrow(`has ${MAX_LOCKS_PER_PATH} locks`);
    for (let i = MAX_LOCKS_PER_PATH; i < MAX_LOCKS_PER_ACCOUNT; i++) locks.lock(lockOn(`/f${i}`, shared));
    expect(() => locks.lock(lockOn('/one-more', shared))).toThrow(`holds ${MAX_LOCKS_PER_ACCOUNT} WebDAV locks`);
    // Another account has its own allowance; expired locks leave room.
    expect(() => locks.lock(lockOn('/one-more', { ...shared, accountId: 'b' }))).not.toThrow();
    clock.advance(61_000);
    expect(() => locks.lock(lockOn('/one-more', shared))).not.toThrow();
    expect(() => locks.lock(lockOn('/big', { ...shared, ownerXml: 'x'.repeat(MAX_LOCK_OWNER_BYTES + 1) }))).toThrow('owner element');
    expect(() => locks.lock(lockOn('/fits', { ...shared, ownerXml: 'x'.repeat(MAX_LOCK_OWNER_BYTES) }))).not.toThrow();
  });

  test("looking up a path's locks does not scan other accounts' locks", () => {
    const locks = new DavLockService(new ManualClock());
    for (let a = 0; a < 9; a++)
      for (let i = 0; i < MAX_LOCKS_PER_ACCOUNT; i++)
        locks.lock(lockOn(`/f${i}`, { accountId: `other-${a}`, scope: 'shared', depth: '0' }));
    locks.lock(lockOn('/dir', { depth: '0' }));
    // CPU time, not wall time: other load on the machine does not count.
    const started = process.cpuUsage();
    // 20,000 lookups, as 40 listings of 500 rows ask: a scan of the 9,000 other locks each would take seconds.
    let found = 0;
    for (let i = 0; i < 20_000; i++) found += locks.covering('a', `/dir/f${i}`).length;
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(1000);
    expect(found).toBe(0);
    expect(locks.covering('a', '/dir').length).toBe(1);
  });

  test('a login or a credential gone takes its locks with it; the account going takes all', () => {
    const locks = new DavLockService(new ManualClock());
    const shared = { scope: 'shared' as const, depth: '0' as const };
    const byPassword = locks.lock(lockOn('/a', { ...shared, loginId: 'sub', credential: 'app-password:1' }));
    const byOther = locks.lock(lockOn('/a', { ...shared, loginId: 'sub', credential: 'app-password:2' }));
    const owners = locks.lock(lockOn('/a', shared));
    locks.forgetCredential('a', 'app-password:1');
    expect(locks.get(byPassword.token)).toBeNull();
    expect(locks.get(byOther.token)).not.toBeNull();
    locks.forgetLogin('sub');
    expect(locks.ofAccount('a')).toEqual([owners]);
    locks.forgetAccount('a');
    expect(locks.ofAccount('a')).toEqual([]);
    const root = locks.lock(lockOn('', shared));
    expect(locks.covering('a', '')).toEqual([root]);
    expect(locks.covering('a', '/a')).toEqual([]);
  });

  test("a member's locks in a share go when that membership ends, or the member account does; nobody else's do", () => {
    const locks = new DavLockService(new ManualClock());
    const shared = { scope: 'shared' as const, depth: '0' as const };
    const inFamily = { accountId: 'owner', loginId: 'm', share: { rootId: 'family', memberAccountId: 'm' } };
    const family = locks.lock(lockOn('/family/a', { ...shared, ...inFamily }));
    const trips = locks.lock(lockOn('/trips/a', { ...shared, ...inFamily, share: { rootId: 'trips', memberAccountId: 'm' } }));
    const others = locks.lock(
      lockOn('/family/a', { ...shared, accountId: 'owner', loginId: 'x', share: { rootId: 'family', memberAccountId: 'x' } }),
    );
    const own = locks.lock(lockOn('/mine', { ...shared, accountId: 'm', loginId: 'm' }));
    locks.forgetShare('owner', 'family', 'm');
    expect(
      locks
        .ofAccount('owner')
        .map((l) => l.token)
        .sort(),
    ).toEqual([trips.token, others.token].sort());
    expect(locks.get(family.token)).toBeNull();
    locks.forgetMember('m');
    expect(locks.ofAccount('owner')).toEqual([others]);
    expect(locks.ofAccount('m')).toEqual([own]);
    locks.forgetLogin('x');
    expect(locks.ofAccount('owner')).toEqual([]);
  });
});
