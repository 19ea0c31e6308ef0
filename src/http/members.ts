import type { AppContext } from '../context.ts';
import { memberBody, notificationsReadBody, peoplePageQuery, roleBody, suggestionQuery } from '../contract/sharing.ts';
import { route, routes } from './route.ts';

/** Sharing with people: an item's members, what is shared with the caller, and notifications. */
export function memberRoutes(ctx: AppContext) {
  const { members, notifications } = ctx.services;
  return routes([
    route('GET /api/files/shared-with-me', {
      query: peoplePageQuery,
      handler: ({ principal, query }) => members.sharedWithMe(principal, query),
    }),
    route('GET /api/people/suggestions', {
      query: suggestionQuery,
      handler: ({ principal, query }) => members.suggest(principal, query.q),
    }),
    route('GET /api/files/:id/members', { handler: ({ principal, params }) => members.list(principal, params.id) }),
    route('POST /api/files/:id/members', {
      body: memberBody,
      handler: ({ principal, params, body, set }) => {
        const result = members.add(principal, params.id, body);
        set.status = 201;
        return result;
      },
    }),
    route('PATCH /api/files/:id/members/:accountId', {
      body: roleBody,
      handler: ({ principal, params, body }) => members.setRole(principal, params.id, params.accountId, body.role),
    }),
    route('DELETE /api/files/:id/members/:accountId', {
      handler: ({ principal, params }) => members.remove(principal, params.id, params.accountId),
    }),
    route('GET /api/notifications', { query: peoplePageQuery, handler: ({ principal, query }) => notifications.list(principal, query) }),
    route('POST /api/notifications/read', {
      body: notificationsReadBody,
      handler: ({ principal, body }) => notifications.markRead(principal, body),
    }),
  ]);
}
