import type { ServerWebSocket } from 'bun';
import type { AppContext } from '../context.ts';
import { AppError, badRequest } from '../errors.ts';
import type { PushHub, PushLogin, PushSocket } from '../services/changes/desktop-push.ts';
import { passwordPrincipal } from './guard.ts';
import type { Limits } from './limits.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';
import { limitAddress } from '../lib/ip.ts';

/** notify_push's WebSocket path, and the pre_auth route the capabilities name. */
export const PUSH_SOCKET_PATH = '/push/ws';
export const PRE_AUTH_PATH = '/index.php/apps/notify_push/pre_auth';
/** The client has this long to send its two credential messages (notify_push's own limit). */
const AUTH_TIMEOUT_MS = 15_000;
const MAX_CREDENTIAL_CHARS = 1024;
/** Sockets from one address that have not signed in yet. */
const MAX_PENDING_PER_ADDRESS = 20;
/** The largest message a socket may send (Bun closes one that sends more). */
export const PUSH_MAX_MESSAGE_BYTES = 4 * MAX_CREDENTIAL_CHARS;

/** What a socket carries through Bun's handlers (Elysia's global websocket handler calls these). */
interface SocketData {
  open(ws: ServerWebSocket<SocketData>): void;
  message(ws: ServerWebSocket<SocketData>, message: string | Buffer): void;
  close(ws: ServerWebSocket<SocketData>): void;
  pong(ws: ServerWebSocket<SocketData>): void;
}

/**
 * notify_push (the Nextcloud desktop client's push): GET /push/ws upgrades to a WebSocket; the client
 * sends its login (email) then its app password, or an empty login and a pre_auth token, as two text
 * messages; the server answers `authenticated` (or `err: …` and closes) and then sends `notify_file` (or
 * `notify_file_id [ids]` once the client sent `listen notify_file_id`) and `notify_activity`.
 * Failed sign-ins count against the sign-in limiter as WebDAV's do.
 */
export function pushRoutes(ctx: AppContext, limits: Limits, hub: PushHub) {
  const socketOf = new WeakMap<ServerWebSocket<SocketData>, PushSocket>();
  const adapt = (ws: ServerWebSocket<SocketData>): PushSocket => {
    let socket = socketOf.get(ws);
    if (!socket) {
      socket = {
        send: (text) => ws.sendText(text),
        ping: () => void ws.ping(),
        close: (code, reason) => ws.close(code, reason),
        bufferedAmount: () => ws.getBufferedAmount(),
      };
      socketOf.set(ws, socket);
    }
    return socket;
  };

  const pending = new Map<string, number>();
  // Sockets still signing in are not the hub's yet: shutdown closes them here.
  const signingIn = new Set<ServerWebSocket<SocketData>>();
  ctx.hub.onClose(() => {
    for (const ws of signingIn) ws.close(1001, 'server shutting down');
    signingIn.clear();
  });
  const settle = (ip: string) => {
    const left = (pending.get(ip) ?? 1) - 1;
    if (left > 0) pending.set(ip, left);
    else pending.delete(ip);
  };

  function socketData(ip: string, client: string): SocketData {
    const said: string[] = [];
    let timer: ReturnType<typeof setTimeout> | null = null;
    let done = false;
    let waiting = true;
    let socket: ServerWebSocket<SocketData> | null = null;
    const signedInOrGone = () => {
      if (waiting) settle(client);
      waiting = false;
      if (socket) signingIn.delete(socket);
    };
    const fail = (ws: ServerWebSocket<SocketData>, message: string) => {
      signedInOrGone();
      done = true;
      ws.sendText(message);
      ws.close(1008, message.slice(0, 120));
    };
    const signIn = async (ws: ServerWebSocket<SocketData>) => {
      const [user, password] = said as [string, string];
      let login: PushLogin | null = hub.spendPreAuth(password);
      if (!login && user !== '') {
        try {
          const principal = await passwordPrincipal(ctx, limits, ip, user, password);
          login = {
            loginId: principal.loginId,
            accountId: principal.accountId,
            credential: ctx.services.appPasswords.credentialOf(principal),
          };
        } catch (err) {
          if (err instanceof AppError && err.status === 429) return fail(ws, 'err: too many failed sign-ins, try again later');
          if (!(err instanceof AppError)) throw err;
        }
      }
      if (!login) return fail(ws, 'err: Invalid credentials');
      if (ws.readyState !== WebSocket.OPEN) return;
      const refused = hub.add(adapt(ws), login);
      if (refused) return fail(ws, `err: ${refused}`);
      signedInOrGone();
      ws.sendText('authenticated');
    };
    return {
      open(ws) {
        socket = ws;
        if (waiting) signingIn.add(ws);
        timer = setTimeout(() => fail(ws, 'Authentication timeout'), AUTH_TIMEOUT_MS);
      },
      message(ws, message) {
        if (done) return;
        if (said.length >= 2) {
          // Signed in (or signing in): the hub reads `listen notify_file_id`.
          const socket = socketOf.get(ws);
          if (socket && typeof message === 'string') hub.message(socket, message);
          return;
        }
        const text = typeof message === 'string' ? message.trim() : '';
        if (typeof message !== 'string' || text.length > MAX_CREDENTIAL_CHARS)
          return fail(ws, 'err: the credentials are two short text messages');
        said.push(text);
        if (said.length < 2) return;
        if (timer) clearTimeout(timer);
        signIn(ws).catch((err) => {
          ctx.log.error('push sign-in failed', { err: String(err) });
          fail(ws, 'err: the server could not check the credentials');
        });
      },
      close(ws) {
        signedInOrGone();
        done = true;
        if (timer) clearTimeout(timer);
        const socket = socketOf.get(ws);
        if (socket) hub.remove(socket);
      },
      pong(ws) {
        const socket = socketOf.get(ws);
        if (socket) hub.pong(socket);
      },
    };
  }

  return routes([
    route(`GET ${PUSH_SOCKET_PATH}`, {
      handler: ({ request, server }) => {
        if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket')
          throw badRequest('This is the desktop push WebSocket: connect with a WebSocket client');
        const { ip } = requestMeta(request);
        // Counted per client as every per-address limit is: an IPv6 one by its /64.
        const client = limitAddress(ip);
        if ((pending.get(client) ?? 0) >= MAX_PENDING_PER_ADDRESS)
          throw new AppError(429, 'Too many push sockets from this address are still signing in; try again shortly');
        if (!server?.upgrade(request, { data: socketData(ip, client) })) throw badRequest('The WebSocket upgrade failed');
        pending.set(client, (pending.get(client) ?? 0) + 1);
        return undefined;
      },
    }),
    route(`POST ${PRE_AUTH_PATH}`, {
      handler: ({ request }) => {
        const principal = requestMeta(request).principal!;
        const login = {
          loginId: principal.loginId,
          accountId: principal.accountId,
          credential: ctx.services.appPasswords.credentialOf(principal),
        };
        return new Response(hub.issuePreAuth(login), {
          headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
        });
      },
    }),
  ]);
}
