import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { Messages, notFound, unauthorized } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { AuditActions, type AuditService } from './audit.ts';
import { isPermission, type Permission, type Principal } from './principal.ts';
import { TokenSigner, TOKEN_LIFETIME_MS } from './tokens.ts';

export const ONLINE_WINDOW_MS = 3 * 60_000;
const SESSION_LIST_CACHE_MS = 2 * 60_000;
const ACTIVITY_WRITE_INTERVAL_MS = 60_000;
export const SESSION_MAX_AGE_MS = 30 * 24 * 3600_000;

export interface RequestInfo {
  ip: string;
  userAgent: string;
}

interface AuthRow {
  id: string;
  email: string;
  name: string;
  is_admin: number;
  parent_user_id: string | null;
  permissions: string | null;
  token_version: number;
}

interface AuthSession {
  last_activity_at: number;
  ip_address: string;
}

export interface SessionView {
  id: string;
  user_id: string;
  token_version: number;
  user_agent: string;
  ip_address: string;
  created_at: string;
  last_activity: string;
  is_online: boolean;
  isCurrent: boolean;
}

interface SessionRow {
  id: string;
  user_id: string;
  token_version: number;
  user_agent: string;
  ip_address: string;
  created_at: number;
  last_activity_at: number;
}

export function parsePermissions(text: string | null): Set<Permission> {
  if (!text) return new Set();
  return new Set((JSON.parse(text) as string[]).filter(isPermission));
}

/** Sessions and their tokens: issue at sign-in, authenticate every request, list, heartbeat, revoke. */
export class SessionService {
  private readonly sqlite: Database;
  private readonly signer: TokenSigner;
  private readonly listCache = new Map<string, { at: number; rows: SessionRow[] }>();

  constructor(
    private readonly ctx: CoreContext,
    private readonly audit: AuditService,
  ) {
    this.sqlite = ctx.db.$client;
    this.signer = new TokenSigner(ctx.jwtSecret);
  }

  /** Creates a session row for a login and returns its token. */
  async start(loginId: string, info: RequestInfo): Promise<{ token: string; sessionId: string }> {
    const now = this.ctx.clock.now();
    const user = this.sqlite.query<{ token_version: number }, [string]>('SELECT token_version FROM users WHERE id = ?').get(loginId);
    if (!user) throw unauthorized(Messages.invalidCredentials);
    const sessionId = newId();
    this.sqlite
      .query(
        'INSERT INTO sessions (id, user_id, token_version, user_agent, ip_address, created_at, last_activity_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(sessionId, loginId, user.token_version, info.userAgent.slice(0, 512), info.ip, now, now);
    this.listCache.delete(loginId);
    const token = await this.signer.sign({ sub: loginId, sid: sessionId, tv: user.token_version }, now);
    return { token, sessionId };
  }

  /**
   * Resolves a token to the acting principal, reading the login, its permissions and its session from
   * the database, so a revoked session or a changed permission applies to the very next request.
   * Returns a fresh token when more than half of the old one's lifetime has passed (sliding expiry).
   */
  async authenticate(token: string, info: { ip: string }): Promise<{ principal: Principal; refreshedToken: string | null }> {
    const now = this.ctx.clock.now();
    const claims = await this.signer.verify(token, now);
    if (!claims) throw unauthorized(Messages.invalidToken);
    // Two primary-key lookups: the same lookups written as one LEFT JOIN cost several times more per request.
    const row = this.sqlite
      .query<AuthRow, [string]>('SELECT id, email, name, is_admin, parent_user_id, permissions, token_version FROM users WHERE id = ?')
      .get(claims.sub);
    const session = row
      ? this.sqlite
          .query<AuthSession, [string, string]>('SELECT last_activity_at, ip_address FROM sessions WHERE id = ? AND user_id = ?')
          .get(claims.sid, claims.sub)
      : null;
    if (!row || !session) throw unauthorized(row && row.token_version !== claims.tv ? Messages.sessionExpired : Messages.sessionRevoked);
    if (row.token_version !== claims.tv) throw unauthorized(Messages.sessionExpired);

    if (now - session.last_activity_at > ACTIVITY_WRITE_INTERVAL_MS || session.ip_address !== info.ip) {
      this.sqlite.query('UPDATE sessions SET last_activity_at = ?, ip_address = ? WHERE id = ?').run(now, info.ip, claims.sid);
    }
    const isOwner = row.parent_user_id === null;
    const principal: Principal = {
      loginId: row.id,
      accountId: row.parent_user_id ?? row.id,
      sessionId: claims.sid,
      ip: info.ip,
      email: row.email,
      name: row.name,
      isOwner,
      isAdmin: Boolean(row.is_admin),
      permissions: isOwner ? new Set() : parsePermissions(row.permissions),
    };
    const refreshedToken =
      now - claims.iat * 1000 > TOKEN_LIFETIME_MS / 2
        ? await this.signer.sign({ sub: row.id, sid: claims.sid, tv: row.token_version }, now)
        : null;
    return { principal, refreshedToken };
  }

  /** Removes one session row of a login (logout); the token stops working at once. */
  end(loginId: string, sessionId: string): boolean {
    this.listCache.delete(loginId);
    this.ctx.presence.remove(sessionId);
    return this.sqlite.query('DELETE FROM sessions WHERE id = ? AND user_id = ?').run(sessionId, loginId).changes > 0;
  }

  /** Password change, logout-all, a removed sub-user: every token of the login is refused from now on. */
  invalidateAll(loginId: string): number {
    const changes = this.sqlite.transaction(() => {
      this.sqlite
        .query('UPDATE users SET token_version = token_version + 1, updated_at = ? WHERE id = ?')
        .run(this.ctx.clock.now(), loginId);
      return this.sqlite.query('DELETE FROM sessions WHERE user_id = ?').run(loginId).changes;
    })();
    this.listCache.delete(loginId);
    this.ctx.presence.removeWhere((e) => e.loginId === loginId);
    return changes;
  }

  /** A deleted login: its cached list and presence go (its rows went with the user row). */
  forgetLogin(loginId: string): void {
    this.listCache.delete(loginId);
    this.ctx.presence.removeWhere((e) => e.loginId === loginId);
  }

  list(principal: Principal, opts: { refresh: boolean }): { sessions: SessionView[] } {
    const now = this.ctx.clock.now();
    let cached = this.listCache.get(principal.loginId);
    if (opts.refresh || !cached || now - cached.at > SESSION_LIST_CACHE_MS || !cached.rows.some((r) => r.id === principal.sessionId)) {
      const rows = this.sqlite
        .query<SessionRow, [string]>('SELECT * FROM sessions WHERE user_id = ? ORDER BY last_activity_at DESC, id')
        .all(principal.loginId);
      cached = { at: now, rows };
      this.listCache.set(principal.loginId, cached);
    }
    return {
      sessions: cached.rows.map((r) => {
        const beat = this.ctx.presence.get(r.id);
        const online = beat !== undefined && now - beat.lastSeen <= ONLINE_WINDOW_MS;
        return {
          id: r.id,
          user_id: r.user_id,
          token_version: r.token_version,
          user_agent: r.user_agent,
          ip_address: online ? beat!.ip : r.ip_address,
          created_at: new Date(r.created_at).toISOString(),
          last_activity: new Date(Math.max(r.last_activity_at, beat?.lastSeen ?? 0)).toISOString(),
          is_online: online,
          isCurrent: r.id === principal.sessionId,
        };
      }),
    };
  }

  /** Browser presence: marks the current session online and records its address and activity. */
  heartbeat(principal: Principal, info: { ip: string }): void {
    this.ctx.presence.beat(principal.sessionId, { loginId: principal.loginId, sessionId: principal.sessionId, ip: info.ip });
    this.sqlite
      .query('UPDATE sessions SET last_activity_at = ?, ip_address = ? WHERE id = ?')
      .run(this.ctx.clock.now(), info.ip, principal.sessionId);
  }

  offline(principal: Principal): void {
    this.ctx.presence.remove(principal.sessionId);
  }

  revoke(principal: Principal, sessionId: string): void {
    if (!this.end(principal.loginId, sessionId)) throw notFound(Messages.sessionNotFound);
    this.ctx.presence.removeWhere((e) => e.sessionId === sessionId);
    this.audit.record({ action: AuditActions.sessionRevoke, principal, targetType: 'session', targetId: sessionId });
  }

  revokeOthers(principal: Principal): number {
    const n = this.sqlite.query('DELETE FROM sessions WHERE user_id = ? AND id != ?').run(principal.loginId, principal.sessionId).changes;
    this.ctx.presence.removeWhere((e) => e.loginId === principal.loginId && e.sessionId !== principal.sessionId);
    this.listCache.delete(principal.loginId);
    this.audit.record({ action: AuditActions.sessionRevokeOthers, principal, targetType: 'session', details: { count: n } });
    return n;
  }

  /** Daily maintenance: session rows unused for 30 days go (their tokens expired long before). */
  purgeOld(): number {
    return this.sqlite.query('DELETE FROM sessions WHERE last_activity_at < ?').run(this.ctx.clock.now() - SESSION_MAX_AGE_MS).changes;
  }
}
