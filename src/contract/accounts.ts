import { z } from 'zod';
import { confirmationFields } from './confirmation.ts';
import { built, lazySchema } from './lazy-schema.ts';
import { EMAIL_MAX, MFA_CODE_MAX, PASSWORD, SETUP_CODE_MAX } from './limits.ts';
import { assertionBody } from './passkeys.ts';
import { PERMISSION_CATALOG, type Permission } from './permissions.ts';

/** Accounts: sign-up, sign-in, sessions, two-factor, app passwords and sub-users. */

/** What an email address must look like (docs/api.md › Limits): the API's fields and the CLI check with this. */
export const EMAIL = lazySchema(() =>
  z.email({ message: 'Enter a valid email address' }).max(EMAIL_MAX, `Email must be at most ${EMAIL_MAX} characters`),
);

// Shapes only: the password, name and email rules are the accounts service's.
const password = (field: string) => z.string({ error: `${field} is required` });
export const signupBody = lazySchema(() =>
  z.object({
    email: built(EMAIL),
    password: password('password'),
    name: z.string().optional(),
    setupCode: z.string().max(SETUP_CODE_MAX, `setupCode must be at most ${SETUP_CODE_MAX} characters`).optional(),
  }),
);
export const loginBody = lazySchema(() =>
  z.object({
    email: built(EMAIL),
    password: password('password'),
    mfaCode: z.string().max(MFA_CODE_MAX).optional(),
    // With two-factor on: a passkey's answer in place of the code.
    passkey: assertionBody.optional(),
  }),
);
export const changePasswordBody = lazySchema(() =>
  z.object({
    oldPassword: z.string().min(1, 'Enter your current password').max(PASSWORD.max),
    newPassword: password('newPassword'),
    // WebDAV devices keep working after a password change unless the user asks (issue 22).
    revokeAppPasswords: z.boolean().optional(),
    // Passkeys sign in without the password, so a changed password leaves them working unless the user asks.
    removePasskeys: z.boolean().optional(),
  }),
);
export const logoutAllBody = lazySchema(() => z.object({ revokeAppPasswords: z.boolean().optional() }).nullable());
export const idpMfaBody = lazySchema(() =>
  z.object({
    code: z.string({ error: 'Enter the code from your authenticator app or a backup code' }).max(MFA_CODE_MAX),
  }),
);

export const mfaVerifyBody = lazySchema(() =>
  z.object({ code: z.string().regex(/^\d{6}$/, 'Enter the 6-digit code from your authenticator app') }),
);
export const mfaDisableBody = lazySchema(() =>
  z.object({
    code: z
      .string()
      .trim()
      .regex(/^(\d{6}|[A-Za-z0-9]{4}-?[A-Za-z0-9]{4})$/, 'Enter a 6-digit code or an 8-character backup code'),
  }),
);

export const appPasswordBody = lazySchema(() => z.object({ name: z.string({ error: 'name is required' }), ...confirmationFields }));
/** Granting a client's sign-in flow: an app password, confirmed as appPasswordBody's. */
export const loginFlowGrantBody = lazySchema(() => z.object(confirmationFields).nullable());

const permissionKeys = PERMISSION_CATALOG.map((p) => p.key) as [Permission, ...Permission[]];
const permissionsField = lazySchema(() =>
  z.array(z.enum(permissionKeys, { message: `Unknown permission; valid keys: ${permissionKeys.join(', ')}` }), {
    message: 'permissions must be an array of permission keys',
  }),
);
export const subUserBody = lazySchema(() =>
  z.object({
    email: built(EMAIL),
    password: z.string({ error: 'password is required' }),
    name: z.string({ error: 'Name is required' }),
    permissions: built(permissionsField),
  }),
);
export const permissionsBody = lazySchema(() => z.object({ permissions: built(permissionsField) }));

/** How a login can sign in: an account made through single sign-on has no password until an admin sets one. */
export type SignInMethod = 'password' | 'idp' | 'passkey';

/** A login as sign-up and sign-in answer it. */
export interface PublicUser {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  mfaEnabled: boolean;
}

/**
 * Sent as `Prefer: last-event-id` with `GET /api/profile`: the answer then carries `X-Last-Event-Id`, the newest change's
 * seq, for a first event stream to start after (docs/activity.md › Live streams that resume).
 */
export const LAST_EVENT_ID_PREFERENCE = 'last-event-id';

export interface Profile extends PublicUser {
  /** null for an account owner, who holds every permission. */
  permissions: Permission[] | null;
  signInMethods: SignInMethod[];
}

export interface SignupStatus {
  signupEnabled: boolean;
  /** No account exists yet: the one created now becomes the administrator. */
  firstUser: boolean;
  /** The first sign-up needs the setup code the server printed (no account yet, server reachable beyond loopback). */
  setupCodeRequired: boolean;
  /** False when only the identity provider signs people in (OIDC_DISABLE_PASSWORD_LOGIN). */
  passwordLogin: boolean;
  /** Single sign-on: whether it is offered, and the provider's name for the button. */
  idp: { enabled: boolean; name: string | null };
}

export interface Session {
  id: string;
  user_id: string;
  token_version: number;
  user_agent: string;
  ip_address: string;
  created_at: string;
  last_activity: string;
  is_online: boolean;
  isCurrent: boolean;
}

/** GET /api/user/app-passwords: a WebDAV device's password, never its secret. */
export interface AppPassword {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  lastIp: string | null;
}

/** GET /api/login-flows/:token: which Nextcloud client asks for access (v2 desktop, v1 mobile). */
export interface LoginFlowView {
  clientName: string;
  kind: 'v1' | 'v2';
}

/** A WebDAV lock of the account, as its owner's list shows it. */
export interface DavLock {
  token: string;
  path: string;
  login: { id: string; name: string; email: string };
  scope: 'exclusive' | 'shared';
  depth: '0' | 'infinity';
  expiresAt: string;
}

export interface PermissionInfo {
  key: Permission;
  label: string;
  description: string;
}

export interface SubUser {
  id: string;
  email: string;
  name: string;
  permissions: Permission[];
  createdAt: string;
  mfaEnabled: boolean;
}
