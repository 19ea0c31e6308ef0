import type { AppContext } from '../context.ts';
import { route, routes } from './route.ts';

export function versionRoutes(ctx: AppContext) {
  return routes([
    route('GET /api/version', { handler: () => ctx.services.version.current() }),
    route('GET /api/version/latest', { handler: () => ctx.services.version.latest() }),
  ]);
}
