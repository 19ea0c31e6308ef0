import type { Session as SessionView } from '../../contract/accounts.ts';
import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { DatabaseRepo } from '../../db/repos/database.ts';
import type { AuthSession, Session, SessionsRepo } from '../../db/repos/sessions.ts';
import type { AuthUser, UsersRepo } from '../../db/repos/users.ts';
import { Messages, notFound, unauthorized } from '../../errors.ts';
import type { EventHub } from '../../events/hub.ts';
import type { Presence } from '../../events/presence.ts';
import { newId } from '../../lib/ids.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';
import { recordUnlessDiskRefuses } from '../files/disk-space.ts';
import { PageCache } from '../files/page-cache.ts';
import { parsePermissions, type Principal } from '../identity/principal.ts';
import { TOKEN_LIFETIME_MS, type TokenClaims, TokenSigner } from './tokens.ts';

const ONLINE_WINDOW_MS = 3 * 60_000;
const SESSION_LIST_CACHE_MS = 2 * 60_000;
const ACTIVITY_WRITE_INTERVAL_MS = 60_000;
const SESSION_MAX_AGE_MS = 30 * 24 * 3600_000;
/**
 * Sessions one login keeps: a sign-in past it ends the ones used longest ago (a script signing in at every run made
 * 100,000, whose list was a 22.8 MiB answer), and the list shows at most these.
 */
const MAX_SESSIONS_PER_LOGIN = 1000;

export interface RequestInfo {
  ip: string;
  userAgent: string;
  requestId?: string;
}

export interface SessionDeps {
  clock: Clock;
  retentionClock: Pick<Clock, 'now'>;
  presence: Presence;
  jwtSecret: Uint8Array;
  transactions: Transactions;
  users: UsersRepo;
  sessions: SessionsRepo;
  database: Pick<DatabaseRepo, 'authVersion'>;
  audit: AuditService;
  /** Ends the open event streams of a session that ends here (in this process; another's end at their next keepalive). */
  hub: Pick<EventHub, 'endLogin'>;
}

/** What authenticating a request reads: the login and its session, null where not found. */
interface SignedIn {
  row: AuthUser | null;
  session: AuthSession | null;
}

/** Sessions and their tokens: issue at sign-in, authenticate every request, list, heartbeat, revoke. */
export class SessionService {
  private readonly signer: TokenSigner;
  private readonly listCache = new Map<string, { at: number; rows: Session[] }>();
  /**
   * Sessions found by authenticate, by login and session id, kept while the auth generation (authGeneration's triggers) is
   * the one they were read at: any write to a login's identity, permissions, token version or state, or a
   * session's removal, by this process or another (the CLI), drops them all before the next request reads.
   */
  private readonly signedIn: PageCache<SignedIn>;

  constructor(private readonly d: SessionDeps) {
    // The generation is read at every request: a write by any service (a sub-user's permissions) or process reaches the next one.
    this.signedIn = new PageCache(
      d.database.authVersion,
      () => 1,
      (found) => found.row !== null && found.session !== null,
    );
    this.signer = new TokenSigner(d.jwtSecret);
  }

  /**
   * Creates a session row for a login and returns its token. `alongside` writes in the row's transaction, so a
   * sign-in whose other writes fail (a busy database's 503) leaves no session behind. `checkedAt` is the token
   * version the sign-in's credentials were checked at: a password change or sign-out everywhere since refuses it.
   */
  async start(
    loginId: string,
    info: RequestInfo,
    alongside?: () => void,
    checkedAt?: number,
  ): Promise<{ token: string; sessionId: string }> {
    const now = this.d.clock.now();
    const tokenVersion = checkedAt ?? this.d.users.tokenVersion(loginId);
    if (tokenVersion === null) throw unauthorized(Messages.invalidCredentials);
    const sessionId = newId();
    const token = await this.signer.sign({ sub: loginId, sid: sessionId, tv: tokenVersion }, now);
    const ended = this.d.transactions.immediate(() => {
      if (this.d.users.tokenVersion(loginId) !== tokenVersion) throw unauthorized(Messages.signInOvertaken);
      this.d.sessions.insert({
        id: sessionId,
        userId: loginId,
        tokenVersion,
        userAgent: info.userAgent.slice(0, 512),
        ipAddress: info.ip,
        createdAt: now,
        lastActivityAt: now,
      });
      alongside?.();
      return new Set(this.d.sessions.deleteBeyond(loginId, MAX_SESSIONS_PER_LOGIN));
    });
    if (ended.size > 0) {
      this.d.presence.removeWhere((e) => ended.has(e.sessionId));
      this.d.hub.endLogin(loginId, (s) => s !== null && ended.has(s));
    }
    this.listCache.delete(loginId);
    return { token, sessionId };
  }

  /**
   * Resolves a token to the acting principal, reading the login, its permissions and its session from
   * the database or from what an earlier request read while nothing they hold has changed since, so a revoked
   * session or a changed permission applies to the very next request.
   * Past half of the token's lifetime it also names the claims of a fresh one (sliding expiry; `reissue` signs them).
   * Synchronous: nearly every request has nothing to wait for here.
   */
  authenticate(
    token: string,
    info: { ip: string; requestId?: string },
  ): { principal: Principal; renewal: Omit<TokenClaims, 'iat'> | null } {
    const now = this.d.clock.now();
    const claims = this.signer.verify(token, now);
    if (!claims) throw unauthorized(Messages.invalidToken);
    const { row, session } = this.lookup(claims.sub, claims.sid);
    if (!row || !session) throw unauthorized(row && row.tokenVersion !== claims.tv ? Messages.sessionExpired : Messages.sessionRevoked);
    // Disabling revokes every session at once; this also refuses one a sign-in started while it happened.
    if (row.disabledAt !== null) throw unauthorized(Messages.sessionRevoked);
    if (row.tokenVersion !== claims.tv) throw unauthorized(Messages.sessionExpired);

    if (now - session.lastActivityAt > ACTIVITY_WRITE_INTERVAL_MS || session.ipAddress !== info.ip) {
      recordUnlessDiskRefuses(() => this.d.sessions.touch(claims.sid, now, info.ip));
      session.lastActivityAt = now;
      session.ipAddress = info.ip;
    }
    const isOwner = row.parentUserId === null;
    const principal: Principal = {
      loginId: row.id,
      accountId: row.parentUserId ?? row.id,
      sessionId: claims.sid,
      ip: info.ip,
      requestId: info.requestId,
      email: row.email,
      name: row.name,
      isOwner,
      isAdmin: row.isAdmin,
      permissions: isOwner ? new Set() : parsePermissions(row.permissions),
    };
    const renewal = now - claims.iat * 1000 > TOKEN_LIFETIME_MS / 2 ? { sub: row.id, sid: claims.sid, tv: row.tokenVersion } : null;
    return { principal, renewal };
  }

  /** A fresh token with the claims authenticate named for renewal. */
  reissue(renewal: Omit<TokenClaims, 'iat'>): Promise<string> {
    return this.signer.sign(renewal, this.d.clock.now());
  }

  /** Whether the session still stands (not revoked, its login neither removed nor disabled): long-lived streams ask. */
  isSignedIn(loginId: string, sessionId: string): boolean {
    const { row, session } = this.lookup(loginId, sessionId);
    return row !== null && session !== null && row.disabledAt === null;
  }

  /** The login and its session, from the cache while the auth generation stands, else from the database. */
  private lookup(loginId: string, sessionId: string): SignedIn {
    // Two primary-key lookups under one WAL read lock: the same lookups written as one LEFT JOIN cost several times more.
    return this.signedIn.get(`${loginId}\n${sessionId}`, () =>
      this.d.transactions.read(() => {
        const row = this.d.users.authUser(loginId);
        return { row, session: row ? this.d.sessions.authSession(sessionId, loginId) : null };
      }),
    );
  }

  /** Removes one session row of a login (logout, revoke); the token and the event streams it opened stop at once. */
  end(loginId: string, sessionId: string): boolean {
    this.listCache.delete(loginId);
    this.d.presence.remove(sessionId);
    const ended = this.d.sessions.delete(loginId, sessionId);
    // Its open event streams end now, not at their next keepalive.
    if (ended) this.d.hub.endLogin(loginId, (s) => s === sessionId);
    return ended;
  }

  /** Password change, logout-all, a removed sub-user: every token of the login is refused from now on. */
  invalidateAll(loginId: string): number {
    const changes = this.d.transactions.batch(() => {
      this.d.users.bumpTokenVersion(loginId, this.d.clock.now());
      return this.d.sessions.deleteAll(loginId);
    });
    this.forgetLogin(loginId);
    return changes;
  }

  /** A deleted login, or one signed out everywhere: its cached list, presence and open event streams go (its rows went with the user row). */
  forgetLogin(loginId: string): void {
    this.listCache.delete(loginId);
    this.d.presence.removeWhere((e) => e.loginId === loginId);
    this.d.hub.endLogin(loginId);
  }

  /** Sessions of the login other than the current one (MFA changes suggest signing them out). */
  othersCount(principal: Principal): number {
    return this.d.sessions.countOthers(principal.loginId, principal.sessionId);
  }

  list(principal: Principal, opts: { refresh: boolean }): { sessions: SessionView[] } {
    const now = this.d.clock.now();
    let cached = this.listCache.get(principal.loginId);
    if (opts.refresh || !cached || now - cached.at > SESSION_LIST_CACHE_MS || !cached.rows.some((r) => r.id === principal.sessionId)) {
      cached = { at: now, rows: this.d.sessions.list(principal.loginId, MAX_SESSIONS_PER_LOGIN) };
      this.listCache.set(principal.loginId, cached);
    }
    return {
      sessions: cached.rows.map((r) => {
        const beat = this.d.presence.get(r.id);
        const online = beat !== undefined && now - beat.lastSeen <= ONLINE_WINDOW_MS;
        return {
          id: r.id,
          user_id: r.userId,
          token_version: r.tokenVersion,
          user_agent: r.userAgent,
          ip_address: online ? beat!.ip : r.ipAddress,
          created_at: new Date(r.createdAt).toISOString(),
          last_activity: new Date(Math.max(r.lastActivityAt, beat?.lastSeen ?? 0)).toISOString(),
          is_online: online,
          isCurrent: r.id === principal.sessionId,
        };
      }),
    };
  }

  /** Browser presence: marks the current session online and records its address and activity. */
  heartbeat(principal: Principal, info: { ip: string }): void {
    this.d.presence.beat(principal.sessionId, { loginId: principal.loginId, sessionId: principal.sessionId, ip: info.ip });
    recordUnlessDiskRefuses(() => this.d.sessions.touch(principal.sessionId, this.d.clock.now(), info.ip));
  }

  offline(principal: Principal): void {
    this.d.presence.remove(principal.sessionId);
  }

  revoke(principal: Principal, sessionId: string): void {
    if (!this.end(principal.loginId, sessionId)) throw notFound(Messages.sessionNotFound);
    this.d.presence.removeWhere((e) => e.sessionId === sessionId);
    this.d.audit.record({ action: AuditActions.sessionRevoke, principal, targetType: 'session', targetId: sessionId });
  }

  revokeOthers(principal: Principal): number {
    const n = this.d.sessions.deleteOthers(principal.loginId, principal.sessionId);
    this.d.presence.removeWhere((e) => e.loginId === principal.loginId && e.sessionId !== principal.sessionId);
    this.d.hub.endLogin(principal.loginId, (s) => s !== principal.sessionId);
    this.listCache.delete(principal.loginId);
    this.d.audit.record({ action: AuditActions.sessionRevokeOthers, principal, targetType: 'session', details: { count: n } });
    return n;
  }

  /** Daily maintenance: session rows unused for 30 days go (their tokens expired long before). */
  purgeOld(): number {
    return this.d.sessions.deleteInactiveSince(this.d.retentionClock.now() - SESSION_MAX_AGE_MS);
  }
}
