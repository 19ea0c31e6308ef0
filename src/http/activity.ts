import { activityPeopleQuery, activityQuery } from '../contract/activity.ts';
import type { AppContext } from '../context.ts';
import { route, routes } from './route.ts';

/** GET /api/activity: who changed what, newest first, as the caller may see it; /people: who, for its filter (docs/activity.md). */
export function activityRoutes(ctx: AppContext) {
  return routes([
    route('GET /api/activity', { query: activityQuery, handler: ({ principal, query }) => ctx.services.activity.list(principal, query) }),
    route('GET /api/activity/people', {
      query: activityPeopleQuery,
      handler: ({ principal, query }) => ({ people: ctx.services.activity.people(principal, query.limit) }),
    }),
  ]);
}
