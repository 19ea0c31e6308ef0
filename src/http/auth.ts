import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { emailKey } from '../services/accounts.ts';
import { readJson } from './body.ts';
import { clearedTokenCookie, tokenCookie } from './cookies.ts';
import { enforceLimit, type Limits } from './limits.ts';
import { authPlugin } from './plugins/auth.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';

export const emailField = z.email({ message: 'Enter a valid email address' }).max(254, 'Email must be at most 254 characters');

const signupBody = z.object({
  email: emailField,
  password: z.string().min(6, 'Password must be at least 6 characters').max(128, 'Password must be at most 128 characters'),
  name: z.string().trim().max(100, 'Name must be at most 100 characters').optional(),
});

const loginBody = z.object({
  email: emailField,
  password: z.string().min(1, 'Enter your password').max(128, 'Password must be at most 128 characters'),
  mfaCode: z.string().max(16).optional(),
});

const changePasswordBody = z
  .object({
    oldPassword: z.string().min(1, 'Enter your current password').max(128),
    newPassword: z.string().min(6, 'Password must be at least 6 characters').max(128, 'Password must be at most 128 characters'),
  })
  .refine((b) => b.oldPassword !== b.newPassword, { path: ['newPassword'], message: 'The new password must differ from the current one' });

function clientInfo(request: Request) {
  return { ip: requestMeta(request).ip, userAgent: request.headers.get('user-agent') ?? '' };
}

/** Authentication limiter: 25 per 15 minutes per client IP and email. */
function limitSignIn(ctx: AppContext, limits: Limits, request: Request, body: unknown): void {
  const email = typeof (body as { email?: unknown })?.email === 'string' ? emailKey((body as { email: string }).email) : '';
  enforceLimit(limits.auth, `${requestMeta(request).ip}|${email}`, ctx.clock);
}

/** Sign-up, sign-in, sign-out, password change and profile. */
export function authRoutes(ctx: AppContext, limits: Limits) {
  const { accounts } = ctx.services;
  return new Elysia({ name: 'http/auth-routes', seed: ctx.instanceId })
    .use(authPlugin(ctx, limits))
    .post('/api/signup', async ({ request, set }) => {
      const raw = await readJson(request);
      limitSignIn(ctx, limits, request, raw);
      const { user, token } = await accounts.signup(validate(signupBody, raw), clientInfo(request));
      set.headers['set-cookie'] = tokenCookie(token, requestMeta(request).secure);
      return { user };
    })
    .post('/api/login', async ({ request, set }) => {
      const raw = await readJson(request);
      limitSignIn(ctx, limits, request, raw);
      const { user, token } = await accounts.login(validate(loginBody, raw), clientInfo(request));
      set.headers['set-cookie'] = tokenCookie(token, requestMeta(request).secure);
      return { user };
    })
    .post(
      '/api/logout',
      ({ principal, request, set }) => {
        set.headers['set-cookie'] = clearedTokenCookie(requestMeta(request).secure);
        return accounts.logout(principal);
      },
      { auth: true },
    )
    .post(
      '/api/logout-all',
      ({ principal, request, set }) => {
        set.headers['set-cookie'] = clearedTokenCookie(requestMeta(request).secure);
        return accounts.logoutAll(principal);
      },
      { auth: true },
    )
    .post(
      '/api/change-password',
      async ({ principal, request, set }) => {
        enforceLimit(limits.auth, `${requestMeta(request).ip}|${emailKey(principal.email)}`, ctx.clock);
        const result = await accounts.changePassword(principal, validate(changePasswordBody, await readJson(request)));
        set.headers['set-cookie'] = clearedTokenCookie(requestMeta(request).secure);
        return result;
      },
      { auth: { limit: false } },
    )
    .get('/api/profile', ({ principal }) => accounts.profile(principal), { auth: true })
    .get('/api/idp/enabled', () => ({ enabled: false }), { auth: true });
}
