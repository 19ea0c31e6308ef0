import { Elysia } from 'elysia';
import type { AppContext } from '../../context.ts';
import { Messages } from '../../errors.ts';
import { policyOfPath } from '../policy.ts';
import { requestMeta } from '../request-meta.ts';
import { SECURITY_HEADERS } from './core.ts';

/**
 * With a share base URL set, its host serves share links only (docs/compatibility.md › Sharing): the app's session
 * cookie and API never live on the domain strangers are sent to.
 */
export function shareDomainPlugin(ctx: AppContext) {
  return new Elysia({ name: 'http/share-domain', seed: ctx.instanceId }).onRequest(({ request }) => {
    const base = ctx.services.settings.get('shareBaseUrl');
    if (!base) return;
    const meta = requestMeta(request);
    if (meta.host === null || new URL(meta.origin).host !== new URL(base).host) return;
    if (policyOfPath(request.method, meta.path)?.shareDomain) return;
    return Response.json({ message: Messages.notFoundRoute }, { status: 404, headers: SECURITY_HEADERS });
  });
}
