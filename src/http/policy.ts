import { Messages } from '../errors.ts';
import type { Operation } from '../services/identity/permissions.ts';
import type { LimiterName } from './limits.ts';

/**
 * Who may call a route: anyone, any signed-in login, the account owner, the admin, a login holding an
 * operation's permission, or (`dav`) a login by HTTP Basic with an app password, each operation's
 * permission checked by the WebDAV service once it knows what the request does.
 */
type Access = 'public' | 'session' | 'owner' | 'admin' | 'dav' | { operation: Operation };

/** Which requests share a rate-limit counter: per client address, per login, per account, or per address and login/email. */
type LimitKey = 'ip' | 'login' | 'account' | 'ip+login' | 'ip+email' | 'ip+idp-pending' | 'ip+passkey';

export interface RoutePolicy {
  access: Access;
  /** The limiter and its key; default `general`, per login (per address for public routes); false for none. */
  limit?: { limiter: LimiterName; key: LimitKey } | false;
  /** Reachable while desktop-only access is on (share links, liveness, metrics). */
  desktopOpen?: boolean;
  /** Served on the share base URL's host, which serves nothing else (docs/compatibility.md › Sharing). */
  shareDomain?: boolean;
  /** Other sites may embed or fetch its answers (a shared picture in a forum post): `Cross-Origin-Resource-Policy: cross-origin`. */
  embeddable?: boolean;
  /** Message of the admin refusal, where the contract gives one of its own (docs/api.md › Orphaned files). */
  adminMessage?: string;
  /** Opened in a browser tab: its refusals, the guard's included, are an HTML page rather than JSON. */
  htmlErrors?: boolean;
  /** Checks or sets a password (argon2): each call also spends one of the client address's password hashes. */
  hashesPassword?: boolean;
  /** A Nextcloud OCS endpoint: its refusals, the guard's included, are an OCS envelope in the format asked for. */
  ocs?: boolean;
  /** A Nextcloud WebDAV door: its refusals, the guard's included, are Sabre's XML error, whose message the clients show. */
  sabreErrors?: boolean;
}

const open = { access: 'public', desktopOpen: true, limit: false } as const satisfies RoutePolicy;
const session = { access: 'session' } as const satisfies RoutePolicy;
const owner = { access: 'owner' } as const satisfies RoutePolicy;
const admin = { access: 'admin' } as const satisfies RoutePolicy;
const publicGeneral = { access: 'public' } as const satisfies RoutePolicy;
/** A signed-in change that checks the login's password (or a code) again: it spends the login's sign-in attempts, like a password change. */
const confirmsIdentity = {
  access: 'session',
  limit: { limiter: 'auth', key: 'ip+email' },
  hashesPassword: true,
} as const satisfies RoutePolicy;
const signIn = { access: 'public', limit: { limiter: 'auth', key: 'ip+email' }, hashesPassword: true } as const satisfies RoutePolicy;
const share = { access: 'public', desktopOpen: true, shareDomain: true, embeddable: true } as const satisfies RoutePolicy;
// Called by the document server, which has no session: open under desktop-only access (docs/compatibility.md › Operations) and on the
// share domain, whose origin the document server may be given to reach Coffer.
const docserverCalls = { access: 'public', desktopOpen: true, shareDomain: true } as const satisfies RoutePolicy;
const can = (operation: Operation, limiter?: LimiterName): RoutePolicy => ({
  access: { operation },
  ...(limiter ? { limit: { limiter, key: 'login' } } : {}),
});
// Desktop-only access locks browsers out; WebDAV clients are the desktop's own file managers.
const dav = { access: 'dav', desktopOpen: true } as const satisfies RoutePolicy;
const ncDav = { ...dav, sabreErrors: true } as const satisfies RoutePolicy;
// The Nextcloud clients' OCS endpoints: discovery before sign-in, the rest signed in as WebDAV is.
const ocsOpen = { access: 'public', desktopOpen: true, ocs: true } as const satisfies RoutePolicy;
const ocsDav = { access: 'dav', desktopOpen: true, ocs: true } as const satisfies RoutePolicy;
const orphansAdmin = { access: 'admin', adminMessage: Messages.orphansAdminOnly } as const satisfies RoutePolicy;

/**
 * Every route's policy, in one table: who may call it, its rate limit, and how desktop-only access
 * and the share domain treat it. The guard enforces it before a handler reads the body; a test walks
 * every registered route and fails when one is missing here (or listed here and not served).
 */
export const ROUTES = {
  'GET /health': open,
  'GET /metrics': open,

  'POST /api/signup': signIn,
  'POST /api/login': signIn,
  // An invitation link: its token is 256 random bits; accepting it sets a password (argon2).
  'POST /api/invitations/view': publicGeneral,
  'POST /api/invitations/accept': { access: 'public', limit: { limiter: 'auth', key: 'ip' }, hashesPassword: true },
  'GET /api/signup-status': publicGeneral,
  'POST /api/logout': session,
  'POST /api/logout-all': session,
  'POST /api/change-password': { access: 'session', limit: { limiter: 'auth', key: 'ip+email' }, hashesPassword: true },
  'GET /api/profile': session,
  // Single sign-on: a sign-in page asks before anyone is signed in (docs/compatibility.md › Deliberate widenings).
  'GET /api/idp/enabled': publicGeneral,
  'GET /api/idp/login': publicGeneral,
  'GET /api/idp/callback': { access: 'public', limit: { limiter: 'auth', key: 'ip' } },
  'POST /api/idp/mfa-verify': { access: 'public', limit: { limiter: 'auth', key: 'ip+idp-pending' } },
  'GET /api/version': session,
  'GET /api/version/latest': session,
  'GET /api/openapi.json': publicGeneral,
  'GET /api/docs': publicGeneral,

  'GET /api/sessions': session,
  'POST /api/sessions/heartbeat': session,
  'POST /api/sessions/offline': session,
  'POST /api/sessions/revoke-others': session,
  'DELETE /api/sessions/:sessionId': session,

  'GET /api/mfa/status': session,
  'POST /api/mfa/setup': session,
  'POST /api/mfa/verify': { access: 'session', limit: { limiter: 'mfa', key: 'ip+login' } },
  'POST /api/mfa/disable': { access: 'session', limit: { limiter: 'mfa', key: 'ip+login' } },
  'POST /api/mfa/backup-codes/regenerate': { access: 'session', limit: { limiter: 'backupCodes', key: 'ip+login' } },
  'GET /api/mfa/backup-codes/count': session,

  'GET /api/passkeys': session,
  'POST /api/passkeys/register/options': confirmsIdentity,
  'POST /api/passkeys': session,
  'DELETE /api/passkeys/:id': session,
  'POST /api/passkeys/sign-in/options': publicGeneral,
  // A passkey sign-in spends the sign-in attempts of the login whose passkey it names (per address and email).
  'POST /api/passkeys/sign-in': { access: 'public', limit: { limiter: 'auth', key: 'ip+passkey' } },

  'GET /api/user/signup-status': session,
  'POST /api/user/signup-toggle': admin,
  'GET /api/user/docserver-configured': session,
  'GET /api/user/docserver-config': admin,
  'PUT /api/user/docserver-config': admin,
  'GET /api/user/share-base-url-config': admin,
  'PUT /api/user/share-base-url-config': admin,
  'GET /api/user/max-upload-size-config': session,
  'PUT /api/user/max-upload-size-config': admin,
  'GET /api/user/versions-config': session,
  'PUT /api/user/versions-config': admin,
  'GET /api/user/known-proxies-config': admin,
  'PUT /api/user/known-proxies-config': admin,
  'GET /api/user/hide-file-extensions-config': session,
  'PUT /api/user/hide-file-extensions-config': admin,
  'GET /api/user/desktop-only-access-config': session,
  'PUT /api/user/desktop-only-access-config': admin,
  'GET /api/user/password-change-config': session,
  'PUT /api/user/password-change-config': admin,
  'GET /api/user/people-sharing-config': session,
  'PUT /api/user/people-sharing-config': admin,
  'GET /api/user/webdav-account-password-config': admin,
  'PUT /api/user/webdav-account-password-config': admin,
  'GET /api/user/content-search-config': admin,
  'PUT /api/user/content-search-config': admin,
  // Each account's opt-out from content search: every login sees it, the owner decides.
  'GET /api/user/content-search-preference': session,
  'PUT /api/user/content-search-preference': owner,

  'GET /api/user/sub-users': owner,
  'POST /api/user/sub-users': { ...owner, hashesPassword: true },
  'PUT /api/user/sub-users/:id': owner,
  'DELETE /api/user/sub-users/:id': owner,
  'GET /api/user/all': admin,
  // Both may check the admin's own password again (services/accounts/identity-check.ts); wrong ones count per email there.
  'POST /api/user/accounts': { ...admin, hashesPassword: true },
  'GET /api/user/invitations': admin,
  'POST /api/user/invitations': { ...admin, hashesPassword: true },
  'DELETE /api/user/invitations/:id': admin,
  'PATCH /api/user/:id': admin,
  'POST /api/user/:id/confirm-email': admin,
  // May check the admin's own password again, as adding an account does.
  'DELETE /api/user/:id': { ...admin, hashesPassword: true },
  'GET /api/user/storage': session,
  'PUT /api/user/storage-limit': admin,
  'GET /api/user/active-clients': admin,
  'POST /api/user/client-heartbeat': session,
  'GET /api/user/orphans': orphansAdmin,
  'POST /api/user/orphans/delete': orphansAdmin,
  'GET /api/user/backups': admin,
  'POST /api/user/backups/run': admin,

  'GET /api/files': session,
  'GET /api/files/stats': session,
  'GET /api/files/search': session,
  'GET /api/files/recent': session,
  'GET /api/files/photos': session,
  // Albums: reading needs no permission, as listing does; changing one is organizing, as starring is.
  'GET /api/albums': session,
  'POST /api/albums': can('albums.edit'),
  'GET /api/albums/:id': session,
  'PATCH /api/albums/:id': can('albums.edit'),
  'DELETE /api/albums/:id': can('albums.edit'),
  'POST /api/albums/:id/items': can('albums.edit'),
  'DELETE /api/albums/:id/items': can('albums.edit'),
  // A thumbnail shows the content: through the album as through the file's own door, it needs Download.
  'GET /api/albums/:id/items/:itemId/thumbnail': can('thumbnails.view'),
  'GET /api/albums/:id/items/:itemId/download': can('downloads.file'),
  'GET /api/albums/:id/members': session,
  // Sharing an album looks a person up as sharing a file does, and needs the same permission.
  'POST /api/albums/:id/members': { access: { operation: 'albums.share' }, limit: { limiter: 'memberLookup', key: 'account' } },
  'DELETE /api/albums/:id/members/:accountId': can('albums.share'),
  'GET /api/albums/:id/link': can('albums.share'),
  'POST /api/albums/:id/link': can('albums.share'),
  'PATCH /api/albums/:id/link': can('albums.share'),
  'GET /api/albums/:id/link/qr': can('albums.share'),
  'DELETE /api/albums/:id/link': can('albums.share'),
  'GET /api/files/starred': session,
  'GET /api/files/shared': session,
  'GET /api/files/:id/info': session,
  'GET /api/files/events': session,
  'GET /api/activity': session,
  'GET /api/activity/people': session,
  'POST /api/files/folder': can('items.createFolder'),
  'POST /api/files/move': can('items.move'),
  'POST /api/files/rename': can('items.rename'),
  'POST /api/files/star': can('items.star'),
  'POST /api/files/copy': can('copy.start'),
  'GET /api/files/jobs/:jobId': session,

  'POST /api/files/upload/check': can('uploads.check', 'upload'),
  'POST /api/files/upload': can('uploads.upload', 'upload'),
  'POST /api/files/upload/bulk': can('uploads.bulk', 'upload'),
  'POST /api/files/:id/replace': can('uploads.replace', 'upload'),
  'POST /api/files/:id/derived': can('uploads.derive', 'upload'),
  // Resumable uploads (tus): OPTIONS only describes the server; HEAD is served by the GET route.
  'OPTIONS /api/files/tus': publicGeneral,
  'POST /api/files/tus': can('tus.create', 'upload'),
  'GET /api/files/tus/:uploadId': can('tus.status'),
  'PATCH /api/files/tus/:uploadId': can('tus.append', 'upload'),
  'DELETE /api/files/tus/:uploadId': can('tus.terminate'),
  // X-HTTP-Method-Override: a PATCH (or DELETE) sent as POST, so counted as a PATCH.
  'POST /api/files/tus/:uploadId': can('tus.append', 'upload'),

  'GET /api/files/:id/download': can('downloads.file'),
  'POST /api/files/download/bulk': can('downloads.zip'),
  'GET /api/files/:id/thumbnail': can('thumbnails.view'),

  'GET /api/files/:id/versions': session,
  'GET /api/files/:id/versions/:versionId/download': can('versions.download'),
  'POST /api/files/:id/versions/:versionId/restore': can('versions.restore'),
  'DELETE /api/files/:id/versions/:versionId': can('versions.delete'),

  'GET /api/files/trash': session,
  'POST /api/files/delete': can('trash.trash'),
  'POST /api/files/trash/restore': can('trash.restore'),
  'POST /api/files/trash/delete': can('trash.delete'),
  'POST /api/files/trash/empty': can('trash.empty'),

  'POST /api/files/share': can('shares.share'),
  'POST /api/files/share/links': can('shares.links'),
  'POST /api/files/link-parent-share': can('shares.linkParent'),
  'GET /api/files/share/links': can('shares.list'),
  'PATCH /api/files/share/links/:token': can('shares.update'),
  'GET /api/files/share/links/:token/qr': can('shares.list'),
  // Suggestions look accounts up as adding a person does, so they spend the same allowance.
  'GET /api/people/suggestions': { access: { operation: 'members.manage' }, limit: { limiter: 'memberLookup', key: 'account' } },
  'GET /api/files/shared-with-me': session,
  'GET /api/files/:id/members': session,
  'POST /api/files/:id/members': { access: { operation: 'members.manage' }, limit: { limiter: 'memberLookup', key: 'account' } },
  'PATCH /api/files/:id/members/:accountId': can('members.manage'),
  'DELETE /api/files/:id/members/:accountId': can('members.manage'),
  'PATCH /api/files/:id/groups/:groupId': can('members.manage'),
  'DELETE /api/files/:id/groups/:groupId': can('members.manage'),
  // Groups: the admin's, a group administrator's (an owner: groups are of accounts), and completion for the share dialog.
  'GET /api/groups': session,
  'GET /api/groups/:id': owner,
  // A group administrator adding by email learns whether it has an account, as sharing with a person does: the same allowance.
  'POST /api/groups/:id/members': { ...owner, limit: { limiter: 'memberLookup', key: 'account' } },
  'DELETE /api/groups/:id/members/:accountId': owner,
  'GET /api/admin/groups': admin,
  'POST /api/admin/groups': admin,
  'GET /api/admin/groups/:id': admin,
  'PATCH /api/admin/groups/:id': admin,
  'DELETE /api/admin/groups/:id': admin,
  'POST /api/admin/groups/:id/members': admin,
  'PATCH /api/admin/groups/:id/members/:accountId': admin,
  'DELETE /api/admin/groups/:id/members/:accountId': admin,
  'GET /api/admin/libraries': admin,
  'POST /api/admin/libraries': admin,
  'GET /api/admin/libraries/:id': admin,
  'POST /api/admin/libraries/:id/rescan': admin,
  'DELETE /api/admin/libraries/:id': admin,
  'GET /api/admin/team-folders': admin,
  'POST /api/admin/team-folders': admin,
  'PATCH /api/admin/team-folders/:id': admin,
  'PUT /api/admin/team-folders/:id/groups': admin,
  'DELETE /api/admin/team-folders/:id': admin,
  // A group administrator's team folder, out of the group's allowance (the service checks who administers the group).
  'POST /api/groups/:id/team-folders': owner,
  // A team folder's trash, for its administrators (the service checks who administers it).
  'GET /api/team-folders': session,
  'GET /api/team-folders/:id/trash': session,
  'POST /api/team-folders/:id/trash/restore': can('trash.restore'),
  'POST /api/team-folders/:id/trash/delete': can('trash.delete'),
  'POST /api/team-folders/:id/share': can('shares.share'),
  'POST /api/team-folders/:id/share/links': can('shares.links'),
  'GET /api/team-folders/:id/share/links': can('shares.list'),
  'PATCH /api/team-folders/:id/share/links/:token': can('shares.update'),
  'DELETE /api/team-folders/:id/share/links/:token': can('shares.share'),
  'GET /api/notifications': session,
  'POST /api/notifications/read': session,
  'GET /s/album/:token': share,
  'GET /s/album/:token/file/:id': share,
  'GET /s/album/:token/thumbnail/:id': share,
  'GET /s/album/:token/zip': share,
  'POST /s/album/:token/unlock': { ...share, hashesPassword: true },
  'GET /s/:token': share,
  'GET /s/:token/folder/:id': share,
  'GET /s/:token/file/:id': share,
  'GET /s/:token/zip': share,
  'GET /s/:token/thumbnail/:id': share,
  // Each attempt also spends one of the address's password hashes; wrong ones have their own limiter per link.
  'POST /s/:token/unlock': { ...share, hashesPassword: true },
  'POST /s/:token/upload': { ...share, limit: { limiter: 'upload', key: 'ip' } },
  'OPTIONS /s/:token/tus': share,
  'POST /s/:token/tus': { ...share, limit: { limiter: 'upload', key: 'ip' } },
  'GET /s/:token/tus/:uploadId': share,
  'PATCH /s/:token/tus/:uploadId': { ...share, limit: { limiter: 'upload', key: 'ip' } },
  'DELETE /s/:token/tus/:uploadId': share,
  'POST /s/:token/tus/:uploadId': { ...share, limit: { limiter: 'upload', key: 'ip' } },

  'GET /api/docserver/config/:id': can('docserver.open'),
  'GET /api/docserver/viewer/:id': { ...can('docserver.open'), htmlErrors: true },
  'GET /api/docserver/file/:id': docserverCalls,
  'POST /api/docserver/callback': docserverCalls,
  'GET /api/user/app-passwords': session,
  // May check the password (or a code) again (services/accounts/identity-check.ts), so counted like the passkey's.
  'POST /api/user/app-passwords': confirmsIdentity,
  'DELETE /api/user/app-passwords/:id': session,
  // The Nextcloud clients' browser sign-in: the consent page's questions and answers (cookie changes refuse other sites).
  'GET /api/login-flows/:token': session,
  'POST /api/login-flows/:token/grant': confirmsIdentity,
  'POST /api/login-flows/:token/cancel': session,
  'GET /api/user/dav-locks': owner,
  // Webhooks: an account's by its owner (a sub-user gets 403), the instance's by the admin.
  'GET /api/webhooks': owner,
  'POST /api/webhooks': owner,
  'GET /api/webhooks/:id': owner,
  'PATCH /api/webhooks/:id': owner,
  'DELETE /api/webhooks/:id': owner,
  'POST /api/webhooks/:id/rotate-secret': owner,
  'GET /api/webhooks/:id/deliveries': owner,
  'POST /api/webhooks/:id/test': owner,
  'POST /api/webhooks/:id/deliveries/:deliveryId/redeliver': owner,
  'GET /api/admin/audit': admin,
  'GET /api/admin/webhooks': admin,
  'POST /api/admin/webhooks': admin,
  'GET /api/admin/webhooks/:id': admin,
  'PATCH /api/admin/webhooks/:id': admin,
  'DELETE /api/admin/webhooks/:id': admin,
  'POST /api/admin/webhooks/:id/rotate-secret': admin,
  'GET /api/admin/webhooks/:id/deliveries': admin,
  'POST /api/admin/webhooks/:id/test': admin,
  'POST /api/admin/webhooks/:id/deliveries/:deliveryId/redeliver': admin,
  'DELETE /api/user/dav-locks/:token': owner,
  // The server's root as Windows and Office probe it before a WebDAV folder: no credentials needed, none read.
  'OPTIONS /': publicGeneral,
  // WebDAV (every method: OPTIONS, PROPFIND, LOCK, ...).
  'GET /dav': dav,
  'GET /dav/*': dav,
  'ALL /dav': dav,
  'ALL /dav/*': dav,
  // The same WebDAV under the Nextcloud clients' paths, and what those clients ask first.
  'GET /remote.php/webdav': ncDav,
  'GET /remote.php/webdav/*': ncDav,
  'ALL /remote.php/webdav': ncDav,
  'ALL /remote.php/webdav/*': ncDav,
  'GET /remote.php/dav/files/*': ncDav,
  'ALL /remote.php/dav/files/*': ncDav,
  // The Nextcloud apps' trashbin, versions and previews, signed in as WebDAV is.
  'GET /remote.php/dav/trashbin/*': ncDav,
  'ALL /remote.php/dav/trashbin/*': ncDav,
  'GET /remote.php/dav/versions/*': ncDav,
  'ALL /remote.php/dav/versions/*': ncDav,
  'GET /index.php/core/preview': dav,
  'GET /index.php/core/preview.png': dav,
  'GET /remote.php/dav/uploads/*': ncDav,
  'ALL /remote.php/dav/uploads/*': ncDav,
  // notify_push: the socket signs in with its first two messages (sign-in limiter); pre_auth as WebDAV.
  'GET /push/ws': { access: 'public', desktopOpen: true },
  'POST /index.php/apps/notify_push/pre_auth': dav,
  'GET /status.php': { access: 'public', desktopOpen: true },
  'GET /index.php/204': { access: 'public', desktopOpen: true },
  'GET /ocs/v1.php/cloud/capabilities': ocsOpen,
  'GET /ocs/v2.php/cloud/capabilities': ocsOpen,
  'GET /ocs/v1.php/cloud/user': ocsDav,
  'GET /ocs/v2.php/cloud/user': ocsDav,
  'GET /ocs/v2.php/core/navigation/apps': ocsDav,
  'GET /ocs/v2.php/apps/notifications/api/v2/notifications': ocsDav,
  'GET /ocs/v2.php/apps/user_status/api/v1/user_status': ocsDav,
  'GET /ocs/v2.php/search/providers': ocsDav,
  'DELETE /ocs/v2.php/core/apppassword': ocsDav,
  // Login flows: started and polled by the clients before they have a password, each limited per address.
  'POST /index.php/login/v2': { access: 'public', desktopOpen: true, limit: { limiter: 'loginFlowStart', key: 'ip' } },
  'POST /index.php/login/v2/poll': { access: 'public', desktopOpen: true, limit: { limiter: 'loginFlowPoll', key: 'ip' } },
  'GET /index.php/login/flow': { access: 'public', limit: { limiter: 'loginFlowStart', key: 'ip' }, htmlErrors: true },
  'GET /ocs/*': ocsOpen,
  'ALL /ocs/*': ocsOpen,

  // The web app: hashed assets, and its page for every other path a browser navigates to.
  'GET /assets/:name': { access: 'public', limit: false },
  'GET /*': { access: 'public', limit: false },
} satisfies Record<string, RoutePolicy>;

/** A route's key in the table: `METHOD /path` as the router registers it. */
export type RouteKey = keyof typeof ROUTES;
const TABLE: Record<string, RoutePolicy> = ROUTES;

/** The policy of a matched route (`route` is the pattern the router matched); HEAD is served by GET. */
export function policyOf(method: string, route: string): RoutePolicy | undefined {
  return TABLE[`${method === 'HEAD' ? 'GET' : method} ${route}`] ?? TABLE[`ALL ${route}`];
}

// The table's patterns as matchers, for checks that run before routing (desktop-only, share domain).
const MATCHERS = Object.entries(ROUTES).map(([key, policy]) => {
  const [method, pattern] = key.split(' ') as [string, string];
  const regex = new RegExp(`^${pattern.replace(/:[^/]+/g, '[^/]+').replace(/\*$/, '.*')}$`);
  return { method, regex, policy, params: pattern.endsWith('*') ? Number.POSITIVE_INFINITY : (pattern.match(/:/g) ?? []).length };
});
// Literal segments win over parameters and a wildcard comes last, as in the router.
MATCHERS.sort((a, b) => a.params - b.params);

/** The policy of the route a request path would reach, before routing; undefined for no route. */
export function policyOfPath(method: string, path: string): RoutePolicy | undefined {
  const m = method === 'HEAD' ? 'GET' : method;
  return MATCHERS.find((r) => (r.method === m || r.method === 'ALL') && r.regex.test(path))?.policy;
}
