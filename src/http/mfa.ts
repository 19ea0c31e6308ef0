import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { route, routes } from './route.ts';

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
  return routes(ctx, 'http/mfa', [
    route('GET /api/mfa/status', { handler: ({ principal }) => mfa.status(principal) }),
    route('POST /api/mfa/setup', { handler: ({ principal }) => mfa.setup(principal) }),
    route('POST /api/mfa/verify', { body: verifyBody, handler: ({ principal, body }) => mfa.enable(principal, body.code) }),
    route('POST /api/mfa/disable', { body: disableBody, handler: ({ principal, body }) => mfa.disable(principal, body.code) }),
    route('POST /api/mfa/backup-codes/regenerate', { handler: ({ principal }) => mfa.regenerateBackupCodes(principal) }),
    route('GET /api/mfa/backup-codes/count', { handler: ({ principal }) => mfa.backupCodeCount(principal) }),
  ]);
}
