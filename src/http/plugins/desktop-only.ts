import { Elysia } from 'elysia';
import type { AppContext } from '../../context.ts';
import { Messages } from '../../errors.ts';
import { escapeHtml } from '../../lib/html.ts';
import { requestMeta } from '../request-meta.ts';
import { SECURITY_HEADERS } from './core.ts';

// Share links, liveness, metrics and the document server's own endpoints stay reachable (COMPAT "Operations").
const OPEN_PATHS = [/^\/s\//, /^\/health$/, /^\/metrics$/, /^\/api\/docserver\/file\//, /^\/api\/docserver\/callback$/];

/** With desktop-only access on, everything but the open paths needs `X-Desktop-Client: 1`. */
export function desktopOnlyPlugin(ctx: AppContext) {
  return new Elysia({ name: 'http/desktop-only', seed: ctx.instanceId }).onRequest(({ request }) => {
    if (!ctx.services.settings.get('desktopOnlyAccess')) return;
    if (request.headers.get('x-desktop-client') === '1') return;
    const { path } = requestMeta(request);
    if (OPEN_PATHS.some((p) => p.test(path))) return;
    const headers = { ...SECURITY_HEADERS };
    if ((request.headers.get('accept') ?? '').includes('text/html')) {
      const html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Desktop app only</title></head><body><main><h1>Desktop app only</h1><p>${escapeHtml(Messages.desktopOnly)} Open it in the Coffer desktop app.</p></main></body></html>`;
      return new Response(html, { status: 403, headers: { ...headers, 'content-type': 'text/html; charset=utf-8' } });
    }
    return Response.json({ message: Messages.desktopOnly, error: 'DESKTOP_ONLY_ACCESS' }, { status: 403, headers });
  });
}
