import type { ApiBody } from '../../src/contract/api.ts';
import { LAST_EVENT_ID_PREFERENCE, type Profile } from '../../src/contract/accounts.ts';
import { call, send, urlOf } from '../app/api.ts';

// Sign-in calls expect 401 and must not be treated as an expired session.
const anonymous = true;

/** Sign-up, sign-in (password and single sign-on), the profile and the password. */
export const accounts = {
  signupStatus: () => call('GET /api/signup-status', { anonymous }),
  signup: (body: ApiBody<'POST /api/signup'>) => call('POST /api/signup', { body, anonymous }),
  viewInvitation: (token: string) => call('POST /api/invitations/view', { body: { token }, anonymous }),
  acceptInvitation: (body: ApiBody<'POST /api/invitations/accept'>) => call('POST /api/invitations/accept', { body, anonymous }),
  login: (body: ApiBody<'POST /api/login'>) => call('POST /api/login', { body, anonymous }),
  signOnUrl: (next: string | null) => urlOf('GET /api/idp/login', {}, { next: next || undefined }),
  signOnVerify: (code: string) => call('POST /api/idp/mfa-verify', { body: { code }, anonymous }),
  profile: (opts: { anonymous?: boolean } = {}) => call('GET /api/profile', opts),
  /** The profile, with the event stream's position when it was read (`X-Last-Event-Id`; null from a server without it). */
  profileAt: async (opts: { anonymous?: boolean } = {}) => {
    const res = await send('GET /api/profile', { ...opts, headers: { Prefer: LAST_EVENT_ID_PREFERENCE } });
    return { profile: (await res.json()) as Profile, eventId: res.headers.get('X-Last-Event-Id') };
  },
  /** The account's opt-out from content search; the owner changes it. */
  contentSearchPreference: () => call('GET /api/user/content-search-preference'),
  setContentSearchOptOut: (optOut: boolean) => call('PUT /api/user/content-search-preference', { body: { optOut } }),
  logout: () => call('POST /api/logout'),
  logoutAll: (body: ApiBody<'POST /api/logout-all'>) => call('POST /api/logout-all', { body }),
  changePassword: (body: ApiBody<'POST /api/change-password'>) => call('POST /api/change-password', { body }),
};

/** Signed-in sessions and presence (docs/api.md › Sessions and presence). */
export const sessions = {
  list: () => call('GET /api/sessions', { query: { refreshIp: 'true' } }),
  revoke: (sessionId: string) => call('DELETE /api/sessions/:sessionId', { params: { sessionId } }),
  revokeOthers: () => call('POST /api/sessions/revoke-others'),
  heartbeat: () => call('POST /api/sessions/heartbeat'),
  /** Sent with `navigator.sendBeacon` as the page hides or closes. */
  offlineUrl: urlOf('POST /api/sessions/offline'),
};

/** Two-factor authentication. */
export const mfa = {
  setup: () => call('POST /api/mfa/setup'),
  verify: (code: string) => call('POST /api/mfa/verify', { body: { code } }),
  disable: (code: string) => call('POST /api/mfa/disable', { body: { code } }),
  regenerateBackupCodes: () => call('POST /api/mfa/backup-codes/regenerate'),
  backupCodeCount: () => call('GET /api/mfa/backup-codes/count'),
};

/** WebDAV devices: app passwords, and the account's locks. */
export const devices = {
  appPasswords: () => call('GET /api/user/app-passwords'),
  createAppPassword: (body: ApiBody<'POST /api/user/app-passwords'>) => call('POST /api/user/app-passwords', { body }),
  revokeAppPassword: (id: string) => call('DELETE /api/user/app-passwords/:id', { params: { id } }),
  locks: () => call('GET /api/user/dav-locks'),
  removeLock: (token: string) => call('DELETE /api/user/dav-locks/:token', { params: { token } }),
  /** A Nextcloud client's browser sign-in: which client asks, and the answer. */
  loginFlow: (token: string) => call('GET /api/login-flows/:token', { params: { token } }),
  grantLoginFlow: (token: string, body: ApiBody<'POST /api/login-flows/:token/grant'>) =>
    call('POST /api/login-flows/:token/grant', { params: { token }, body }),
  cancelLoginFlow: (token: string) => call('POST /api/login-flows/:token/cancel', { params: { token } }),
};

/** An account owner's sub-users. */
export const subUsers = {
  list: () => call('GET /api/user/sub-users'),
  create: (body: ApiBody<'POST /api/user/sub-users'>) => call('POST /api/user/sub-users', { body }),
  setPermissions: (id: string, body: ApiBody<'PUT /api/user/sub-users/:id'>) =>
    call('PUT /api/user/sub-users/:id', { params: { id }, body }),
  remove: (id: string) => call('DELETE /api/user/sub-users/:id', { params: { id } }),
};

/** The signed-in login's passkeys, and signing in with one (no email). */
export const passkeys = {
  list: () => call('GET /api/passkeys'),
  registrationOptions: (body: ApiBody<'POST /api/passkeys/register/options'>) => call('POST /api/passkeys/register/options', { body }),
  add: (body: ApiBody<'POST /api/passkeys'>) => call('POST /api/passkeys', { body }),
  remove: (id: string) => call('DELETE /api/passkeys/:id', { params: { id } }),
  signInOptions: () => call('POST /api/passkeys/sign-in/options', { anonymous }),
  signIn: (body: ApiBody<'POST /api/passkeys/sign-in'>) => call('POST /api/passkeys/sign-in', { body, anonymous }),
};
