import { activityQuery } from '../contract/activity.ts';
import type { AppContext } from '../context.ts';
import { route, routes } from './route.ts';

/** GET /api/activity: who changed what, newest first, as the caller may see it (docs/activity.md). */
export function activityRoutes(ctx: AppContext) {
  return routes(ctx, 'http/activity', [
    route('GET /api/activity', { query: activityQuery, handler: ({ principal, query }) => ctx.services.activity.list(principal, query) }),
  ]);
}
