import { Elysia } from 'elysia';
import type { AppContext } from './context.ts';
import { ClientIpResolver } from './http/client-ip.ts';
import { corePlugin } from './http/plugins/core.ts';
import { createLimits } from './http/limits.ts';
import { authRoutes } from './http/auth.ts';
import { eventRoutes } from './http/events.ts';
import { fileRoutes } from './http/files.ts';
import { SseStreams, type SseOptions } from './events/sse.ts';
import { healthRoutes } from './http/health.ts';
import { versionRoutes } from './http/version.ts';
import { IpMatcher } from './lib/ip.ts';

export interface AppOptions {
  /** Known proxies as IPs/CIDRs (hostnames resolved by the caller), read once at start-up. */
  knownProxies?: string[];
  /** Event stream tuning (tests shorten the keepalive). */
  sse?: SseOptions;
}

/** Builds the HTTP app: the shared conventions, then one plugin per area. Never listens. */
export function createApp(ctx: AppContext, opts: AppOptions = {}) {
  const ipResolver = new ClientIpResolver(new IpMatcher(opts.knownProxies ?? []));
  const limits = createLimits(ctx.clock, ctx.config.generalRateLimit);
  return new Elysia()
    .use(corePlugin({ log: ctx.log, ipResolver }))
    .use(healthRoutes(ctx))
    .use(authRoutes(ctx, limits))
    .use(fileRoutes(ctx, limits))
    .use(eventRoutes(ctx, limits, new SseStreams(ctx.hub, opts.sse)))
    .use(versionRoutes(ctx, limits));
}

export type App = ReturnType<typeof createApp>;
