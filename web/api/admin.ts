import type { ApiBody, ApiQuery } from '../../src/contract/api.ts';
import { call, send } from '../app/api.ts';

/** Instance settings: what every login reads, and the switches the admin turns. */
export const settings = {
  status: () => call('GET /api/user/signup-status'),
  docserverConfigured: () => call('GET /api/user/docserver-configured'),
  maxUploadSize: () => call('GET /api/user/max-upload-size-config'),
  setMaxUploadSize: (maxBytes: number) => call('PUT /api/user/max-upload-size-config', { body: { maxBytes } }),
  shareBaseUrl: () => call('GET /api/user/share-base-url-config'),
  setShareBaseUrl: (url: string | null) => call('PUT /api/user/share-base-url-config', { body: { url } }),
  knownProxies: () => call('GET /api/user/known-proxies-config'),
  setKnownProxies: (knownProxies: string[]) => call('PUT /api/user/known-proxies-config', { body: { knownProxies } }),
  docserver: () => call('GET /api/user/docserver-config'),
  setDocserver: (body: ApiBody<'PUT /api/user/docserver-config'>) => call('PUT /api/user/docserver-config', { body }),
  versions: () => call('GET /api/user/versions-config'),
  setVersions: (body: ApiBody<'PUT /api/user/versions-config'>) => call('PUT /api/user/versions-config', { body }),
  davAccountPasswords: () => call('GET /api/user/webdav-account-password-config'),
  setDavAccountPasswords: (enabled: boolean) => call('PUT /api/user/webdav-account-password-config', { body: { enabled } }),
  contentSearch: () => call('GET /api/user/content-search-config'),
  setContentSearch: (enabled: boolean) => call('PUT /api/user/content-search-config', { body: { enabled } }),
  peopleSharing: () => call('GET /api/user/people-sharing-config'),
  setPeopleSharing: (enabled: boolean) => call('PUT /api/user/people-sharing-config', { body: { enabled } }),
  setSignup: (enabled: boolean) => call('POST /api/user/signup-toggle', { body: { enabled } }),
  setHideFileExtensions: (hidden: boolean) => call('PUT /api/user/hide-file-extensions-config', { body: { hidden } }),
  setAllowPasswordChange: (enabled: boolean) => call('PUT /api/user/password-change-config', { body: { enabled } }),
  setDesktopOnlyAccess: (enabled: boolean) => call('PUT /api/user/desktop-only-access-config', { body: { enabled } }),
};

/** The admin's accounts, desktop clients, orphan review and version. */
export const admin = {
  users: (query: ApiQuery<'GET /api/user/all'>) => call('GET /api/user/all', { query }),
  invitations: () => call('GET /api/user/invitations'),
  invite: (body: ApiBody<'POST /api/user/invitations'>) => call('POST /api/user/invitations', { body }),
  withdrawInvitation: (id: string) => call('DELETE /api/user/invitations/:id', { params: { id } }),
  addAccount: (body: ApiBody<'POST /api/user/accounts'>) => call('POST /api/user/accounts', { body }),
  setDisabled: (id: string, disabled: boolean) => call('PATCH /api/user/:id', { params: { id }, body: { disabled } }),
  confirmEmail: (id: string) => call('POST /api/user/:id/confirm-email', { params: { id } }),
  deleteUser: (id: string, body: ApiBody<'DELETE /api/user/:id'> = {}) => call('DELETE /api/user/:id', { params: { id }, body }),
  setStorageLimit: (body: ApiBody<'PUT /api/user/storage-limit'>) => call('PUT /api/user/storage-limit', { body }),
  clients: () => call('GET /api/user/active-clients'),
  /** A page of 100 events of the audit log, newest first, from `cursor` (the first page without). */
  audit: (query: Omit<ApiQuery<'GET /api/admin/audit'>, 'limit'>) =>
    call('GET /api/admin/audit', { query: { limit: 100, ...query } }).then((r) => ({ items: r.events, nextCursor: r.nextCursor })),
  /** 202 while the scan runs: the caller polls with the job id. */
  scanOrphans: (query: { graceMinutes: number } | { jobId: string }) => send('GET /api/user/orphans', { query }),
  deleteOrphans: (body: ApiBody<'POST /api/user/orphans/delete'>) => send('POST /api/user/orphans/delete', { body }),
  backups: () => call('GET /api/user/backups'),
  backUpNow: () => call('POST /api/user/backups/run'),
  version: () => call('GET /api/version'),
  latestVersion: () => call('GET /api/version/latest'),
};
