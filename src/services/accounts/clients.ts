import type { ActiveClient } from '../../contract/admin.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import type { Presence } from '../../events/presence.ts';
import { nextcloudAgent } from './client-agent.ts';
import type { Principal } from '../identity/principal.ts';
import type { SessionService } from './sessions.ts';

const ACTIVE_WINDOW_MS = 5 * 60_000;

/** Desktop clients: their heartbeats and the admin's list of those seen in the last 5 minutes. */
export class ClientService {
  constructor(
    private readonly users: UsersRepo,
    private readonly presence: Presence,
    private readonly sessions: SessionService,
  ) {}

  heartbeat(principal: Principal, input: { appVersion: string; platform?: string; clientId?: string }, ip: string): void {
    const key = `${principal.loginId}:${input.clientId || principal.sessionId}`;
    this.presence.beat(key, {
      loginId: principal.loginId,
      sessionId: principal.sessionId,
      ip,
      meta: { kind: 'desktop', appVersion: input.appVersion, platform: input.platform ?? '' },
    });
    this.sessions.heartbeat(principal, { ip });
  }

  /** A WebDAV or OCS request from a Nextcloud client counts as its heartbeat, one entry per app password. */
  seen(principal: Principal, userAgent: string | null, ip: string): void {
    const agent = nextcloudAgent(userAgent);
    if (!agent) return;
    this.presence.beat(`${principal.loginId}:${principal.sessionId}`, {
      loginId: principal.loginId,
      sessionId: principal.sessionId,
      ip,
      meta: { kind: 'desktop', appVersion: agent.appVersion, platform: agent.platform },
    });
  }

  active(): { clients: ActiveClient[] } {
    const entries = this.presence.live(ACTIVE_WINDOW_MS).filter(([, e]) => e.meta?.kind === 'desktop');
    const clients: ActiveClient[] = [];
    for (const [id, e] of entries) {
      const u = this.users.nameAndEmail(e.loginId);
      if (!u) continue;
      clients.push({
        id,
        userId: e.loginId,
        userName: u.name,
        userEmail: u.email,
        appVersion: e.meta!.appVersion ?? '',
        platform: e.meta!.platform ?? '',
        ipAddress: e.ip,
        lastSeenAt: new Date(e.lastSeen).toISOString(),
        connectedSince: new Date(e.firstSeen).toISOString(),
      });
    }
    clients.sort((a, b) => b.lastSeenAt.localeCompare(a.lastSeenAt));
    return { clients };
  }
}
