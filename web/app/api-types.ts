// The public API's response shapes the app reads. test/types/web-api.ts checks each against the
// server's own type, so a change on either side fails `tsc` instead of drifting.

export interface Item {
  id: string;
  name: string;
  type: 'file' | 'folder';
  size: number | null;
  mimeType: string | null;
  parentId: string | null;
  starred: boolean;
  shared: boolean;
  modified: string;
  accessedAt: string;
  sharedAt: string | null;
  expiresAt: string | null;
  deletedAt?: string;
}

export interface ItemInfo {
  id: string;
  name: string;
  type: 'file' | 'folder';
  size: number | null;
  modified: string;
  accessedAt: string;
  parentId: string | null;
  mimeType?: string | null;
  shared?: boolean;
  sharedAt?: string | null;
  expiresAt?: string | null;
  folderInfo?: { totalSize: number; fileCount: number; folderCount: number };
  /** Inside an item another account shares with this one: whose it is and what this account may do. */
  sharedWithMe?: { owner: { id: string; name: string; email: string } | null; role: 'viewer' | 'editor'; rootId: string };
}

export interface StorageUsage {
  used: number;
  total: number | null;
  free: number | null;
}

export interface Profile {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  mfaEnabled: boolean;
  /** null for an account owner, who holds every permission. */
  permissions: string[] | null;
  /** How the login signs in: an account made through single sign-on has no password until an admin sets one. */
  signInMethods: Array<'password' | 'idp'>;
}

/** GET /api/user/docserver-configured, with the extensions the editor opens (a widening, docs/documents.md). */
export interface DocserverConfigured {
  configured: boolean;
  extensions: string[];
}

export interface Stats {
  totalFiles: number;
  totalFolders: number;
  sharedCount: number;
  starredCount: number;
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

export type Expiry = '7d' | '30d' | 'never';

export interface QueuedJob {
  message: string;
  queued: true;
  jobId: string;
}

export interface JobStatus {
  jobId: string;
  status: string;
  result?: { count: number; ids?: string[] };
}

/** One line of an NDJSON progress answer (SPEC "Progress streaming"). */
export type ProgressLine =
  | { type: 'progress'; done: number; total: number }
  | { type: 'done'; message: string }
  | { type: 'error'; message: string };

/** A message of GET /api/files/events (COMPAT "Events (SSE)"). */
export interface FileEvent {
  type: string;
  timestamp?: string;
  data?: {
    id?: string;
    name?: string;
    type?: string;
    parentId?: string | null;
    starred?: boolean;
    shared?: boolean;
    action?: string;
    count?: number;
    unread?: number;
    text?: string;
  };
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
  key: string;
  label: string;
  description: string;
}

export interface SubUser {
  id: string;
  email: string;
  name: string;
  permissions: string[];
  createdAt: string;
  mfaEnabled: boolean;
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
  /** The limit in effect; null when unlimited. */
  storageTotal: number | null;
  parentUserId: string | null;
  permissions: string[] | null;
  /** The account is disabled: none of its logins may sign in. */
  disabled: boolean;
  /** The account is being deleted (its files first). */
  deletionPending: boolean;
  /** Owners: how many of its items the account shares with people. */
  sharedWithPeople?: number;
}

/** A person an item is shared with (GET /api/files/:id/members). */
export interface Member {
  accountId: string;
  email: string;
  name: string;
  role: 'viewer' | 'editor';
  addedAt: string;
}

/** An item another account shares with this one (GET /api/files/shared-with-me). */
export type SharedWithMeItem = Item & { owner: { id: string; name: string; email: string }; role: 'viewer' | 'editor'; sharedAt: string };

export interface NotificationEntry {
  id: string;
  type: string;
  text: string;
  itemId: string | null;
  createdAt: string;
  readAt: string | null;
}

export interface OrphanReport {
  scannedAt: string;
  graceMinutes: number;
  driver: string;
  totals: { storedObjects: number; databaseRows: number; skippedTooRecent: number };
  storageOrphans: { items: { key: string; size: number; lastModified: string }[]; count: number; totalBytes: number; truncated: boolean };
  databaseOrphans: {
    items: {
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
    }[];
    count: number;
    totalBytes: number;
    truncated: boolean;
  };
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
