import type { AppContext } from '../context.ts';
import { auditListQuery } from '../contract/admin.ts';
import { route, routes } from './route.ts';

/** The audit log for the admin (Admin → Audit log); `coffer audit list` reads the same events. */
export function auditRoutes(ctx: AppContext) {
  const { audit } = ctx.services;
  return routes([
    route('GET /api/admin/audit', {
      summary: 'The audit log, newest first: sign-ins, changes, file and share actions, denied requests',
      query: auditListQuery,
      handler: ({ query }) => audit.page(query),
    }),
  ]);
}
