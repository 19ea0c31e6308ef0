import { listenFailure } from '../errors.ts';
import { isLoopback, localUrl } from '../lib/ip.ts';
import type { StandbyFollower, StandbyStatus } from '../services/maintenance/standby.ts';

export interface StandbyListener {
  url: string;
  port: number;
  stop(): Promise<void>;
}

const json = (status: number, body: unknown) => Response.json(body, { status, headers: { 'cache-control': 'no-store' } });

/**
 * Headers of a request that only came from loopback by way of something else: a reverse proxy on the machine
 * (which would pass anyone's request on) or a browser there (which any web page can make post to loopback).
 */
const RELAYED = ['forwarded', 'x-forwarded-for', 'x-real-ip', 'origin', 'sec-fetch-site'];

/**
 * What a standby answers: `/health` with how far behind it is, `POST /api/admin/promote` from loopback
 * (a command on the machine, as `coffer promote`; not a proxy's or a browser's request),
 * and 503 with the reason for everything else (its database is a copy in progress, never served).
 */
export function standbyListener(opts: {
  follower: Pick<StandbyFollower, 'status'>;
  host: string;
  port: number;
  promote: () => Promise<StandbyStatus>;
}): StandbyListener {
  let promoting: Promise<StandbyStatus> | null = null;
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: opts.host,
      port: opts.port,
      fetch: async (req, srv) => {
        const { pathname } = new URL(req.url);
        if (pathname === '/health' && (req.method === 'GET' || req.method === 'HEAD')) {
          return json(200, { status: 'standby', ...opts.follower.status() });
        }
        if (pathname === '/api/admin/promote' && req.method === 'POST') {
          const address = srv.requestIP(req)?.address ?? '';
          if (!isLoopback(address) || RELAYED.some((h) => req.headers.has(h)))
            return json(403, { error: 'promote a standby from the machine it runs on (loopback only, not through a proxy or a browser)' });
          promoting ??= opts.promote();
          try {
            return json(200, { promoted: true, ...(await promoting) });
          } catch (err) {
            promoting = null;
            return json(409, { error: `the standby could not be promoted: ${err instanceof Error ? err.message : String(err)}` });
          }
        }
        const { destination } = opts.follower.status();
        return json(503, {
          error: `this server is a standby following the replica at ${destination}: it serves nothing until it is promoted (coffer promote)`,
        });
      },
    });
  } catch (err) {
    throw listenFailure(err, opts.host, opts.port);
  }
  return { url: localUrl(opts.host, server.port!, false), port: server.port!, stop: () => server.stop(true) };
}
