import { Elysia } from 'elysia';
import type { AppContext } from '../../context.ts';
import { Messages } from '../../errors.ts';
import { escapeHtml } from '../../lib/html.ts';
import { policyOfPath } from '../policy.ts';
import { requestMeta } from '../request-meta.ts';
import { SECURITY_HEADERS } from './core.ts';

/** With desktop-only access on, every route but those http/policy.ts marks desktop-open needs `X-Desktop-Client: 1`. */
export function desktopOnlyPlugin(ctx: AppContext) {
  return new Elysia({ name: 'http/desktop-only', seed: ctx.instanceId }).onRequest(({ request }) => {
    if (!ctx.services.settings.get('desktopOnlyAccess')) return;
    if (request.headers.get('x-desktop-client') === '1') return;
    const { path } = requestMeta(request);
    if (policyOfPath(request.method, path)?.desktopOpen) return;
    const headers = { ...SECURITY_HEADERS };
    if ((request.headers.get('accept') ?? '').includes('text/html')) {
      const html =
        `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Desktop app only</title></head>` +
        `<body><main><h1>Desktop app only</h1><p>${escapeHtml(Messages.desktopOnly)} Open it in the Coffer desktop app.</p></main></body></html>`;
      return new Response(html, { status: 403, headers: { ...headers, 'content-type': 'text/html; charset=utf-8' } });
    }
    return Response.json({ message: Messages.desktopOnly, error: 'DESKTOP_ONLY_ACCESS' }, { status: 403, headers });
  });
}
