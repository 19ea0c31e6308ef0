import { afterEach, describe, expect, test } from 'bun:test';
import { ManualClock } from '../../src/clock.ts';
import type { ChangeRow, ChangesRepo } from '../../src/db/repos/changes.ts';
import type { MembersRepo } from '../../src/db/repos/members.ts';
import { EventHub } from '../../src/events/hub.ts';
import type { ChangeLog } from '../../src/services/changes/change-log.ts';
import { PushHub, type PushSocket } from '../../src/services/changes/desktop-push.ts';

/** A socket that records what it was sent, with a settable backlog. */
class FakeSocket implements PushSocket {
  sent: string[] = [];
  pings = 0;
  closed: { code: number; reason: string } | null = null;
  backlog = 0;
  send(text: string) {
    this.sent.push(text);
    return text.length;
  }
  ping() {
    this.pings++;
  }
  close(code: number, reason: string) {
    this.closed = { code, reason };
  }
  bufferedAmount() {
    return this.backlog;
  }
}

const row = (seq: number, accountId: string): ChangeRow =>
  ({ seq, accountId, itemId: `item-${seq}`, parentBefore: null, parentAfter: null }) as unknown as ChangeRow;

let hubs: PushHub[] = [];
afterEach(() => {
  for (const h of hubs) h.close();
  hubs = [];
});

/** A push hub over a log held in memory: `rows` are the log, `shared` the accounts each owner shares with. */
function setup(opts: ConstructorParameters<typeof PushHub>[1] = {}) {
  const rows: ChangeRow[] = [];
  const shared = new Map<string, string[]>();
  const purged = new Set<string>();
  /** Rows the rule hides from members (as one outside the shared folder). */
  const hidden = new Set<number>();
  /** Credentials revoked since their sockets signed in. */
  const revoked = new Set<string>();
  const clock = new ManualClock(1_000_000);
  const events = new EventHub();
  const push = new PushHub(
    {
      clock,
      changes: {
        latestSeq: () => rows.at(-1)?.seq ?? 0,
        restartAfterRestore: () => null,
        maySee: (reader: { accountId: string }, r: ChangeRow) =>
          r.accountId === reader.accountId || (!hidden.has(r.seq) && (shared.get(r.accountId) ?? []).includes(reader.accountId)),
      } as unknown as ChangeLog,
      repo: { pageAfter: (after: number, limit: number) => rows.filter((r) => r.seq > after).slice(0, limit) } as unknown as ChangesRepo,
      members: {
        ofOwner: (owner: string) => (shared.get(owner) ?? []).map((accountId) => ({ itemId: 'x', accountId })),
      } as unknown as MembersRepo,
      items: { seqsOf: (ids: string[]) => new Map(ids.filter((id) => !purged.has(id)).map((id) => [id, Number(id.slice(5))])) },
      hub: events,
      signedIn: (login) => !revoked.has(login.credential),
    },
    { pollMs: 60_000, pingMs: 60_000, ...opts },
  );
  hubs.push(push);
  return { push, rows, shared, purged, hidden, revoked, clock, events };
}

describe('PushHub', () => {
  test('one notify_file and one notify_activity per poll to the account and to members the rule lets see the row; nothing to others', () => {
    const { push, rows, shared } = setup();
    const owner = new FakeSocket();
    const member = new FakeSocket();
    const other = new FakeSocket();
    expect(push.add(owner, { loginId: 'l1', accountId: 'a', credential: 'app-password:l1' })).toBeNull();
    expect(push.add(member, { loginId: 'l2', accountId: 'm', credential: 'app-password:l2' })).toBeNull();
    expect(push.add(other, { loginId: 'l3', accountId: 'o', credential: 'app-password:l3' })).toBeNull();
    rows.push(row(1, 'a'), row(2, 'a'), row(3, 'a'));
    push.poll();
    expect([owner.sent, member.sent, other.sent]).toEqual([['notify_file', 'notify_activity'], [], []]);
    shared.set('a', ['m']);
    rows.push(row(4, 'a'));
    push.poll();
    expect([owner.sent.length, member.sent, other.sent]).toEqual([4, ['notify_file', 'notify_activity'], []]);
    // Nothing new: nothing sent.
    push.poll();
    expect(owner.sent.length).toBe(4);
  });

  test('after `listen notify_file_id`: the fileids of the files it may see changed, once each; notify_file when one was purged or there are too many', () => {
    const { push, rows, shared, purged, hidden } = setup();
    const owner = new FakeSocket();
    const member = new FakeSocket();
    const plain = new FakeSocket();
    push.add(owner, { loginId: 'l1', accountId: 'a', credential: 'app-password:l1' });
    push.add(member, { loginId: 'l2', accountId: 'm', credential: 'app-password:l2' });
    push.add(plain, { loginId: 'l3', accountId: 'a', credential: 'app-password:l3' });
    push.message(owner, 'listen notify_file_id');
    push.message(member, ' listen notify_file_id\n');
    push.message(plain, 'listen something else');
    shared.set('a', ['m']);
    hidden.add(3);
    const base = { parentBefore: null, parentAfter: null };
    rows.push({ ...row(1, 'a'), ...base }, { ...row(2, 'a'), itemId: 'item-1' } as ChangeRow, { ...row(3, 'a'), accountId: 'a' }, {
      ...row(4, 'm'),
      itemId: 'item-40',
    } as ChangeRow);
    push.poll();
    expect(owner.sent).toEqual(['notify_file_id [1,3]', 'notify_activity']);
    expect(member.sent).toEqual(['notify_file_id [1,40]', 'notify_activity']);
    expect(plain.sent).toEqual(['notify_file', 'notify_activity']);

    purged.add('item-5');
    rows.push(row(5, 'a'), row(6, 'a'));
    push.poll();
    expect(owner.sent.slice(2)).toEqual(['notify_file', 'notify_activity']);

    for (let i = 7; i < 7 + 101; i++) rows.push(row(i, 'a'));
    push.poll();
    expect(owner.sent.slice(4)).toEqual(['notify_file', 'notify_activity']);
    rows.push(row(200, 'a'));
    push.poll();
    expect(owner.sent.slice(6)).toEqual(['notify_file_id [200]', 'notify_activity']);
  });

  test('a slow reader is dropped; a socket that misses a ping is closed; caps per login and in all', () => {
    const { push, rows } = setup({ maxPerLogin: 2, maxSockets: 3, maxBuffered: 100 });
    const slow = new FakeSocket();
    const fine = new FakeSocket();
    push.add(slow, { loginId: 'l1', accountId: 'a', credential: 'app-password:l1' });
    push.add(fine, { loginId: 'l1', accountId: 'a', credential: 'app-password:l1' });
    expect(push.add(new FakeSocket(), { loginId: 'l1', accountId: 'a', credential: 'app-password:l1' })).toContain(
      'too many push connections for this login',
    );
    slow.backlog = 101;
    rows.push(row(1, 'a'));
    push.poll();
    expect(slow.closed?.code).toBe(1008);
    expect(fine.sent).toEqual(['notify_file', 'notify_activity']);
    expect(slow.sent).toEqual([]);
    expect(push.openCount()).toBe(1);
    push.add(new FakeSocket(), { loginId: 'l2', accountId: 'b', credential: 'app-password:l2' });
    push.add(new FakeSocket(), { loginId: 'l3', accountId: 'c', credential: 'app-password:l3' });
    expect(push.add(new FakeSocket(), { loginId: 'l4', accountId: 'd', credential: 'app-password:l4' })).toContain(
      'too many push connections on this server',
    );

    // Pings: one that is answered keeps the socket; one that is not closes it at the next.
    push.pingRound();
    expect(fine.pings).toBe(1);
    push.pong(fine);
    push.pingRound();
    expect([fine.pings, fine.closed]).toEqual([2, null]);
    push.pingRound();
    expect(fine.closed?.reason).toBe('no answer to ping');
    expect(push.openCount()).toBe(0);
  });

  test('a socket whose credential was revoked is told nothing more and closed, at the next change or the next ping round', () => {
    const { push, rows, revoked } = setup();
    const kept = new FakeSocket();
    const gone = new FakeSocket();
    const idle = new FakeSocket();
    push.add(kept, { loginId: 'l1', accountId: 'a', credential: 'app-password:kept' });
    push.add(gone, { loginId: 'l1', accountId: 'a', credential: 'app-password:gone' });
    push.add(idle, { loginId: 'l2', accountId: 'b', credential: 'app-password:idle' });
    revoked.add('app-password:gone');
    rows.push(row(1, 'a'));
    push.poll();
    expect(kept.sent).toEqual(['notify_file', 'notify_activity']);
    expect(gone.sent).toEqual([]);
    expect(gone.closed?.code).toBe(1008);
    expect(push.openCount()).toBe(2);
    revoked.add('app-password:idle');
    push.pingRound();
    expect(idle.closed?.code).toBe(1008);
    expect(idle.sent).toEqual([]);
    expect(kept.closed).toBeNull();
    expect(push.openCount()).toBe(1);
  });

  test('pre_auth tokens are spent once and expire after 15 s; closing the event hub closes every socket', () => {
    const { push, clock, events } = setup();
    const login = { loginId: 'l1', accountId: 'a', credential: 'app-password:l1' };
    const token = push.issuePreAuth(login);
    expect(push.spendPreAuth(token)).toEqual(login);
    expect(push.spendPreAuth(token)).toBeNull();
    const late = push.issuePreAuth(login);
    clock.advance(15_001);
    expect(push.spendPreAuth(late)).toBeNull();
    expect(push.spendPreAuth('made up')).toBeNull();

    const socket = new FakeSocket();
    push.add(socket, login);
    events.close();
    expect(socket.closed).toEqual({ code: 1001, reason: 'server shutting down' });
    expect(push.add(new FakeSocket(), login)).toBe('the server is shutting down');
  });
});
