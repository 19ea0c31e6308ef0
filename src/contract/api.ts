import type { z } from 'zod';
import type {
  AppPassword,
  LoginFlowView,
  appPasswordBody,
  loginFlowGrantBody,
  changePasswordBody,
  DavLock,
  idpMfaBody,
  loginBody,
  logoutAllBody,
  mfaDisableBody,
  mfaVerifyBody,
  PermissionInfo,
  Profile,
  PublicUser,
  permissionsBody,
  Session,
  SignupStatus,
  SubUser,
  signupBody,
  subUserBody,
} from './accounts.ts';
import type { ActivityPage, ActivityPerson, activityPeopleQuery, activityQuery } from './activity.ts';
import type { newWebhookBody, Webhook, WebhookDelivery, WebhookWithSecret, webhookPatchBody } from './webhooks.ts';
import type {
  Album,
  AlbumLinkView,
  AlbumMember,
  AlbumPage,
  albumItemsBody,
  albumLinkBody,
  albumItemsQuery,
  albumListQuery,
  albumMemberBody,
  albumPatchBody,
  newAlbumBody,
} from './albums.ts';
import type {
  ActiveClient,
  accountStateBody,
  ContentSearchConfig,
  ContentSearchPreference,
  BackupStatus,
  DocserverConfigured,
  DocserverSettings,
  docserverBody,
  enabledBody,
  hiddenBody,
  InstanceStatus,
  knownProxiesBody,
  maxUploadSizeBody,
  OrphanDeletion,
  optOutBody,
  OrphanReport,
  shareBaseUrlBody,
  storageLimitBody,
  UserEntry,
  VersionsConfig,
  versionsConfigBody,
  userListQuery,
  auditListQuery,
  AuditEvent,
  addUserBody,
  deleteAccountBody,
  invitationTokenBody,
  acceptInvitationBody,
  InvitationEntry,
  InvitationView,
} from './admin.ts';
import type {
  FileVersion,
  folderBody,
  folderQuery,
  Item,
  ItemInfo,
  idsBody,
  ItemSummary,
  JobStatus,
  NewFolder,
  Photo,
  photosQuery,
  liveListQuery,
  placeBody,
  QueuedJob,
  recentQuery,
  renameBody,
  Stats,
  StorageUsage,
  SearchHit,
  searchQuery,
  sharedQuery,
  starBody,
  trashQuery,
  uploadCheckBody,
} from './files.ts';
import type {
  GroupChoice,
  GroupDetail,
  GroupMember,
  GroupView,
  groupAdminBody,
  groupBody,
  groupMemberBody,
  groupPatchBody,
  groupSearchQuery,
  groupTeamFolderBody,
  TeamFolderChoice,
  TeamFolderView,
  teamFolderBody,
  teamFolderGroupsBody,
  teamFolderPatchBody,
} from './groups.ts';
import type { LibraryView, libraryBody } from './libraries.ts';
import type { assertionBody, PasskeyEntry, registerBody, registerOptionsBody, WebAuthnOptions } from './passkeys.ts';
import type {
  linkListQuery,
  linkOptionsBody,
  Member,
  memberBody,
  NotificationEntry,
  notificationsReadBody,
  PersonSuggestion,
  peoplePageQuery,
  roleBody,
  SharedGroup,
  SharedWithMeItem,
  ShareLinkPage,
  ShareLinkQr,
  ShareLinks,
  ShareLinkView,
  shareBody,
  suggestionQuery,
} from './sharing.ts';

type In<S extends z.ZodType> = z.input<S>;
type Message = { message: string };
type Ok = { ok: boolean };
type SignedIn = { user: PublicUser };
/** An orphan scan or deletion still running: poll again with its job id. */
type OrphanJobPending = { jobId: string; status: string };

/**
 * Every JSON endpoint the web app calls, by its route key: what it sends (`body`, `query`) and what it
 * reads back (`response`). The server's route declarations are checked against `response` (http/route.ts)
 * and its body schemas are the ones named here; the web app's clients (web/api/) call through this map.
 */
export interface Api {
  'GET /api/activity': { query: In<typeof activityQuery>; response: ActivityPage };
  'GET /api/activity/people': { query: In<typeof activityPeopleQuery>; response: { people: ActivityPerson[] } };
  'GET /api/files': { query: In<typeof folderQuery>; response: Item[] };
  'GET /api/files/starred': { query: In<typeof liveListQuery>; response: Item[] };
  'GET /api/files/shared': { query: In<typeof sharedQuery>; response: Item[] };
  'GET /api/files/trash': { query: In<typeof trashQuery>; response: Item[] };
  'GET /api/files/recent': { query: In<typeof recentQuery>; response: Item[] };
  'GET /api/files/photos': { query: In<typeof photosQuery>; response: Photo[] };
  'GET /api/albums': { query: In<typeof albumListQuery>; response: { albums: Album[]; nextCursor: string | null } };
  'POST /api/albums': { body: In<typeof newAlbumBody>; response: { album: Album } };
  'GET /api/albums/:id': { query: In<typeof albumItemsQuery>; response: AlbumPage };
  'PATCH /api/albums/:id': { body: In<typeof albumPatchBody>; response: { album: Album } };
  'DELETE /api/albums/:id': { response: Message };
  'POST /api/albums/:id/items': { body: In<typeof albumItemsBody>; response: { album: Album; added: number } };
  'DELETE /api/albums/:id/items': { body: In<typeof albumItemsBody>; response: { album: Album; removed: number } };
  'GET /api/albums/:id/members': { response: { members: AlbumMember[] } };
  'POST /api/albums/:id/members': { body: In<typeof albumMemberBody>; response: { member: AlbumMember } };
  'DELETE /api/albums/:id/members/:accountId': { response: Message };
  'GET /api/albums/:id/link': { response: { link: AlbumLinkView | null } };
  'POST /api/albums/:id/link': { body: In<typeof albumLinkBody>; response: { link: AlbumLinkView } };
  'PATCH /api/albums/:id/link': { body: In<typeof albumLinkBody>; response: { link: AlbumLinkView } };
  'GET /api/albums/:id/link/qr': { response: ShareLinkQr };
  'DELETE /api/albums/:id/link': { response: Message };
  'GET /api/files/search': { query: In<typeof searchQuery>; response: SearchHit[] };
  'GET /api/files/stats': { response: Stats };
  'GET /api/files/:id/info': { response: ItemInfo };
  'POST /api/files/folder': { body: In<typeof folderBody>; response: NewFolder };
  'POST /api/files/move': { body: In<typeof placeBody>; response: Message };
  'POST /api/files/rename': { body: In<typeof renameBody>; response: ItemSummary };
  'POST /api/files/star': { body: In<typeof starBody>; response: Message };
  'POST /api/files/copy': { body: In<typeof placeBody>; response: QueuedJob };
  'GET /api/files/jobs/:jobId': { response: JobStatus };
  /** NDJSON progress lines when asked for (docs/api.md › Progress streaming). */
  'POST /api/files/delete': { body: In<typeof idsBody>; response: Message | QueuedJob; stream: true };
  'POST /api/files/trash/restore': { body: In<typeof idsBody>; response: Message | QueuedJob; stream: true };
  'POST /api/files/trash/delete': { body: In<typeof idsBody>; response: QueuedJob };
  'POST /api/files/trash/empty': { response: Message | QueuedJob };
  /** A finished resumable upload's file (HEAD on the same route answers its progress, no body). */
  'GET /api/files/tus/:uploadId': { response: { item: Item; clientId: string | null } | null };
  'POST /api/files/upload/check': { body: In<typeof uploadCheckBody>; response: { allowed: true } };
  'POST /api/files/share': { body: In<typeof shareBody>; response: ShareLinks | Message };
  'POST /api/files/share/links': { body: In<typeof idsBody>; response: ShareLinks };
  'GET /api/files/share/links': { query: In<typeof linkListQuery>; response: ShareLinkPage };
  'PATCH /api/files/share/links/:token': { body: In<typeof linkOptionsBody>; response: ShareLinkView };
  'GET /api/people/suggestions': { query: In<typeof suggestionQuery>; response: { people: PersonSuggestion[] } };
  'GET /api/files/share/links/:token/qr': { response: ShareLinkQr };
  'GET /api/files/:id/members': { response: { members: Member[]; groups: SharedGroup[] } };
  'POST /api/files/:id/members': { body: In<typeof memberBody>; response: { member: Member } | { group: SharedGroup } };
  'PATCH /api/files/:id/members/:accountId': { body: In<typeof roleBody>; response: { member: Member } };
  'DELETE /api/files/:id/members/:accountId': { response: Message };
  'PATCH /api/files/:id/groups/:groupId': { body: In<typeof roleBody>; response: { group: SharedGroup } };
  'DELETE /api/files/:id/groups/:groupId': { response: Message };
  'GET /api/groups': { query: In<typeof groupSearchQuery>; response: { groups: GroupChoice[] } };
  'GET /api/groups/:id': { response: GroupDetail };
  'POST /api/groups/:id/members': { body: In<typeof groupMemberBody>; response: { member: GroupMember } };
  'DELETE /api/groups/:id/members/:accountId': { response: Message };
  'GET /api/admin/groups': { response: { groups: GroupView[] } };
  'POST /api/admin/groups': { body: In<typeof groupBody>; response: GroupDetail };
  'GET /api/admin/groups/:id': { response: GroupDetail };
  'PATCH /api/admin/groups/:id': { body: In<typeof groupPatchBody>; response: GroupDetail };
  'DELETE /api/admin/groups/:id': { response: Message };
  'POST /api/admin/groups/:id/members': { body: In<typeof groupMemberBody>; response: { member: GroupMember } };
  'PATCH /api/admin/groups/:id/members/:accountId': { body: In<typeof groupAdminBody>; response: { member: GroupMember } };
  'DELETE /api/admin/groups/:id/members/:accountId': { response: Message };
  'GET /api/admin/libraries': { response: { libraries: LibraryView[] } };
  'POST /api/admin/libraries': { body: In<typeof libraryBody>; response: { library: LibraryView; warning: string } };
  'GET /api/admin/libraries/:id': { response: LibraryView };
  'POST /api/admin/libraries/:id/rescan': { response: Message & { library: LibraryView } };
  'DELETE /api/admin/libraries/:id': { response: Message };
  'GET /api/admin/team-folders': { response: { teamFolders: TeamFolderView[] } };
  'POST /api/admin/team-folders': { body: In<typeof teamFolderBody>; response: TeamFolderView };
  'PATCH /api/admin/team-folders/:id': { body: In<typeof teamFolderPatchBody>; response: TeamFolderView };
  'PUT /api/admin/team-folders/:id/groups': { body: In<typeof teamFolderGroupsBody>; response: TeamFolderView };
  'DELETE /api/admin/team-folders/:id': { response: Message & { jobId: string } };
  'POST /api/groups/:id/team-folders': { body: In<typeof groupTeamFolderBody>; response: TeamFolderView };
  'GET /api/team-folders': { response: { teamFolders: TeamFolderChoice[] } };
  'GET /api/team-folders/:id/trash': { query: In<typeof trashQuery>; response: Item[] };
  'POST /api/team-folders/:id/trash/restore': { body: In<typeof idsBody>; response: Message | QueuedJob };
  'POST /api/team-folders/:id/trash/delete': { body: In<typeof idsBody>; response: QueuedJob };
  'POST /api/team-folders/:id/share': { body: In<typeof shareBody>; response: ShareLinks | Message };
  'POST /api/team-folders/:id/share/links': { body: In<typeof idsBody>; response: ShareLinks };
  'GET /api/team-folders/:id/share/links': { query: In<typeof linkListQuery>; response: ShareLinkPage };
  'PATCH /api/team-folders/:id/share/links/:token': { body: In<typeof linkOptionsBody>; response: ShareLinkView };
  'DELETE /api/team-folders/:id/share/links/:token': { response: Message };
  'GET /api/files/shared-with-me': {
    query: In<typeof peoplePageQuery>;
    response: { items: SharedWithMeItem[]; nextCursor: string | null };
  };
  'GET /api/notifications': {
    query: In<typeof peoplePageQuery>;
    response: { notifications: NotificationEntry[]; unread: number; nextCursor: string | null };
  };
  'POST /api/notifications/read': { body: In<typeof notificationsReadBody>; response: { unread: number } };
  'GET /api/user/storage': { response: StorageUsage };
  'GET /api/files/:id/versions': { response: { versions: FileVersion[] } };
  'POST /api/files/:id/versions/:versionId/restore': { response: Item };
  'DELETE /api/files/:id/versions/:versionId': { response: Message };

  'GET /api/signup-status': { response: SignupStatus };
  'POST /api/signup': { body: In<typeof signupBody>; response: SignedIn };
  'POST /api/invitations/view': { body: In<typeof invitationTokenBody>; response: InvitationView };
  'POST /api/invitations/accept': { body: In<typeof acceptInvitationBody>; response: SignedIn };
  'POST /api/login': { body: In<typeof loginBody>; response: SignedIn };
  'POST /api/idp/mfa-verify': { body: In<typeof idpMfaBody>; response: SignedIn };
  'POST /api/logout': { response: Message };
  'POST /api/logout-all': { body: In<typeof logoutAllBody>; response: Message };
  'POST /api/change-password': { body: In<typeof changePasswordBody>; response: Message };
  'GET /api/profile': { response: Profile };
  'GET /api/sessions': { query: { refreshIp?: 'true' }; response: { sessions: Session[] } };
  'POST /api/sessions/heartbeat': { response: Ok };
  'POST /api/sessions/revoke-others': { response: Message & { deletedCount: number } };
  'DELETE /api/sessions/:sessionId': { response: Message };
  'POST /api/mfa/setup': { response: { secret: string; qrCode: string } };
  'POST /api/mfa/verify': { body: In<typeof mfaVerifyBody>; response: { backupCodes: string[]; shouldPromptSessions: boolean } };
  'POST /api/mfa/disable': { body: In<typeof mfaDisableBody>; response: { shouldPromptSessions: boolean } };
  'POST /api/mfa/backup-codes/regenerate': { response: { backupCodes: string[] } };
  'GET /api/mfa/backup-codes/count': { response: { count: number } };
  'GET /api/passkeys': { response: { passkeys: PasskeyEntry[] } };
  'POST /api/passkeys/register/options': { body: In<typeof registerOptionsBody>; response: WebAuthnOptions };
  'POST /api/passkeys': { body: In<typeof registerBody>; response: { passkey: PasskeyEntry } };
  'DELETE /api/passkeys/:id': { response: Message };
  'POST /api/passkeys/sign-in/options': { response: WebAuthnOptions };
  'POST /api/passkeys/sign-in': { body: In<typeof assertionBody>; response: SignedIn };
  'GET /api/user/app-passwords': { response: { appPasswords: AppPassword[] } };
  'POST /api/user/app-passwords': { body: In<typeof appPasswordBody>; response: AppPassword & { password: string } };
  'DELETE /api/user/app-passwords/:id': { response: Message };
  'GET /api/login-flows/:token': { response: LoginFlowView };
  'POST /api/login-flows/:token/grant': { body: In<typeof loginFlowGrantBody>; response: { redirect: string | null } };
  'POST /api/login-flows/:token/cancel': { response: Message };
  'GET /api/user/dav-locks': { response: { locks: DavLock[] } };
  'DELETE /api/user/dav-locks/:token': { response: Message };
  'GET /api/webhooks': { response: { webhooks: Webhook[] } };
  'POST /api/webhooks': { body: In<typeof newWebhookBody>; response: WebhookWithSecret };
  'GET /api/webhooks/:id': { response: { webhook: Webhook } };
  'PATCH /api/webhooks/:id': { body: In<typeof webhookPatchBody>; response: { webhook: Webhook } };
  'DELETE /api/webhooks/:id': { response: Message };
  'POST /api/webhooks/:id/rotate-secret': { response: WebhookWithSecret };
  'GET /api/webhooks/:id/deliveries': { response: { deliveries: WebhookDelivery[] } };
  'POST /api/webhooks/:id/test': { response: { delivery: WebhookDelivery } };
  'POST /api/webhooks/:id/deliveries/:deliveryId/redeliver': { response: { delivery: WebhookDelivery } };
  'GET /api/admin/audit': { query: In<typeof auditListQuery>; response: { events: AuditEvent[]; nextCursor: string | null } };
  'GET /api/admin/webhooks': { response: { webhooks: Webhook[] } };
  'POST /api/admin/webhooks': { body: In<typeof newWebhookBody>; response: WebhookWithSecret };
  'GET /api/admin/webhooks/:id': { response: { webhook: Webhook } };
  'PATCH /api/admin/webhooks/:id': { body: In<typeof webhookPatchBody>; response: { webhook: Webhook } };
  'DELETE /api/admin/webhooks/:id': { response: Message };
  'POST /api/admin/webhooks/:id/rotate-secret': { response: WebhookWithSecret };
  'GET /api/admin/webhooks/:id/deliveries': { response: { deliveries: WebhookDelivery[] } };
  'POST /api/admin/webhooks/:id/test': { response: { delivery: WebhookDelivery } };
  'POST /api/admin/webhooks/:id/deliveries/:deliveryId/redeliver': { response: { delivery: WebhookDelivery } };
  'GET /api/user/sub-users': { response: { subUsers: SubUser[]; availablePermissions: PermissionInfo[] } };
  'POST /api/user/sub-users': { body: In<typeof subUserBody>; response: { subUser: SubUser } };
  'PUT /api/user/sub-users/:id': { body: In<typeof permissionsBody>; response: { subUser: SubUser } };
  'DELETE /api/user/sub-users/:id': { response: Message };

  'GET /api/user/signup-status': { response: InstanceStatus };
  'POST /api/user/signup-toggle': { body: In<typeof enabledBody>; response: { signupEnabled: boolean } };
  'GET /api/user/docserver-configured': { response: DocserverConfigured };
  'GET /api/user/docserver-config': { response: DocserverSettings };
  'PUT /api/user/docserver-config': { body: In<typeof docserverBody>; response: DocserverSettings };
  'GET /api/user/share-base-url-config': { response: { url: string | null } };
  'PUT /api/user/share-base-url-config': { body: In<typeof shareBaseUrlBody>; response: { url: string | null } };
  'GET /api/user/max-upload-size-config': { response: { maxBytes: number } };
  'PUT /api/user/max-upload-size-config': { body: In<typeof maxUploadSizeBody>; response: { maxBytes: number } };
  'GET /api/user/known-proxies-config': { response: { knownProxies: string[] } };
  'PUT /api/user/known-proxies-config': {
    body: In<typeof knownProxiesBody>;
    response: { knownProxies: string[]; restartRequired: boolean };
  };
  'PUT /api/user/hide-file-extensions-config': { body: In<typeof hiddenBody>; response: { hideFileExtensions: boolean } };
  'PUT /api/user/desktop-only-access-config': { body: In<typeof enabledBody>; response: { desktopOnlyAccess: boolean } };
  'PUT /api/user/password-change-config': { body: In<typeof enabledBody>; response: { allowPasswordChange: boolean } };
  'GET /api/user/versions-config': { response: VersionsConfig };
  'PUT /api/user/versions-config': { body: In<typeof versionsConfigBody>; response: VersionsConfig };
  'GET /api/user/webdav-account-password-config': { response: { enabled: boolean } };
  'PUT /api/user/webdav-account-password-config': { body: In<typeof enabledBody>; response: { enabled: boolean } };
  'GET /api/user/content-search-config': { response: ContentSearchConfig };
  'PUT /api/user/content-search-config': { body: In<typeof enabledBody>; response: ContentSearchConfig };
  'GET /api/user/content-search-preference': { response: ContentSearchPreference };
  'PUT /api/user/content-search-preference': { body: In<typeof optOutBody>; response: ContentSearchPreference };
  'GET /api/user/people-sharing-config': { response: { enabled: boolean } };
  'PUT /api/user/people-sharing-config': { body: In<typeof enabledBody>; response: { enabled: boolean } };
  'POST /api/user/accounts': { body: In<typeof addUserBody>; response: SignedIn };
  'GET /api/user/invitations': { response: { invitations: InvitationEntry[] } };
  'POST /api/user/invitations': { body: In<typeof addUserBody>; response: { invitation: InvitationEntry; url: string } };
  'DELETE /api/user/invitations/:id': { response: Message };
  'GET /api/user/all': { query: In<typeof userListQuery>; response: { users: UserEntry[]; nextCursor: string | null } };
  'PATCH /api/user/:id': { body: In<typeof accountStateBody>; response: { id: string; email: string; disabled: boolean } };
  'POST /api/user/:id/confirm-email': { response: { id: string; email: string; changed: boolean } };
  'DELETE /api/user/:id': { body: In<typeof deleteAccountBody>; response: QueuedJob };
  'PUT /api/user/storage-limit': { body: In<typeof storageLimitBody>; response: { storageLimit: number | null } };
  'GET /api/user/active-clients': { response: { clients: ActiveClient[] } };
  /** `graceMinutes` starts a scan, `jobId` polls it; 202 until the report is ready. */
  'GET /api/user/orphans': { query: { graceMinutes?: number; jobId?: string }; response: OrphanReport | OrphanJobPending };
  'POST /api/user/orphans/delete': {
    body: { storageKeys: string[]; fileIds: string[]; graceMinutes: number } | { jobId: string };
    response: OrphanDeletion | OrphanJobPending;
  };
  'GET /api/user/backups': { response: BackupStatus };
  /** 202: the backup runs as a job; 409 while one waits or runs. */
  'POST /api/user/backups/run': { response: { jobId: string } };
  'GET /api/version': { response: { backend: string; updateFeed: boolean } };
  'GET /api/version/latest': { response: Record<string, unknown> };
}

export type ApiKey = keyof Api;
/** What a route of the contract takes as its body, and as its query. */
export type ApiBody<K extends ApiKey> = Api[K] extends { body: infer B } ? B : never;
export type ApiQuery<K extends ApiKey> = Api[K] extends { query: infer Q } ? Q : never;

type ParamsOfPath<P extends string> = P extends `${string}:${infer N}/${infer Rest}`
  ? { [k in N]: string } & ParamsOfPath<`/${Rest}`>
  : P extends `${string}:${infer N}`
    ? { [k in N]: string }
    : P extends `${string}*`
      ? { '*': string }
      : unknown;
/** The path parameters of a route key: `{id: string}` for `GET /api/files/:id/info`; `{'*': string}` for a wildcard. */
export type PathParams<K extends string> = ParamsOfPath<K extends `${string} ${infer P}` ? P : never>;
