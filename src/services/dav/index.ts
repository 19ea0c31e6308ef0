import type { AuditService } from '../admin/audit.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { FilesServices } from '../files/index.ts';
import type { SharingServices } from '../sharing/index.ts';
import type { VersionsServices } from '../versions/index.ts';
import type { Tree } from '../files/tree.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { ResumableStore } from '../../storage/resumable.ts';
import { ChunkedUploadService } from './chunked-uploads.ts';
import { DavService } from './dav.ts';
import { DavSync } from './dav-sync.ts';
import { DavLockService } from './dav-locks.ts';
import { DavTrashbin } from './trashbin.ts';
import { DavVersions } from './versions.ts';
import type { ThumbnailService } from '../thumbnails/thumbnails.ts';

export interface DavServices {
  dav: DavService;
  davSync: DavSync;
  davTrashbin: DavTrashbin;
  davVersions: DavVersions;
  chunkedUploads: ChunkedUploadService;
}

// Nextcloud removes an upload folder untouched for a day; so does Coffer.
const CHUNKED_UPLOAD_EXPIRY_MS = 24 * 3600_000;

type DavDeps = { audit: AuditService; tree: Tree; settings: SettingsService; thumbnails: ThumbnailService } & Pick<
  FilesServices,
  'items' | 'uploads' | 'downloads' | 'trash' | 'copy' | 'quota' | 'diskSpace' | 'changes'
> &
  Pick<SharingServices, 'members'> &
  VersionsServices;

/** WebDAV over the file tree; its locks are shared with accounts, which release them when access ends. */
export function createDavServices(infra: Infrastructure, d: DavDeps) {
  const { repos } = infra;
  const peopleSharing = () => d.settings.get('peopleSharing');
  const davLocks = new DavLockService(infra.clock, {
    version: () => `${repos.database.accessVersion()} ${repos.database.authVersion()} ${peopleSharing()}`,
    stillHeld: (lock) => {
      const login = repos.users.authUser(lock.loginId);
      if (!login || login.disabledAt !== null) return false;
      return !lock.share || d.tree.editsShared(lock.share.memberAccountId, lock.share.rootId);
    },
  });
  d.members.onEditorEnd(({ ownerId, itemId, accountId }) => davLocks.forgetShare(ownerId, itemId, accountId));
  d.diskSpace.addPromised(() => repos.chunkedUploads.promised(infra.retentionClock.now()));
  const chunkedUploads = new ChunkedUploadService({
    clock: infra.retentionClock,
    log: infra.log,
    transactions: repos.transactions,
    repo: repos.chunkedUploads,
    sealed: infra.storage,
    resumable: new ResumableStore(infra.storage),
    quota: d.quota,
    settings: d.settings,
    disk: d.diskSpace,
    expiryMs: CHUNKED_UPLOAD_EXPIRY_MS,
  });
  d.members.onEditorEnd(({ ownerId, accountId }) => {
    if (!repos.members.editorOwnersOf(accountId).includes(ownerId))
      chunkedUploads
        .leaveRoom(accountId, ownerId)
        .catch((err) => infra.log.warn('could not end the chunked uploads of a member whose right ended', { err: String(err) }));
  });
  const dav = new DavService({
    transactions: repos.transactions,
    items: repos.items,
    checksums: repos.fileChecksums,
    properties: repos.davProperties,
    listing: d.items,
    uploads: d.uploads,
    downloads: d.downloads,
    trash: d.trash,
    copy: d.copy,
    quota: d.quota,
    locks: davLocks,
    users: repos.users,
    audit: d.audit,
    tree: d.tree,
    members: repos.members,
    teamFolders: repos.teamFolders,
    accessVersion: () => repos.database.accessVersion(),
    previews: d.thumbnails,
    chunked: chunkedUploads,
  });
  const services: DavServices = {
    dav,
    davSync: new DavSync({ dav, items: repos.items, changes: d.changes }, infra.jwtSecret),
    davTrashbin: new DavTrashbin({ items: repos.items, trash: d.trash, dav, clock: infra.clock }),
    davVersions: new DavVersions({ items: repos.items, versions: d.versions, dav }),
    chunkedUploads,
  };
  return { services, shared: { davLocks } };
}
