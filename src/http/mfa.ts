import type { AppContext } from '../context.ts';
import { mfaDisableBody, mfaVerifyBody } from '../contract/accounts.ts';
import { route, routes } from './route.ts';

/** Two-factor authentication: setup, verify, disable, backup codes. */
export function mfaRoutes(ctx: AppContext) {
  const { mfa } = ctx.services;
  return routes([
    route('GET /api/mfa/status', { handler: ({ principal }) => mfa.status(principal) }),
    route('POST /api/mfa/setup', { handler: ({ principal }) => mfa.setup(principal) }),
    route('POST /api/mfa/verify', { body: mfaVerifyBody, handler: ({ principal, body }) => mfa.enable(principal, body.code) }),
    route('POST /api/mfa/disable', { body: mfaDisableBody, handler: ({ principal, body }) => mfa.disable(principal, body.code) }),
    route('POST /api/mfa/backup-codes/regenerate', { handler: ({ principal }) => mfa.regenerateBackupCodes(principal) }),
    route('GET /api/mfa/backup-codes/count', { handler: ({ principal }) => mfa.backupCodeCount(principal) }),
  ]);
}
