import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { EMAIL } from '../services/accounts.ts';
import { clearedTokenCookie, tokenCookie } from './cookies.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

// Shapes only: the password, name and email rules are the accounts service's.
const password = (field: string) => z.string({ error: `${field} is required` });
const signupBody = z.object({
  email: EMAIL,
  password: password('password'),
  name: z.string().optional(),
  setupCode: z.string().max(64, 'setupCode must be at most 64 characters').optional(),
});
const loginBody = z.object({ email: EMAIL, password: password('password'), mfaCode: z.string().max(16).optional() });
const changePasswordBody = z.object({
  oldPassword: z.string().min(1, 'Enter your current password').max(128),
  newPassword: password('newPassword'),
  // WebDAV devices keep working after a password change unless the user asks (issue 22).
  revokeAppPasswords: z.boolean().optional(),
});
const logoutAllBody = z.object({ revokeAppPasswords: z.boolean().optional() }).nullable();

function clientInfo(request: Request) {
  const meta = requestMeta(request);
  return { ip: meta.ip, userAgent: request.headers.get('user-agent') ?? '', requestId: meta.id };
}

/** Sign-up, sign-in, sign-out, password change and profile. */
export function accountRoutes(ctx: AppContext) {
  const { accounts } = ctx.services;
  return routes(ctx, 'http/accounts', [
    route('POST /api/signup', {
      body: signupBody,
      handler: async ({ body, request, set }) => {
        const { user, token } = await accounts.signup(body, clientInfo(request));
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
    route('GET /api/profile', { handler: ({ principal }) => accounts.profile(principal) }),
  ]);
}
