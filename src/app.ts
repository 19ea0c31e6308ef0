import { Elysia } from 'elysia';
import type { AppContext } from './context.ts';
import { ClientIpResolver } from './http/client-ip.ts';
import { corePlugin } from './http/plugins/core.ts';
import { healthRoutes } from './http/health.ts';
import { versionRoutes } from './http/version.ts';
import { IpMatcher } from './lib/ip.ts';

export interface AppOptions {
  /** Known proxies as IPs/CIDRs (hostnames resolved by the caller), read once at start-up. */
  knownProxies?: string[];
}

/** Builds the HTTP app: the shared conventions, then one plugin per area. Never listens. */
export function createApp(ctx: AppContext, opts: AppOptions = {}) {
  const ipResolver = new ClientIpResolver(new IpMatcher(opts.knownProxies ?? []));
  return new Elysia()
    .use(corePlugin({ log: ctx.log, ipResolver }))
    .use(healthRoutes(ctx))
    .use(versionRoutes(ctx));
}

export type App = ReturnType<typeof createApp>;
