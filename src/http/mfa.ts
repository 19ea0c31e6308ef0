import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import type { Principal } from '../services/principal.ts';
import { readJson } from './body.ts';
import { enforceLimit, type Limits } from './limits.ts';
import { authPlugin } from './plugins/auth.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';

const verifyBody = z.object({ code: z.string().regex(/^\d{6}$/, 'Enter the 6-digit code from your authenticator app') });
const disableBody = z.object({
  code: z
    .string()
    .trim()
    .regex(/^(\d{6}|[A-Za-z0-9]{4}-?[A-Za-z0-9]{4})$/, 'Enter a 6-digit code or an 8-character backup code'),
});

/** Two-factor authentication: setup, verify, disable, backup codes. */
export function mfaRoutes(ctx: AppContext, limits: Limits) {
  const { mfa } = ctx.services;
  // Verify/disable: 5 per minute, backup-code regeneration: 3 per 10 minutes, per IP and login.
  const limit = (name: 'mfa' | 'backupCodes', request: Request, principal: Principal) =>
    enforceLimit(limits[name], `${requestMeta(request).ip}|${principal.loginId}`, ctx.clock);
  return new Elysia({ name: 'http/mfa', seed: ctx.instanceId })
    .use(authPlugin(ctx, limits))
    .get('/api/mfa/status', ({ principal }) => mfa.status(principal), { auth: true })
    .post('/api/mfa/setup', ({ principal }) => mfa.setup(principal), { auth: true })
    .post(
      '/api/mfa/verify',
      async ({ principal, request }) => {
        limit('mfa', request, principal);
        return mfa.enable(principal, validate(verifyBody, await readJson(request)).code);
      },
      { auth: { limit: false } },
    )
    .post(
      '/api/mfa/disable',
      async ({ principal, request }) => {
        limit('mfa', request, principal);
        return mfa.disable(principal, validate(disableBody, await readJson(request)).code);
      },
      { auth: { limit: false } },
    )
    .post(
      '/api/mfa/backup-codes/regenerate',
      ({ principal, request }) => {
        limit('backupCodes', request, principal);
        return mfa.regenerateBackupCodes(principal);
      },
      { auth: { limit: false } },
    )
    .get('/api/mfa/backup-codes/count', ({ principal }) => mfa.backupCodeCount(principal), { auth: true });
}
