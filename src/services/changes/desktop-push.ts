import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { ChangeRow, ChangesRepo } from '../../db/repos/changes.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import type { ChangeLog } from './change-log.ts';
import type { EventHub } from '../../events/hub.ts';

/** One desktop client's socket, as the push hub drives it. */
export interface PushSocket {
  /** Bun's answer: bytes sent, -1 when queued behind backpressure, 0 when dropped. */
  send(text: string): number;
  ping(): void;
  close(code: number, reason: string): void;
  bufferedAmount(): number;
}

/** Who a socket signed in as: the login, the account whose tree (and shares) it follows, and what it signed in with. */
export interface PushLogin {
  loginId: string;
  accountId: string;
  /** The app password (or account password) it signed in with: once that no longer stands, the socket is closed. */
  credential: string;
}

export interface PushOptions {
  /** How often the change log is looked at while sockets are open. */
  pollMs?: number;
  /** A ping this often; a socket that did not answer the previous one is closed. */
  pingMs?: number;
  /** Sockets per login (the desktop client opens one per account). */
  maxPerLogin?: number;
  /** Sockets in all. */
  maxSockets?: number;
  /** Bytes a socket may leave unread before it is dropped (it reconnects and syncs). */
  maxBuffered?: number;
}

interface Connection {
  socket: PushSocket;
  login: PushLogin;
  answeredPing: boolean;
  /** Asked for `notify_file_id` (it sent `listen notify_file_id`). */
  fileIds: boolean;
}

const PRE_AUTH_MS = 15_000;
const MAX_PRE_AUTH = 10_000;
const ROWS_PER_POLL = 1000;
const NOTIFY_FILE = 'notify_file';
const NOTIFY_ACTIVITY = 'notify_activity';
const LISTEN_FILE_ID = 'listen notify_file_id';
/** Ids in one notify_file_id; a poll with more changed files sends notify_file (the client then syncs it all). */
const MAX_FILE_IDS = 100;

/**
 * notify_push for the Nextcloud desktop client: sockets signed in with an app password (or a pre_auth
 * token) get `notify_file` when a change in the change log is one their account may see (the log's own
 * visibility rule), or `notify_file_id [fileids]` once they sent `listen notify_file_id`, and then
 * `notify_activity` (each such change is a line of its Activity), and `notify_file` when its rights change (the
 * ETags it sees move with them; nothing is logged). The log is read on a short poll while
 * sockets are open, so changes made by any process (the CLI too) reach them; a socket gets at most one
 * of each message per poll however many changes.
 */
export class PushHub {
  private readonly byAccount = new Map<string, Set<Connection>>();
  private readonly perLogin = new Map<string, number>();
  private readonly preAuth = new Map<string, PushLogin & { expires: number }>();
  private readonly connections = new Map<PushSocket, Connection>();
  private poller: ReturnType<typeof setInterval> | null = null;
  private pinger: ReturnType<typeof setInterval> | null = null;
  private seen = 0;
  private last: ChangeRow | null = null;
  private closed = false;
  readonly pollMs: number;
  readonly pingMs: number;
  readonly maxPerLogin: number;
  readonly maxSockets: number;
  readonly maxBuffered: number;

  constructor(
    private readonly d: {
      clock: Clock;
      changes: ChangeLog;
      repo: ChangesRepo;
      members: MembersRepo;
      items: Pick<ItemsRepo, 'seqsOf'>;
      hub: EventHub;
      /** Whether the login's credential still stands (not revoked, the login neither removed nor disabled). */
      signedIn: (login: PushLogin) => boolean;
    },
    opts: PushOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? 50;
    this.pingMs = opts.pingMs ?? 30_000;
    this.maxPerLogin = opts.maxPerLogin ?? 20;
    this.maxSockets = opts.maxSockets ?? 10_000;
    this.maxBuffered = opts.maxBuffered ?? 64 * 1024;
    d.hub.onClose(() => this.close());
    d.hub.onAccessChange((accountId) => this.accessChanged(accountId));
  }

  /** The account's rights changed, which moved its ETags but wrote nothing to the change log: its sockets are told at once. */
  private accessChanged(accountId: string): void {
    for (const c of [...(this.byAccount.get(accountId) ?? [])]) if (this.stillSignedIn(c)) this.deliver(c, NOTIFY_FILE);
  }

  /** A one-use token (valid 15 s) the client sends as its password instead of the app password. */
  issuePreAuth(login: PushLogin): string {
    const now = this.d.clock.now();
    for (const [token, entry] of this.preAuth) if (entry.expires <= now) this.preAuth.delete(token);
    if (this.preAuth.size >= MAX_PRE_AUTH) this.preAuth.delete(this.preAuth.keys().next().value!);
    const token = randomBytes(24).toString('base64url');
    this.preAuth.set(token, { ...login, expires: now + PRE_AUTH_MS });
    return token;
  }

  /**
   * The login a pre_auth token was issued to (spent by this call); null for any other string, and once what it
   * was issued for no longer stands (a sub-user deleted, an app password revoked meanwhile).
   */
  spendPreAuth(token: string): PushLogin | null {
    const entry = this.preAuth.get(token);
    if (!entry) return null;
    this.preAuth.delete(token);
    const { expires, ...login } = entry;
    return expires > this.d.clock.now() && this.d.signedIn(login) ? login : null;
  }

  /** Why a signed-in socket may not be added (a message the client shows), or null when it was added. */
  add(socket: PushSocket, login: PushLogin): string | null {
    if (this.closed) return 'the server is shutting down';
    if ((this.perLogin.get(login.loginId) ?? 0) >= this.maxPerLogin)
      return `too many push connections for this login (at most ${this.maxPerLogin})`;
    if (this.connections.size >= this.maxSockets) return 'too many push connections on this server';
    const connection: Connection = { socket, login, answeredPing: true, fileIds: false };
    this.connections.set(socket, connection);
    this.perLogin.set(login.loginId, (this.perLogin.get(login.loginId) ?? 0) + 1);
    let set = this.byAccount.get(login.accountId);
    if (!set) this.byAccount.set(login.accountId, (set = new Set()));
    set.add(connection);
    if (this.connections.size === 1) this.startTimers();
    return null;
  }

  /** Forgets a socket (closed by either side); harmless for one never added. */
  remove(socket: PushSocket): void {
    const connection = this.connections.get(socket);
    if (!connection) return;
    this.connections.delete(socket);
    const { loginId, accountId } = connection.login;
    const left = (this.perLogin.get(loginId) ?? 1) - 1;
    if (left > 0) this.perLogin.set(loginId, left);
    else this.perLogin.delete(loginId);
    const set = this.byAccount.get(accountId);
    set?.delete(connection);
    if (set?.size === 0) this.byAccount.delete(accountId);
    if (this.connections.size === 0) this.stopTimers();
  }

  /** A text message from a signed-in socket: `listen notify_file_id` asks for the changed files' ids; others are ignored, as notify_push does. */
  message(socket: PushSocket, text: string): void {
    const connection = this.connections.get(socket);
    if (connection && text.trim() === LISTEN_FILE_ID) connection.fileIds = true;
  }

  pong(socket: PushSocket): void {
    const connection = this.connections.get(socket);
    if (connection) connection.answeredPing = true;
  }

  openCount(): number {
    return this.connections.size;
  }

  private startTimers(): void {
    this.seen = this.d.changes.latestSeq();
    this.last = null;
    this.poller = setInterval(() => this.poll(), this.pollMs);
    this.pinger = setInterval(() => this.pingRound(), this.pingMs);
  }

  private stopTimers(): void {
    if (this.poller) clearInterval(this.poller);
    if (this.pinger) clearInterval(this.pinger);
    this.poller = this.pinger = null;
  }

  /** Reads the rows appended since the last look and tells each socket that may see one of them. */
  poll(): void {
    if (this.d.changes.latestSeq() === this.seen) return;
    // A log put back beneath the server numbers new changes at seqs already read: they are read from where it restarts.
    this.seen = this.d.changes.restartAfterRestore(this.seen, this.last) ?? this.seen;
    const rows = this.d.repo.pageAfter(this.seen, ROWS_PER_POLL);
    if (rows.length === 0) return;
    this.seen = rows.at(-1)!.seq;
    this.last = rows.at(-1)!;
    const told = new Map<Connection, Set<string>>();
    const tell = (c: Connection, itemId: string) => {
      let items = told.get(c);
      if (!items) told.set(c, (items = new Set()));
      if (c.fileIds && items.size <= MAX_FILE_IDS) items.add(itemId);
    };
    const membersOf = new Map<string, Set<string>>();
    for (const row of rows) {
      for (const c of this.byAccount.get(row.accountId) ?? []) tell(c, row.itemId);
      let members = membersOf.get(row.accountId);
      if (!members) membersOf.set(row.accountId, (members = new Set(this.d.members.ofOwner(row.accountId).map((m) => m.accountId))));
      for (const accountId of members) {
        const set = this.byAccount.get(accountId);
        // The rule is asked only while one of the account's sockets still has something to learn from the row.
        if (!set || [...set].every((c) => told.has(c) && !c.fileIds)) continue;
        if (this.d.changes.maySee({ accountId }, row)) for (const c of set) tell(c, row.itemId);
      }
    }
    const wanted = new Set<string>();
    for (const [c, items] of told) if (c.fileIds && items.size <= MAX_FILE_IDS) for (const id of items) wanted.add(id);
    const fileIds = this.d.items.seqsOf([...wanted]);
    for (const [c, items] of told) {
      if (!this.stillSignedIn(c)) continue;
      if (this.deliver(c, c.fileIds ? fileIdMessage(items, fileIds) : NOTIFY_FILE)) this.deliver(c, NOTIFY_ACTIVITY);
    }
  }

  /** Sends one message; false when the socket was too far behind and was dropped instead. */
  private deliver(c: Connection, text: string): boolean {
    if (c.socket.bufferedAmount() > this.maxBuffered || c.socket.send(text) === 0) {
      this.remove(c.socket);
      c.socket.close(1008, 'too slow to read push messages');
      return false;
    }
    return true;
  }

  /** False, and the socket closed, once what it signed in with no longer stands: it is told nothing more. */
  private stillSignedIn(c: Connection): boolean {
    if (this.d.signedIn(c.login)) return true;
    this.remove(c.socket);
    c.socket.close(1008, 'signed out: the app password was revoked, or the login removed or disabled');
    return false;
  }

  /** Closes the sockets that left the last ping unanswered or are signed out, and pings the others (every pingMs). */
  pingRound(): void {
    for (const c of [...this.connections.values()]) {
      if (!this.stillSignedIn(c)) continue;
      if (!c.answeredPing) {
        this.remove(c.socket);
        c.socket.close(1001, 'no answer to ping');
        continue;
      }
      c.answeredPing = false;
      c.socket.ping();
    }
  }

  /** Shutdown: every socket is closed and nothing new is accepted. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of [...this.connections.values()]) {
      this.remove(c.socket);
      c.socket.close(1001, 'server shutting down');
    }
    this.stopTimers();
  }
}

/** `notify_file_id [fileids]`, or `notify_file` when a file's id is no longer known (purged) or there are too many. */
function fileIdMessage(items: Set<string>, fileIds: Map<string, number>): string {
  if (items.size > MAX_FILE_IDS) return NOTIFY_FILE;
  const ids: number[] = [];
  for (const id of items) {
    const seq = fileIds.get(id);
    if (seq === undefined) return NOTIFY_FILE;
    ids.push(seq);
  }
  return `notify_file_id ${JSON.stringify(ids)}`;
}
