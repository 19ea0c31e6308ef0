import type { AppContext } from '../context.ts';
import { teamFolderBody, teamFolderGroupsBody, teamFolderPatchBody } from '../contract/groups.ts';
import { route, routes } from './route.ts';

/** Team folders: the admin makes them, gives groups their roles, sets their limits and deletes them. */
export function teamFolderRoutes(ctx: AppContext) {
  const { teamFolders } = ctx.services;
  return routes(ctx, 'http/team-folders', [
    route('GET /api/admin/team-folders', { handler: () => teamFolders.list() }),
    route('POST /api/admin/team-folders', {
      body: teamFolderBody,
      handler: ({ principal, body, set }) => {
        const result = teamFolders.create(principal, body);
        set.status = 201;
        return result;
      },
    }),
    route('PATCH /api/admin/team-folders/:id', {
      body: teamFolderPatchBody,
      handler: ({ principal, params, body }) => teamFolders.update(principal, params.id, body),
    }),
    route('PUT /api/admin/team-folders/:id/groups', {
      body: teamFolderGroupsBody,
      handler: ({ principal, params, body }) => teamFolders.setGroups(principal, params.id, body.groups),
    }),
    route('DELETE /api/admin/team-folders/:id', {
      handler: ({ principal, params, set }) => {
        set.status = 202;
        return teamFolders.remove(principal, params.id);
      },
    }),
  ]);
}
