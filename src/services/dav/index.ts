import type { AuditService } from '../administration/audit.ts';
import type { SettingsService } from '../administration/settings.ts';
import type { FilesServices } from '../files/index.ts';
import type { Tree } from '../files/tree.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { ResumableStore } from '../../storage/resumable.ts';
import { ChunkedUploadService } from './chunked-uploads.ts';
import { DavService } from './dav.ts';
import { DavLockService } from './dav-locks.ts';

export interface DavServices {
  dav: DavService;
  chunkedUploads: ChunkedUploadService;
}

// Nextcloud removes an upload folder untouched for a day; so does Coffer.
const CHUNKED_UPLOAD_EXPIRY_MS = 24 * 3600_000;

type DavDeps = { audit: AuditService; tree: Tree; settings: SettingsService } & Pick<
  FilesServices,
  'items' | 'uploads' | 'downloads' | 'trash' | 'copy' | 'quota' | 'members' | 'diskSpace'
>;

/** WebDAV over the file tree; its locks are shared with accounts, which release them when access ends. */
export function createDavServices(infra: Infrastructure, d: DavDeps) {
  const { repos } = infra;
  const davLocks = new DavLockService(infra.clock);
  d.members.onEditorEnd(({ ownerId, itemId, accountId }) => davLocks.forgetShare(ownerId, itemId, accountId));
  d.diskSpace.addPromised(() => repos.chunkedUploads.promised(infra.clock.now()));
  const services: DavServices = {
    dav: new DavService({
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
    }),
    chunkedUploads: new ChunkedUploadService({
      clock: infra.clock,
      log: infra.log,
      transactions: repos.transactions,
      repo: repos.chunkedUploads,
      sealed: infra.storage,
      resumable: new ResumableStore(infra.storage),
      quota: d.quota,
      settings: d.settings,
      disk: d.diskSpace,
      expiryMs: CHUNKED_UPLOAD_EXPIRY_MS,
    }),
  };
  return { services, shared: { davLocks } };
}
