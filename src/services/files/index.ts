import { createHmac } from 'node:crypto';
import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { AuditService } from '../administration/audit.ts';
import type { SettingsService } from '../administration/settings.ts';
import type { StorageLocationService } from '../administration/storage-location.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { ActivityService } from '../changes/activity.ts';
import { ChangeEvents } from '../changes/change-events.ts';
import { ChangeLog } from '../changes/change-log.ts';
import { AccessTracker } from './access.ts';
import { CopyService } from './copy.ts';
import { DiskSpaceService } from './disk-space.ts';
import { DownloadService } from './downloads.ts';
import { FileEvents } from './file-events.ts';
import { FileJobService } from './file-jobs.ts';
import { GroupService } from './groups.ts';
import { ItemViews } from './item-views.ts';
import { LibraryFiles } from './library-files.ts';
import { hasThumbnailWith } from '../thumbnails/formats.ts';
import { ItemService } from './items.ts';
import { MemberService, NotificationService } from './members.ts';
import { PageCache } from './page-cache.ts';
import { QuotaService } from './quota.ts';
import { ShareService } from './shares.ts';
import { TrashService } from './trash.ts';
import { Tree } from './tree.ts';
import { UploadIntentService } from './upload-intents.ts';
import { UploadService } from './uploads.ts';
import { VersionService } from './versions.ts';

export interface FilesServices {
  changes: ChangeLog;
  changeEvents: ChangeEvents;
  activity: ActivityService;
  quota: QuotaService;
  access: AccessTracker;
  items: ItemService;
  uploads: UploadService;
  uploadIntents: UploadIntentService;
  diskSpace: DiskSpaceService;
  downloads: DownloadService;
  trash: TrashService;
  copy: CopyService;
  fileJobs: FileJobService;
  shares: ShareService;
  members: MemberService;
  groups: GroupService;
  notifications: NotificationService;
  versions: VersionService;
}

interface FilesDeps {
  audit: AuditService;
  settings: SettingsService;
  storageLocation: StorageLocationService;
}

/** The file tree and everything done to it: listing, uploads, downloads, trash, copies, quotas, share links. */
export function createFilesServices(infra: Infrastructure, { audit, settings, storageLocation }: FilesDeps) {
  const { clock, log, config, queue, storage, repos } = infra;
  const { transactions } = repos;
  // Unfinished uploads that announced their length (tus, chunked) hold it against the quota until they end.
  const reservations = { reserved: (accountId: string) => repos.tusUploads.reserved(accountId) + repos.chunkedUploads.reserved(accountId) };
  const quota = new QuotaService(repos.users, reservations, repos.versions, queue, config.defaultStorageLimit);
  const changeVersion = () => repos.database.changeVersion();
  const accessVersion = () => repos.database.accessVersion();
  const tree = new Tree(repos.items, repos.members, () => settings.get('peopleSharing'), accessVersion);
  const hasThumbnail = hasThumbnailWith(config.ffmpegPath !== null);
  const views = new ItemViews(repos.shares, repos.libraries, repos.thumbnails, hasThumbnail);
  const access = new AccessTracker(repos.items, clock);
  const changes = new ChangeLog({ clock, repo: repos.changes, members: repos.members, tree, retentionDays: config.changesRetentionDays });
  const events = new FileEvents(infra.hub, audit, repos.members, repos.items, (itemId) => changes.claimSeq(itemId), accessVersion);
  const notifications = new NotificationService({ clock, members: repos.members, hub: infra.hub });
  const shares = new ShareService({
    views,
    notifications,
    clock,
    transactions,
    shares: repos.shares,
    items: repos.items,
    users: repos.users,
    tree,
    events,
    changes,
    audit,
    settings,
    pages: new PageCache(changeVersion, (page) => page.items.length),
    // A key of its own, so an unlock cookie's signature can never pass for a session token's.
    unlockKey: createHmac('sha256', infra.jwtSecret).update('coffer share unlock cookies').digest(),
  });
  const items = new ItemService({
    clock,
    transactions,
    items: repos.items,
    shareLinks: repos.shares,
    members: repos.members,
    teamFolders: repos.teamFolders,
    libraries: repos.libraries,
    tree,
    views,
    access,
    events,
    changes,
    shares,
    pages: new PageCache(changeVersion, (cached) => cached.page.items.length),
    thumbnails: repos.thumbnails,
  });
  const uploadIntents = new UploadIntentService(repos.uploadIntents, storage, clock, log, storageLocation);
  const diskSpace = new DiskSpaceService(infra);
  const versions = new VersionService({
    clock,
    queue,
    transactions,
    items: repos.items,
    versions: repos.versions,
    tree,
    views,
    events,
    changes,
    quota,
    settings,
    administersTeam: (accountId, teamId) => repos.teamFolders.administers(accountId, teamId),
  });
  const libraryFiles = new LibraryFiles(repos.libraries, repos.items);
  const fileDeps = {
    clock,
    queue,
    storage,
    transactions,
    items: repos.items,
    tree,
    events,
    changes,
    quota,
    intents: uploadIntents,
    disk: diskSpace,
    versions: repos.versions,
  };
  const uploads = new UploadService({ ...fileDeps, versions, log, folders: items, views, settings });
  const downloads = new DownloadService({
    clock,
    log,
    storage,
    items: repos.items,
    versions: repos.versions,
    tree,
    access,
    audit,
    libraryFiles,
  });
  const trash = new TrashService({ ...fileDeps, listing: items });
  const members = new MemberService(
    {
      clock,
      transactions,
      members: repos.members,
      groups: repos.groups,
      users: repos.users,
      tree,
      views,
      hub: infra.hub,
      audit,
      settings,
      changes,
    },
    notifications,
  );
  const groups = new GroupService(
    { clock, transactions, groups: repos.groups, members: repos.members, users: repos.users, audit },
    members,
    notifications,
  );
  const services: FilesServices = {
    changes,
    changeEvents: new ChangeEvents(changes),
    activity: new ActivityService({ changes, items: repos.items, members: repos.members, users: repos.users, tree }),
    quota,
    access,
    items,
    uploads,
    uploadIntents,
    diskSpace,
    downloads,
    trash,
    copy: new CopyService({ ...fileDeps, libraryFiles }),
    fileJobs: new FileJobService(queue),
    shares,
    members,
    groups,
    notifications,
    versions,
  };
  const lifecycles = {
    // Objects of uploads a crash cut off go before anything new is written (nothing is in flight yet).
    uploadIntents: { name: 'upload intents', start: async () => void (await uploadIntents.sweep()) } satisfies Lifecycle,
    accessTimes: { name: 'access times', stop: () => access.stop() } satisfies Lifecycle,
    diskSpace: {
      name: 'disk space',
      start: () => {
        const disk = diskSpace.status();
        if (disk.low) diskSpace.warnLow(disk);
      },
    } satisfies Lifecycle,
  };
  // Other domains build on the tree, its views and its events; routes reach them through the services only.
  return { services, shared: { tree, views, events, changes, libraryFiles }, lifecycles };
}
