import type { AppContext } from '../context.ts';
import { idsBody, trashQuery } from '../contract/files.ts';
import { groupTeamFolderBody, teamFolderBody, teamFolderGroupsBody, teamFolderPatchBody } from '../contract/groups.ts';
import { linkListQuery, linkOptionsBody, shareBody } from '../contract/sharing.ts';
import { pageResponse } from './fields.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

/** Team folders: the admin makes them, gives groups their roles, sets their limits and deletes them; their administrators keep their trash and links. */
export function teamFolderRoutes(ctx: AppContext) {
  const { teamFolders } = ctx.services;
  return routes([
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
    route('POST /api/groups/:id/team-folders', {
      body: groupTeamFolderBody,
      handler: ({ principal, params, body, set }) => {
        const result = teamFolders.createForGroup(principal, params.id, body);
        set.status = 201;
        return result;
      },
    }),
    route('GET /api/team-folders', { handler: ({ principal }) => teamFolders.mine(principal) }),
    route('GET /api/team-folders/:id/trash', {
      query: trashQuery,
      handler: ({ principal, params, query, set }) => pageResponse(teamFolders.trashPage(principal, params.id, query), set),
    }),
    route('POST /api/team-folders/:id/trash/restore', {
      body: idsBody,
      handler: async ({ principal, params, body, set }) => {
        const plan = teamFolders.restore(principal, params.id, body.ids);
        if (plan.queued) {
          set.status = 202;
          return { message: 'Queued as a background job', queued: true, jobId: plan.jobId };
        }
        for (;;) {
          const step = await plan.run.next();
          if (step.done) return step.value;
        }
      },
    }),
    route('POST /api/team-folders/:id/trash/delete', {
      body: idsBody,
      handler: ({ principal, params, body, set }) => {
        set.status = 202;
        return teamFolders.deleteForever(principal, params.id, body.ids);
      },
    }),
    route('POST /api/team-folders/:id/share', {
      body: shareBody,
      handler: ({ principal, params, body, request }) => {
        const { ids, shared, expiry, expiresAt, ...options } = body;
        const until = expiresAt ? { at: Date.parse(expiresAt) } : expiry;
        return teamFolders.share(principal, params.id, { ids, shared, expiry: until, options, origin: requestMeta(request).origin });
      },
    }),
    route('POST /api/team-folders/:id/share/links', {
      body: idsBody,
      handler: ({ principal, params, body, request }) => teamFolders.links(principal, params.id, body.ids, requestMeta(request).origin),
    }),
    route('GET /api/team-folders/:id/share/links', {
      query: linkListQuery,
      handler: ({ principal, params, query, request }) => teamFolders.linkPage(principal, params.id, query, requestMeta(request).origin),
    }),
    route('PATCH /api/team-folders/:id/share/links/:token', {
      body: linkOptionsBody,
      handler: ({ principal, params, body, request }) =>
        teamFolders.updateLink(principal, params.id, params.token, body, requestMeta(request).origin),
    }),
    route('DELETE /api/team-folders/:id/share/links/:token', {
      handler: ({ principal, params }) => teamFolders.removeLink(principal, params.id, params.token),
    }),
    route('DELETE /api/admin/team-folders/:id', {
      handler: ({ principal, params, set }) => {
        set.status = 202;
        return teamFolders.remove(principal, params.id);
      },
    }),
  ]);
}
