import type { Lifecycle } from '../../lib/lifecycle.ts';
import { ResumableStore } from '../../storage/resumable.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { FilesServices } from '../files/index.ts';
import type { SharingServices } from '../sharing/index.ts';
import type { ItemViews } from '../files/item-views.ts';
import type { Tree } from '../files/tree.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { TusUploadService } from './tus-uploads.ts';

export interface ResumableUploadServices {
  tusUploads: TusUploadService;
}

type ResumableUploadDeps = {
  settings: SettingsService;
  tree: Tree;
  views: ItemViews;
  otherStaging: { keysInUse(keys: readonly string[]): Set<string> };
} & Pick<FilesServices, 'quota' | 'diskSpace' | 'uploads'> &
  Pick<SharingServices, 'shares' | 'members'>;

/** Uploads that resume after a broken connection (tus). */
export function createResumableUploadServices(infra: Infrastructure, d: ResumableUploadDeps) {
  const { log, repos, storage } = infra;
  const tusUploads = new TusUploadService({
    clock: infra.retentionClock,
    log,
    transactions: repos.transactions,
    repo: repos.tusUploads,
    users: repos.users,
    tree: d.tree,
    quota: d.quota,
    settings: d.settings,
    disk: d.diskSpace,
    sealed: storage,
    resumable: new ResumableStore(storage),
    uploads: d.uploads,
    views: d.views,
    drops: d.shares,
    otherStaging: d.otherStaging,
    expiryMs: infra.config.tusExpiryHours * 3600_000,
  });
  d.diskSpace.addPromised(() => repos.tusUploads.promised(infra.retentionClock.now()));
  // A member's upload into a shared folder it no longer edits can never finish, and its reservation holds the owner's quota.
  d.members.onEditorEnd(({ ownerId, accountId }) => {
    tusUploads
      .leaveShare(accountId, ownerId)
      .catch((err) => log.warn('could not end the resumable uploads of a member whose right ended', { err: String(err) }));
  });
  // Files of uploads a crash left fully stored are created now, not at the next scheduled sweep.
  const resumableUploads: Lifecycle = {
    name: 'resumable uploads',
    start: () => {
      tusUploads.sweep().catch((err: unknown) => log.warn('resumable upload sweep failed', { err: String(err) }));
    },
  };
  return { services: { tusUploads } satisfies ResumableUploadServices, lifecycles: { resumableUploads } };
}
