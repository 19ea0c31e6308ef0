import type { AppContext } from '../context.ts';
import { appPasswordBody } from '../contract/accounts.ts';
import { route, routes } from './route.ts';

/**
 * App passwords (issue 22): per-device passwords for WebDAV, made and revoked by their own login; and
 * the account's WebDAV locks, which its owner sees and removes (a sub-user's lock included).
 */
export function appPasswordRoutes(ctx: AppContext) {
  const { appPasswords, dav } = ctx.services;
  return routes([
    route('GET /api/user/app-passwords', { handler: ({ principal }) => appPasswords.list(principal) }),
    route('POST /api/user/app-passwords', {
      body: appPasswordBody,
      handler: ({ principal, body, set }) => {
        set.status = 201;
        return appPasswords.create(principal, body);
      },
    }),
    route('DELETE /api/user/app-passwords/:id', { handler: ({ principal, params }) => appPasswords.revoke(principal, params.id) }),
    route('GET /api/user/dav-locks', {
      summary: "The account's WebDAV locks: {locks: [{token, path, login: {id, name, email}, scope, depth, expiresAt}]}",
      handler: ({ principal }) => dav.lockViews(principal),
    }),
    route('DELETE /api/user/dav-locks/:token', {
      summary: "Removes one of the account's WebDAV locks, whichever login took it",
      handler: ({ principal, params }) => dav.removeLock(principal, params.token),
    }),
  ]);
}
