import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { EMAIL } from '../services/accounts/email.ts';
import { readJson } from './body.ts';
import { clearedTokenCookie, tokenCookie } from './cookies.ts';
import { sessionPlugin } from './guard.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';
import { assertionBody } from './passkey-schemas.ts';
import { describeInput } from './openapi.ts';

// Shapes only: the password, name and email rules are the accounts service's.
const password = (field: string) => z.string({ error: `${field} is required` });
const signupBody = z.object({
  email: EMAIL,
  password: password('password'),
  name: z.string().optional(),
  setupCode: z.string().max(64, 'setupCode must be at most 64 characters').optional(),
});
const loginBody = z.object({
  email: EMAIL,
  password: password('password'),
  mfaCode: z.string().max(16).optional(),
  // With two-factor on: a passkey's answer in place of the code.
  passkey: assertionBody.optional(),
});
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
  return new Elysia({ name: 'http/accounts', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .post(
      '/api/signup',
      async ({ request, set }) => {
        const raw = await readJson(request);
        const { user, token } = await accounts.signup(validate(signupBody, raw), clientInfo(request));
        set.headers['set-cookie'] = tokenCookie(token, requestMeta(request).secure);
        return { user };
      },
      { detail: describeInput({ body: signupBody }) },
    )
    .post(
      '/api/login',
      async ({ request, set }) => {
        const raw = await readJson(request);
        const { user, token } = await accounts.login(validate(loginBody, raw), clientInfo(request));
        set.headers['set-cookie'] = tokenCookie(token, requestMeta(request).secure);
        return { user };
      },
      { detail: describeInput({ body: loginBody }) },
    )
    .post(
      '/api/logout',
      ({ principal, request, set }) => {
        set.headers['set-cookie'] = clearedTokenCookie(requestMeta(request).secure);
        return accounts.logout(principal);
      },
      { session: true },
    )
    .post(
      '/api/logout-all',
      async ({ principal, request, set }) => {
        const body = validate(logoutAllBody, await readJson(request));
        set.headers['set-cookie'] = clearedTokenCookie(requestMeta(request).secure);
        return accounts.logoutAll(principal, body ?? {});
      },
      { session: true },
    )
    .post(
      '/api/change-password',
      async ({ principal, request, set }) => {
        const result = await accounts.changePassword(principal, validate(changePasswordBody, await readJson(request)));
        set.headers['set-cookie'] = clearedTokenCookie(requestMeta(request).secure);
        return result;
      },
      { session: true, detail: describeInput({ body: changePasswordBody }) },
    )
    .get('/api/profile', ({ principal }) => accounts.profile(principal), { session: true });
}
