import type { AppContext } from '../context.ts';
import { changePasswordBody, LAST_EVENT_ID_PREFERENCE, loginBody, logoutAllBody, signupBody } from '../contract/accounts.ts';
import { acceptInvitationBody, invitationTokenBody } from '../contract/admin.ts';
import { clearedTokenCookie, tokenCookie } from './cookies.ts';
import { keptJson } from './fields.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

export function clientInfo(request: Request) {
  const meta = requestMeta(request);
  return { ip: meta.ip, userAgent: request.headers.get('user-agent') ?? '', requestId: meta.id };
}

/** Sign-up, invitations, sign-in, sign-out, password change and profile. */
export function accountRoutes(ctx: AppContext) {
  const { accounts, invitations } = ctx.services;
  return routes([
    route('POST /api/signup', {
      body: signupBody,
      handler: async ({ body, request, set }) => {
        const { user, token } = await accounts.signup(body, clientInfo(request));
        set.headers['set-cookie'] = tokenCookie(token, requestMeta(request).secure);
        return { user };
      },
    }),
    route('POST /api/invitations/view', { body: invitationTokenBody, handler: ({ body }) => invitations.view(body.token) }),
    route('POST /api/invitations/accept', {
      body: acceptInvitationBody,
      handler: async ({ body, request, set }) => {
        const { user, token } = await invitations.accept(body, clientInfo(request));
        set.status = 201;
        set.headers['set-cookie'] = tokenCookie(token, requestMeta(request).secure);
        return { user };
      },
    }),
    route('POST /api/login', {
      body: loginBody,
      handler: async ({ body, request, set }) => {
        const { user, token } = await accounts.login(body, clientInfo(request));
        set.headers['set-cookie'] = tokenCookie(token, requestMeta(request).secure);
        return { user };
      },
    }),
    route('POST /api/logout', {
      handler: ({ principal, request, set }) => {
        set.headers['set-cookie'] = clearedTokenCookie(requestMeta(request).secure);
        return accounts.logout(principal);
      },
    }),
    route('POST /api/logout-all', {
      body: logoutAllBody,
      handler: ({ principal, body, request, set }) => {
        set.headers['set-cookie'] = clearedTokenCookie(requestMeta(request).secure);
        return accounts.logoutAll(principal, body ?? {});
      },
    }),
    route('POST /api/change-password', {
      body: changePasswordBody,
      handler: async ({ principal, body, request, set }) => {
        const result = await accounts.changePassword(principal, body);
        set.headers['set-cookie'] = clearedTokenCookie(requestMeta(request).secure);
        return result;
      },
    }),
    route('GET /api/profile', {
      handler: ({ principal, request, set }) => {
        // Read only when asked, so the hot profile route pays no statement for it: a first event stream opened with it as
        // lastEventId replays the changes made after this read (docs/activity.md › Live streams that resume).
        if (request.headers.get('prefer')?.includes(LAST_EVENT_ID_PREFERENCE))
          set.headers['X-Last-Event-Id'] = ctx.services.changeEvents.position();
        return keptJson(accounts.profile(principal), set);
      },
    }),
  ]);
}
