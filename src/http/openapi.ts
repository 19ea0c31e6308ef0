import { escapeHtml } from '../lib/html.ts';
import { BACKEND_VERSION } from '../services/admin/version.ts';
import { policyOf, type RoutePolicy } from './policy.ts';
import { route, routes } from './route.ts';

interface RegisteredRoute {
  method: string;
  path: string;
  hooks?: { detail?: unknown };
}

const SECURITY = [{ cookieAuth: [] }, { bearerAuth: [] }];
/** The extension field (OpenAPI has none) under which a route answering every method is described. */
export const ANY_METHOD = 'x-any-method';

function accessText(policy: RoutePolicy): string {
  const a = policy.access;
  if (typeof a === 'object') return `signed in, holding the permission of operation ${a.operation}`;
  return {
    public: 'anyone',
    session: 'any signed-in login',
    owner: 'an account owner',
    admin: 'the admin',
    dav: 'a WebDAV client signed in with HTTP Basic (an app password)',
  }[a];
}

function tagOf(path: string): string {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'api') return parts[1] === 'user' ? 'admin and account' : (parts[1] ?? 'api');
  if (parts[0] === 's') return 'share links';
  if (parts[0] === 'health' || parts[0] === 'metrics') return 'operations';
  return 'web app';
}

/** The OpenAPI 3.1 document of every registered route: paths from the router, access from the policy table, inputs from each route's schemas. */
function openApiDocument(routes: readonly RegisteredRoute[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const policy = policyOf(route.method, route.path);
    const detail = (route.hooks?.detail ?? {}) as { summary?: string; parameters?: unknown[]; requestBody?: unknown };
    const wildcard = route.path.endsWith('/*');
    const path = route.path.replace(/:([^/]+)/g, '{$1}').replace(/\/\*$/, '/{path}');
    const pathParams = [...route.path.matchAll(/:([^/]+)/g)].map((m) => m[1]!).concat(wildcard ? ['path'] : []);
    // A route for every method (WebDAV's PROPFIND, MKCOL, LOCK…) has no OpenAPI field of its own.
    const method = route.method === 'ALL' ? ANY_METHOD : route.method.toLowerCase();
    const operation: Record<string, unknown> = {
      operationId: `${route.method === 'ALL' ? 'any' : method}${path
        .replace(/\{([^}]+)\}/g, 'by-$1')
        .replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
      tags: [tagOf(route.path)],
      summary: detail.summary ?? `${route.method} ${route.path}`,
      parameters: [
        ...pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
        ...(detail.parameters ?? []),
      ],
      responses: {
        '200': { description: 'Success (docs/api.md and the page of each feature describe the body)' },
        '4XX': {
          description: 'A problem the caller can fix',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    };
    if (detail.requestBody) operation.requestBody = detail.requestBody;
    if (policy) {
      operation['x-coffer-access'] = accessText(policy);
      if (policy.access === 'dav') operation.security = [{ basicAuth: [] }];
      else if (policy.access !== 'public') operation.security = SECURITY;
      if (policy.limit) operation['x-coffer-rate-limit'] = policy.limit;
    }
    paths[path] ??= {};
    paths[path][method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Coffer API',
      version: BACKEND_VERSION,
      description: 'Self-hosted file storage and sharing. Generated from the routes this server registers.',
    },
    paths,
    components: {
      securitySchemes: {
        cookieAuth: { type: 'apiKey', in: 'cookie', name: 'token' },
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        basicAuth: { type: 'http', scheme: 'basic', description: 'WebDAV: the email and an app password' },
      },
      schemas: {
        Error: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
      },
    },
  };
}

const METHOD_ORDER = ['get', 'post', 'put', 'patch', 'delete', ANY_METHOD];
// The page's only style is inline, and it runs no script.
const DOCS_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
};

/** A readable page of the document, self-contained (no script, nothing fetched from elsewhere). */
function docsPage(doc: Record<string, unknown>): string {
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(paths)) {
    for (const method of Object.keys(ops).sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b))) {
      const op = ops[method]!;
      const tag = (op.tags as string[])[0]!;
      const params = (op.parameters as Array<{ name: string; in: string; required: boolean }>)
        .map((p) => `<li><code>${escapeHtml(p.name)}</code> (${p.in}${p.required ? ', required' : ''})</li>`)
        .join('');
      const body = op.requestBody
        ? `<details><summary>Request body</summary><pre>${escapeHtml(JSON.stringify((op.requestBody as { content: unknown }).content, null, 2))}</pre></details>`
        : '';
      const limit = op['x-coffer-rate-limit'] ? ` · rate limit: ${escapeHtml(JSON.stringify(op['x-coffer-rate-limit']))}` : '';
      const html = `<section class="op"><h3><span class="m">${method === ANY_METHOD ? 'ANY' : method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p>${escapeHtml(String(op.summary))}</p><p class="who">Who: ${escapeHtml(String(op['x-coffer-access'] ?? 'anyone'))}${limit}</p>${params ? `<ul>${params}</ul>` : ''}${body}</section>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const sections = [...byTag].map(([tag, ops]) => `<h2>${escapeHtml(tag)}</h2>${ops.join('\n')}`).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Coffer API</title>
<style>
:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}
body{max-width:60rem;margin:0 auto;padding:1rem}
.op{border:1px solid color-mix(in srgb,currentColor 20%,transparent);border-radius:.5rem;padding:.25rem 1rem;margin:.75rem 0}
.m{font-family:ui-monospace,monospace;padding:0 .4rem;border-radius:.25rem;background:color-mix(in srgb,currentColor 12%,transparent)}
.who{opacity:.8;font-size:.9rem}pre{overflow:auto;font-size:.85rem}
</style></head>
<body><main><h1>Coffer API ${escapeHtml(String((doc.info as { version: string }).version))}</h1>
<p>The machine-readable description is at <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1). Sign in with the <code>token</code> cookie or an <code>Authorization: Bearer</code> token.</p>
${sections}</main></body></html>`;
}

/** GET /api/openapi.json and its human page /api/docs, built from the app's routes when first asked for. */
export function openApiRoutes(registered: () => readonly RegisteredRoute[]) {
  let cached: { json: string; html: string } | null = null;
  const build = () => {
    if (!cached) {
      const doc = openApiDocument(registered());
      cached = { json: JSON.stringify(doc), html: docsPage(doc) };
    }
    return cached;
  };
  return routes([
    route('GET /api/openapi.json', {
      summary: 'This document: every route, generated from the router and the route schemas',
      handler: () => new Response(build().json, { headers: { 'content-type': 'application/json; charset=utf-8' } }),
    }),
    route('GET /api/docs', {
      summary: 'The API reference as a web page',
      handler: () => new Response(build().html, { headers: DOCS_HEADERS }),
    }),
  ]);
}
