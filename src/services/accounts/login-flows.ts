import type { Confirmation } from './identity-check.ts';
import type { Clock } from '../../clock.ts';
import type { LoginFlowView } from '../../contract/accounts.ts';
import { AppError, notFound } from '../../errors.ts';
import { newToken } from '../../lib/ids.ts';
import type { AppPasswordService } from './app-passwords.ts';
import { clientName } from './client-agent.ts';
import type { Principal } from '../identity/principal.ts';

const FLOW_TTL_MS = 20 * 60_000;
/** Flows waiting at once, whoever started them: memory stays bounded whatever the number of addresses. */
const MAX_PENDING = 10_000;

/** What a granted flow hands its client: the server address, the login name and a new app password. */
export interface LoginFlowCredentials {
  server: string;
  loginName: string;
  appPassword: string;
}

interface Flow {
  /** v2: the desktop client polls for the credentials; v1: the mobile app's web view is redirected to them. */
  kind: 'v1' | 'v2';
  clientName: string;
  server: string;
  createdAt: number;
  loginToken: string;
  pollToken: string | null;
  credentials: LoginFlowCredentials | null;
}

const flowGone = () => notFound('This sign-in request has expired or was already answered. Start the sign-in again from the app.');

/**
 * The Nextcloud clients' browser sign-in (login flows v1 and v2): a client starts a flow, its person signs
 * in to Coffer in a browser and grants access, and the client receives an app password named after it.
 * Pending flows live in memory for 20 minutes; a restart drops them and the client starts again.
 */
export class LoginFlowService {
  private readonly byLogin = new Map<string, Flow>();
  private readonly byPoll = new Map<string, Flow>();

  constructor(
    private readonly clock: Clock,
    private readonly appPasswords: AppPasswordService,
  ) {}

  /** A new flow for the client whose User-Agent this is, reached at `server`. */
  start(kind: 'v1' | 'v2', userAgent: string | null, server: string): { loginToken: string; pollToken: string | null } {
    this.sweep();
    if (this.byLogin.size >= MAX_PENDING) throw new AppError(503, 'Too many sign-ins are waiting right now. Try again in a few minutes.');
    const flow: Flow = {
      kind,
      clientName: clientName(userAgent),
      server,
      createdAt: this.clock.now(),
      loginToken: newToken(32),
      pollToken: kind === 'v2' ? newToken(32) : null,
      credentials: null,
    };
    this.byLogin.set(flow.loginToken, flow);
    if (flow.pollToken) this.byPoll.set(flow.pollToken, flow);
    return { loginToken: flow.loginToken, pollToken: flow.pollToken };
  }

  /** The consent page's question: which client asks. */
  view(loginToken: string): LoginFlowView {
    const flow = this.pending(loginToken);
    return { clientName: flow.clientName, kind: flow.kind };
  }

  /**
   * Access granted by the signed-in login: an app password named after the client. A v2 flow keeps it for
   * the client's next poll; a v1 flow answers the `nc://login/` address the mobile app's web view follows. The
   * login confirms it is itself as for any app password.
   */
  async grant(principal: Principal, loginToken: string, proof: Confirmation): Promise<{ redirect: string | null }> {
    const flow = this.pending(loginToken);
    const created = await this.appPasswords.create(principal, { name: flow.clientName, ...proof });
    this.byLogin.delete(loginToken);
    const credentials = { server: flow.server, loginName: principal.email, appPassword: created.password };
    if (flow.kind === 'v2') {
      flow.credentials = credentials;
      return { redirect: null };
    }
    const redirect = `nc://login/server:${credentials.server}&user:${encodeURIComponent(credentials.loginName)}&password:${encodeURIComponent(credentials.appPassword)}`;
    return { redirect };
  }

  /** Access refused: the flow ends and its client's polls stay unanswered until it gives up. */
  cancel(loginToken: string): void {
    const flow = this.pending(loginToken);
    this.byLogin.delete(loginToken);
    if (flow.pollToken) this.byPoll.delete(flow.pollToken);
  }

  /** The client's poll: the credentials once, after the grant; null before, after and for an unknown token. */
  poll(pollToken: string): LoginFlowCredentials | null {
    const flow = this.byPoll.get(pollToken);
    if (!flow || this.expired(flow)) return null;
    if (!flow.credentials) return null;
    this.byPoll.delete(pollToken);
    return flow.credentials;
  }

  private pending(loginToken: string): Flow {
    const flow = this.byLogin.get(loginToken);
    if (!flow || this.expired(flow)) throw flowGone();
    return flow;
  }

  private expired(flow: Flow): boolean {
    return this.clock.now() - flow.createdAt > FLOW_TTL_MS;
  }

  /** Flows are kept in the order they started, all with the same lifetime: the expired ones are the first. */
  private sweep(): void {
    for (const map of [this.byLogin, this.byPoll]) {
      for (const [token, flow] of map) {
        if (!this.expired(flow)) break;
        map.delete(token);
      }
    }
  }
}
