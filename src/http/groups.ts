import type { AppContext } from '../context.ts';
import { groupAdminBody, groupBody, groupMemberBody, groupPatchBody, groupSearchQuery } from '../contract/groups.ts';
import { roleBody } from '../contract/sharing.ts';
import { route, routes } from './route.ts';

/** Groups: the admin's console, a group administrator's members, completion, and items shared with a group. */
export function groupRoutes(ctx: AppContext) {
  const { groups, members } = ctx.services;
  return routes([
    route('PATCH /api/files/:id/groups/:groupId', {
      body: roleBody,
      handler: ({ principal, params, body }) => members.setGroupRole(principal, params.id, params.groupId, body.role),
    }),
    route('DELETE /api/files/:id/groups/:groupId', {
      handler: ({ principal, params }) => members.removeGroup(principal, params.id, params.groupId),
    }),
    route('GET /api/groups', { query: groupSearchQuery, handler: ({ principal, query }) => groups.choices(principal.accountId, query.q) }),
    route('GET /api/groups/:id', { handler: ({ principal, params }) => groups.get({ principal }, params.id) }),
    route('POST /api/groups/:id/members', {
      body: groupMemberBody,
      handler: ({ principal, params, body, set }) => {
        const result = groups.addMember({ principal }, params.id, body.email, body.admin);
        set.status = 201;
        return result;
      },
    }),
    route('DELETE /api/groups/:id/members/:accountId', {
      handler: ({ principal, params }) => groups.removeMember({ principal }, params.id, params.accountId),
    }),
    route('GET /api/admin/groups', { handler: () => ({ groups: groups.list() }) }),
    route('POST /api/admin/groups', {
      body: groupBody,
      handler: ({ principal, body, set }) => {
        const result = groups.create({ principal }, body);
        set.status = 201;
        return result;
      },
    }),
    route('GET /api/admin/groups/:id', { handler: ({ principal, params }) => groups.get({ principal }, params.id) }),
    route('PATCH /api/admin/groups/:id', {
      body: groupPatchBody,
      handler: ({ principal, params, body }) => groups.update({ principal }, params.id, body),
    }),
    route('DELETE /api/admin/groups/:id', { handler: ({ principal, params }) => groups.remove({ principal }, params.id) }),
    route('POST /api/admin/groups/:id/members', {
      body: groupMemberBody,
      handler: ({ principal, params, body, set }) => {
        const result = groups.addMember({ principal }, params.id, body.email, body.admin);
        set.status = 201;
        return result;
      },
    }),
    route('PATCH /api/admin/groups/:id/members/:accountId', {
      body: groupAdminBody,
      handler: ({ principal, params, body }) => groups.setAdmin({ principal }, params.id, params.accountId, body.admin),
    }),
    route('DELETE /api/admin/groups/:id/members/:accountId', {
      handler: ({ principal, params }) => groups.removeMember({ principal }, params.id, params.accountId),
    }),
  ]);
}
