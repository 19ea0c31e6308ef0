import { z } from 'zod';
import { built, lazySchema } from './lazy-schema.ts';
import { byteCount } from './byte-count.ts';
import { EMAIL } from './accounts.ts';
import { confirmationFields } from './confirmation.ts';
import { PASSWORD } from './limits.ts';
import { pageLimit } from './paging.ts';

/** The administrator's API: instance settings, accounts and their limits, desktop clients, orphan review. */

export const enabledBody = lazySchema(() => z.object({ enabled: z.boolean({ message: 'enabled must be true or false' }) }));
export const optOutBody = lazySchema(() => z.object({ optOut: z.boolean({ message: 'optOut must be true or false' }) }));
export const hiddenBody = lazySchema(() => z.object({ hidden: z.boolean({ message: 'hidden must be true or false' }) }));
export const docserverBody = lazySchema(() => z.object({ jwtSecret: z.string().max(1024).nullish(), url: z.string().max(2048).nullish() }));
export const shareBaseUrlBody = lazySchema(() => z.object({ url: z.string().nullish() }));
// These two are checked by the settings service (its rules), so the schemas only describe them.
export const maxUploadSizeBody = lazySchema(() => z.object({ maxBytes: z.number().int().nullable() }));
export const knownProxiesBody = lazySchema(() => z.object({ knownProxies: z.array(z.string()) }));
// Shapes only: the ranges are the settings service's rules, checked together before any is stored.
export const versionsConfigBody = lazySchema(() =>
  z.object({
    enabled: z.boolean().optional(),
    retentionDays: z.number().optional(),
    maxPerFile: z.number().optional(),
  }),
);

/** File versions as Admin → Instance shows them. */
export interface VersionsConfig {
  enabled: boolean;
  retentionDays: number;
  maxPerFile: number;
}

/** How Admin → Users orders owners: by creation (the default), name, email or storage used (largest first). */
const USER_SORTS = ['created', 'name', 'email', 'storage'] as const;
export type UserSort = (typeof USER_SORTS)[number];

export const userListQuery = lazySchema(() =>
  z.object({
    limit: pageLimit(100).default(50),
    cursor: z.string().optional(),
    // A widening: owners whose email or name contains `q`, each still followed by its sub-users.
    q: z.string().trim().max(200, 'q must be at most 200 characters').optional(),
    sort: z.enum(USER_SORTS, { message: `sort must be one of ${USER_SORTS.join(', ')}` }).optional(),
  }),
);
const storageLimit = lazySchema(() => byteCount('storageLimit'));
/** Admin → Users → Add user: an invitation link, or (with `password`) the account at once. */
export const addUserBody = lazySchema(() =>
  z.object({
    email: built(EMAIL),
    name: z.string().optional(),
    storageLimit: storageLimit.nullish(),
    // Shape only: the password rule is the accounts service's.
    password: z.string().max(PASSWORD.max).optional(),
    // The admin's own password (or code), asked again unless it signed in within the last minutes.
    currentPassword: confirmationFields.password,
    code: confirmationFields.code,
  }),
);
/** Deleting an account: the admin's own password (or code), asked again unless it signed in within the last minutes. */
export const deleteAccountBody = lazySchema(() =>
  z.object({ currentPassword: confirmationFields.password, code: confirmationFields.code }),
);
export const invitationTokenBody = lazySchema(() =>
  z.object({ token: z.string().min(1, 'token is required').max(200, 'token is too long') }),
);
export const acceptInvitationBody = lazySchema(() =>
  z.object({
    token: z.string().min(1, 'token is required').max(200, 'token is too long'),
    password: z.string({ error: 'password is required' }),
    name: z.string().optional(),
  }),
);

/** An invitation as the admin sees it; `url` only in the answer that created it (the token is not kept). */
export interface InvitationEntry {
  id: string;
  email: string;
  name: string;
  storageLimit: number | null;
  createdAt: string;
  expiresAt: string;
}
/** What the invitation page shows before the invitee sets a password. */
export interface InvitationView {
  email: string;
  name: string;
  expiresAt: string;
}
export const storageLimitBody = lazySchema(() =>
  z.object({
    targetUserId: z.string().min(1, 'targetUserId is required'),
    storageLimit: storageLimit.nullish(),
  }),
);
export const accountStateBody = lazySchema(() => z.object({ disabled: z.boolean({ message: 'disabled must be true or false' }) }));
export const clientHeartbeatBody = lazySchema(() =>
  z.object({
    appVersion: z.string().trim().min(1, 'appVersion is required').max(64),
    platform: z.string().trim().max(64).optional(),
    clientId: z.string().trim().max(128).optional(),
  }),
);

/** Admin → Instance → Content search: the switch and how far indexing has come. */
export interface ContentSearchConfig {
  enabled: boolean;
  /** Files whose text was extracted (or found to have none). */
  indexed: number;
  /** Files waiting for extraction. */
  pending: number;
  /** Bytes of text kept in the index. */
  textBytes: number;
}

/** An account's choice about content search: whether the instance offers it, and whether the owner opted out. */
export interface ContentSearchPreference {
  available: boolean;
  optOut: boolean;
}

/** GET /api/user/docserver-configured, with the extensions the editor opens (a widening, docs/documents.md). */
export interface DocserverConfigured {
  configured: boolean;
  extensions: readonly string[];
}

/** GET /api/user/signup-status: the instance switches; every `canToggle` is true for the admin only. */
export interface InstanceStatus {
  signupEnabled: boolean;
  canToggle: boolean;
  hideFileExtensions: boolean;
  canToggleHideFileExtensions: boolean;
  desktopOnlyAccess: boolean;
  canToggleDesktopOnlyAccess: boolean;
  allowPasswordChange: boolean;
  canToggleAllowPasswordChange: boolean;
  totalUsers?: number;
  additionalUsers?: number;
  /** MAP_TILE_URL's template ({z}/{x}/{y}), when configured: the photo details draw the place on one tile. */
  mapTileUrl?: string;
}

/** An entry of the admin's account list: owners, each followed by its sub-users. */
export interface UserEntry {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  mfaEnabled: boolean;
  storageUsed: number;
  /** The account's own limit; null when it follows the instance default. */
  storageLimit: number | null;
  /** The limit in effect (own, else the instance default); null when unlimited. */
  storageTotal: number | null;
  parentUserId: string | null;
  permissions: string[] | null;
  /** The account is disabled: none of its logins may sign in (a sub-user shows its owner's state). */
  disabled: boolean;
  /** The account is being deleted (its files first). */
  deletionPending: boolean;
  /**
   * The admin chose or confirmed the login's address (docs/sign-on.md): single sign-on may link to it by email. False for
   * one typed at public sign-up or by an owner for a sub-user, until the admin confirms it.
   */
  emailTrusted?: boolean;
  /** Owners: how many of its items the account shares with people. */
  sharedWithPeople?: number;
}

/** A stored object no row points at. */
interface StorageOrphan {
  key: string;
  size: number;
  lastModified: string;
}

/** A file row whose stored object is missing. */
interface DatabaseOrphan {
  id: string;
  name: string;
  path: string;
  size: number;
  mimeType: string | null;
  modified: string;
  createdAt: string;
  trashed: boolean;
  ownerEmail: string | null;
  ownerName: string | null;
}

export interface OrphanReport {
  scannedAt: string;
  graceMinutes: number;
  driver: string;
  totals: { storedObjects: number; databaseRows: number; skippedTooRecent: number };
  storageOrphans: { items: StorageOrphan[]; count: number; totalBytes: number; truncated: boolean };
  databaseOrphans: { items: DatabaseOrphan[]; count: number; totalBytes: number; truncated: boolean };
  /** Only when the store cannot list incomplete multipart uploads: its answer. */
  incompleteUploadsUnlisted?: string;
}

export interface OrphanDeletion {
  graceMinutes: number;
  storage: { results: Array<{ key: string; deleted: boolean; reason?: string }>; deleted: number; skipped: number };
  database: { results: Array<{ id: string; deleted: boolean; reason?: string }>; deleted: number; skipped: number };
}

export interface ActiveClient {
  id: string;
  userId: string;
  userName: string;
  userEmail: string;
  appVersion: string;
  platform: string;
  ipAddress: string;
  lastSeenAt: string;
  connectedSince: string;
}

/** The document server's settings as the admin sees them: never the secret itself. */
export interface DocserverSettings {
  jwtSecretSet: boolean;
  url: string;
}

/** One backup run, as GET /api/user/backups shows it. */
export interface BackupRunView {
  trigger: 'scheduled' | 'manual';
  status: 'running' | 'succeeded' | 'failed';
  startedAt: string;
  finishedAt: string | null;
  durationSeconds: number | null;
  bytes: number | null;
  archive: string | null;
  error: string | null;
}

export interface BackupStatus {
  schedule: string;
  destination: string;
  encrypted: boolean;
  keep: number;
  running: boolean;
  lastRun: BackupRunView | null;
  lastSuccessAt: string | null;
  lastFailure: BackupRunView | null;
  nextRunAt: string | null;
  /** Why an admin should look: the last scheduled backup failed, or the last success is older than twice the interval. */
  warning: string | null;
  /** Continuous replication (REPLICATE_TO); absent or null when it is off. */
  replication?: ReplicationStatus | null;
}

export interface ReplicationStatus {
  /** The directory or `s3://bucket/prefix`. */
  destination: string;
  /** The generation being shipped; null while shipping is stopped. */
  generation: string | null;
  /** Seconds since the oldest change not yet at the destination (0: none waiting). */
  lagSeconds: number;
  lastShippedAt: string | null;
  /** Sealed bytes on disk waiting for the destination. */
  backlogBytes: number;
  /** Why an admin should look: shipping stopped, the destination fails, or the replica is behind. */
  warning: string | null;
}

export const AUDIT_STATUSES = ['success', 'failure', 'denied'] as const;
/** `denied`: refused by a permission or role check; `failure`: anything else that failed. */
export type AuditStatus = (typeof AUDIT_STATUSES)[number];
export type AuditActorKind = 'login' | 'anonymous' | 'cli' | 'system';

/** One event of the audit log, as Admin → Audit log, `GET /api/admin/audit` and `coffer audit list --json` give it. */
export interface AuditEvent {
  id: number;
  at: string;
  action: string;
  status: AuditStatus;
  actor: AuditActorKind;
  loginId: string | null;
  email: string | null;
  accountId: string | null;
  ip: string | null;
  targetType: string | null;
  targetId: string | null;
  details: Record<string, unknown> | null;
  /** The X-Request-Id of the request that acted, as in its access log line; null for the CLI and jobs. */
  requestId: string | null;
}

/** Admin → Audit log: the instance's events, newest first, narrowed as `coffer audit list` narrows them. */
export const auditListQuery = lazySchema(() =>
  z.object({
    limit: pageLimit(200).default(100),
    cursor: z.string().optional(),
    action: z
      .string()
      .trim()
      .regex(/^[a-z_]{1,32}(\.[a-z_]{1,64})?$/, 'action must be an action such as auth.sign_in, or a group such as auth')
      .optional(),
    // A login's email or id.
    user: z.string().trim().min(1, 'user must not be empty').max(320, 'user must be at most 320 characters').optional(),
    status: z.enum(AUDIT_STATUSES, { error: `status must be one of ${AUDIT_STATUSES.join(', ')}` }).optional(),
    since: z.iso.datetime({ offset: true, error: 'since must be an ISO 8601 date and time, such as 2026-12-01T00:00:00Z' }).optional(),
  }),
);
