import type { AppContext } from '../context.ts';
import { route, routes } from './route.ts';
import { IpMatcher } from '../lib/ip.ts';
import { PROMETHEUS_CONTENT_TYPE } from '../lib/metrics.ts';
import { requestMeta } from './request-meta.ts';

/**
 * GET /metrics for Prometheus, from METRICS_ALLOWED_IPS only (default loopback). The client address is
 * the one resolved through known proxies; behind an unknown proxy the proxy's own address is seen.
 */
export function metricsRoutes(ctx: AppContext) {
  const allowed = new IpMatcher(ctx.config.metricsAllowedIps);
  return routes([
    route('GET /metrics', {
      handler: ({ request, set }) => {
        if (!allowed.matches(requestMeta(request).ip)) {
          set.status = 403;
          set.headers['content-type'] = 'text/plain; charset=utf-8';
          return 'Forbidden';
        }
        set.headers['content-type'] = PROMETHEUS_CONTENT_TYPE;
        set.headers['cache-control'] = 'no-store';
        return ctx.services.metrics.render();
      },
    }),
  ]);
}
