import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { readJson } from './body.ts';
import { sessionPlugin } from './guard.ts';
import { validate } from './validate.ts';
import { describeInput } from './openapi.ts';

const verifyBody = z.object({ code: z.string().regex(/^\d{6}$/, 'Enter the 6-digit code from your authenticator app') });
const disableBody = z.object({
  code: z
    .string()
    .trim()
    .regex(/^(\d{6}|[A-Za-z0-9]{4}-?[A-Za-z0-9]{4})$/, 'Enter a 6-digit code or an 8-character backup code'),
});

/** Two-factor authentication: setup, verify, disable, backup codes. */
export function mfaRoutes(ctx: AppContext) {
  const { mfa } = ctx.services;
  return new Elysia({ name: 'http/mfa', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/mfa/status', ({ principal }) => mfa.status(principal), { session: true })
    .post('/api/mfa/setup', ({ principal }) => mfa.setup(principal), { session: true })
    .post(
      '/api/mfa/verify',
      async ({ principal, request }) => {
        return mfa.enable(principal, validate(verifyBody, await readJson(request)).code);
      },
      { session: true, detail: describeInput({ body: verifyBody }) },
    )
    .post(
      '/api/mfa/disable',
      async ({ principal, request }) => {
        return mfa.disable(principal, validate(disableBody, await readJson(request)).code);
      },
      { session: true, detail: describeInput({ body: disableBody }) },
    )
    .post(
      '/api/mfa/backup-codes/regenerate',
      ({ principal, request }) => {
        return mfa.regenerateBackupCodes(principal);
      },
      { session: true },
    )
    .get('/api/mfa/backup-codes/count', ({ principal }) => mfa.backupCodeCount(principal), { session: true });
}
