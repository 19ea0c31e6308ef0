import type { AppContext } from '../context.ts';
import { notFound } from '../errors.ts';
import { escapeXml } from '../lib/xml.ts';
import { queryOf, requestMeta } from './request-meta.ts';
import { PRE_AUTH_PATH, PUSH_SOCKET_PATH } from './push.ts';
import { route, routes } from './route.ts';

/**
 * The Nextcloud server version Coffer answers as: recent enough that current desktop and mobile clients
 * raise no "unsupported server version" warning.
 */
const NEXTCLOUD_VERSION = { major: 30, minor: 0, micro: 0 } as const;
const VERSION_STRING = `${NEXTCLOUD_VERSION.major}.${NEXTCLOUD_VERSION.minor}.${NEXTCLOUD_VERSION.micro}`;
/** Nextcloud's `free` for an unlimited quota (its SPACE_UNLIMITED). */
const UNLIMITED = -3;

type OcsValue = string | number | boolean | null | OcsValue[] | { [key: string]: OcsValue };

/** OCS answers JSON for `?format=json` or an `Accept` naming JSON, XML otherwise. */
function wantsJson(request: Request): boolean {
  const format = new URLSearchParams(queryOf(request.url)).get('format');
  if (format) return format.toLowerCase() === 'json';
  return (request.headers.get('accept') ?? '').includes('application/json');
}

/** A value as OCS XML: arrays as `<element>` children, true as 1 and false as nothing (as Nextcloud writes them). */
function xmlOf(value: OcsValue): string {
  if (value === null || value === false) return '';
  if (value === true) return '1';
  if (Array.isArray(value)) return value.map((v) => `<element>${xmlOf(v)}</element>`).join('');
  if (typeof value === 'object')
    return Object.entries(value)
      .map(([k, v]) => `<${k}>${xmlOf(v)}</${k}>`)
      .join('');
  return escapeXml(String(value));
}

/** OCS v1 puts its own codes in meta.statuscode (100 for success, 997 unauthorized, 998 not found); v2 the HTTP status. */
function statusCodeOf(path: string, status: number): number {
  if (!path.startsWith('/ocs/v1.php/')) return status;
  if (status === 200) return 100;
  if (status === 401) return 997;
  if (status === 404) return 998;
  return status;
}

/** An OCS envelope (`ocs.meta`, `ocs.data`) in the format the request asks for. */
export function ocsResponse(request: Request, status: number, message: string, data: OcsValue): { body: string; contentType: string } {
  const meta = {
    status: status < 400 ? 'ok' : 'failure',
    statuscode: statusCodeOf(requestMeta(request).path, status),
    message,
    totalitems: '',
    itemsperpage: '',
  };
  if (wantsJson(request)) return { body: JSON.stringify({ ocs: { meta, data } }), contentType: 'application/json; charset=utf-8' };
  return {
    body: `<?xml version="1.0"?>\n<ocs><meta>${xmlOf(meta)}</meta><data>${xmlOf(data)}</data></ocs>\n`,
    contentType: 'application/xml; charset=utf-8',
  };
}

function ocsOk(request: Request, data: OcsValue): Response {
  const { body, contentType } = ocsResponse(request, 200, 'OK', data);
  return new Response(body, { headers: { 'Content-Type': contentType } });
}

/** What Coffer does that the Nextcloud clients ask about; nothing it does not do. */
const CAPABILITIES = {
  version: { ...NEXTCLOUD_VERSION, string: VERSION_STRING, edition: '', extendedSupport: false },
  capabilities: {
    core: { pollinterval: 60, 'webdav-root': 'remote.php/webdav' },
    // Chunked upload (/remote.php/dav/uploads/) and OC-Checksum, checked on PUT and on the final MOVE.
    dav: { chunking: '1.0' },
    files: { bigfilechunking: true, undelete: true, versioning: true },
    checksums: { supportedTypes: ['SHA1'], preferredUploadType: 'SHA1' },
  },
} satisfies OcsValue;

/** The capabilities with notify_push's endpoints on the address the client reached this server by. */
function capabilities(request: Request): OcsValue {
  const { origin } = requestMeta(request);
  const notify_push = {
    type: ['files'],
    endpoints: { websocket: `${origin.replace(/^http/, 'ws')}${PUSH_SOCKET_PATH}`, pre_auth: `${origin}${PRE_AUTH_PATH}` },
  };
  return { ...CAPABILITIES, capabilities: { ...CAPABILITIES.capabilities, notify_push } };
}

/**
 * The Nextcloud clients' discovery and account endpoints (status.php, OCS capabilities and user), and
 * empty successes for what they ask at start that Coffer has no use for. Files go through WebDAV (http/dav/).
 */
export function nextcloudRoutes(ctx: AppContext) {
  const unknown = () => {
    throw notFound('This Nextcloud endpoint is not served by Coffer');
  };
  const empty = ({ request }: { request: Request }) => ocsOk(request, []);
  const user = ({ request }: { request: Request }) => {
    const principal = requestMeta(request).principal!;
    const usage = ctx.services.dav.usage(principal);
    const limited = usage.total !== null;
    return ocsOk(request, {
      id: principal.loginId,
      'display-name': principal.name || principal.email,
      displayname: principal.name || principal.email,
      email: principal.email,
      quota: {
        free: limited ? Math.max(0, usage.free ?? 0) : UNLIMITED,
        used: usage.used,
        total: limited ? usage.total! : UNLIMITED,
        relative: limited && usage.total! > 0 ? Math.round((usage.used / usage.total!) * 10_000) / 100 : 0,
        quota: limited ? usage.total! : UNLIMITED,
      },
    });
  };
  return routes([
    route('GET /status.php', {
      handler: () => ({
        installed: true,
        maintenance: false,
        needsDbUpgrade: false,
        version: `${VERSION_STRING}.0`,
        versionstring: VERSION_STRING,
        edition: '',
        productname: 'Coffer',
        extendedSupport: false,
      }),
    }),
    route('GET /index.php/204', { handler: () => new Response(null, { status: 204 }) }),
    route('GET /ocs/v1.php/cloud/capabilities', { handler: ({ request }) => ocsOk(request, capabilities(request)) }),
    route('GET /ocs/v2.php/cloud/capabilities', { handler: ({ request }) => ocsOk(request, capabilities(request)) }),
    route('GET /ocs/v1.php/cloud/user', { handler: user }),
    route('GET /ocs/v2.php/cloud/user', { handler: user }),
    route('GET /ocs/v2.php/core/navigation/apps', { handler: empty }),
    route('GET /ocs/v2.php/apps/notifications/api/v2/notifications', { handler: empty }),
    route('GET /ocs/v2.php/apps/user_status/api/v1/user_status', { handler: empty }),
    // The desktop tray's search asks for providers first; none is offered through this API.
    route('GET /ocs/v2.php/search/providers', { handler: empty }),
    route('GET /ocs/*', { handler: unknown }),
    route('ALL /ocs/*', { handler: unknown }),
  ]);
}
