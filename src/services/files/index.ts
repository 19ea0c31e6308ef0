import { Jobs } from '../../jobs/catalog.ts';
import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { AuditService } from '../admin/audit.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { StorageLocationService } from '../admin/storage-location.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { ActivityService } from '../changes/activity.ts';
import { ChangeEvents } from '../changes/change-events.ts';
import { ChangeLog } from '../changes/change-log.ts';
import { OutsideChanges } from './outside-changes.ts';
import { AccessTracker } from './access.ts';
import { CopyService } from './copy.ts';
import { DiskSpaceService } from './disk-space.ts';
import { DownloadService } from './downloads.ts';
import { FileEvents } from './file-events.ts';
import { FileJobService, JobStarters } from './file-jobs.ts';
import { type HasThumbnail, ItemViews } from './item-views.ts';
import { LibraryContent, type LibraryStaging } from './library-content.ts';
import { LibraryFiles } from './library-files.ts';
import { ItemService } from './items.ts';
import { PageCache } from './page-cache.ts';
import { QuotaService } from './quota.ts';
import { TrashService } from './trash.ts';
import { Tree } from './tree.ts';
import { UploadIntentService } from './upload-intents.ts';
import { type ReplacedVersions, UploadService } from './uploads.ts';

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
}

/** What the file tree gives the versions domain, which keeps a file's replaced content. */
export interface VersionsDeps {
  tree: Tree;
  views: ItemViews;
  events: FileEvents;
  changes: ChangeLog;
  quota: QuotaService;
  libraryContent: LibraryContent;
  intents: UploadIntentService;
}

interface FilesDeps<V> {
  audit: AuditService;
  settings: SettingsService;
  storageLocation: StorageLocationService;
  /** Which types get a thumbnail (the thumbnails domain's rule, given by the composition root). */
  hasThumbnail: HasThumbnail;
  /** The versions domain's service, made from the tree's parts: replacing content keeps a version through it. */
  makeVersions: (deps: VersionsDeps) => V;
  /** Writes a library's host folder (the libraries domain's, which builds on this one). */
  libraryStaging: LibraryStaging;
}

/** The file tree and everything done to it: listing, uploads, downloads, trash, copies, quotas, share links. */
export function createFilesServices<V extends ReplacedVersions>(
  infra: Infrastructure,
  { audit, settings, storageLocation, hasThumbnail, makeVersions, libraryStaging }: FilesDeps<V>,
) {
  const { clock, log, config, queue, storage, repos } = infra;
  const { transactions } = repos;
  // Unfinished uploads that announced their length (tus, chunked) hold it against the quota until they end.
  const reservations = { reserved: (accountId: string) => repos.tusUploads.reserved(accountId) + repos.chunkedUploads.reserved(accountId) };
  const quota = new QuotaService(repos.users, reservations, repos.versions, queue, config.defaultStorageLimit);
  const changeVersion = () => repos.database.changeVersion();
  const accessVersion = () => repos.database.accessVersion();
  const tree = new Tree(repos.items, repos.members, () => settings.get('peopleSharing'), accessVersion, repos.teamFolders);
  const views = new ItemViews(repos.shares, repos.libraries, repos.thumbnails, hasThumbnail);
  const access = new AccessTracker(repos.items, clock, log);
  const changes = new ChangeLog({
    clock,
    retentionClock: infra.retentionClock,
    repo: repos.changes,
    members: repos.members,
    tree,
    retentionDays: config.changesRetentionDays,
  });
  const events = new FileEvents(
    infra.hub,
    audit,
    repos.members,
    repos.items,
    (itemId) => changes.claimSeq(itemId),
    accessVersion,
    () => tree.peopleSharingEnabled(),
  );
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
    pages: new PageCache(changeVersion, (cached) => cached.page.items.length),
    thumbnails: repos.thumbnails,
  });
  const uploadIntents = new UploadIntentService(repos.uploadIntents, storage, clock, log, storageLocation);
  // Grouped writes are uploads' intents and rows: each checks the location, which none of them writes, and reads the
  // usage counter, which only their quota adjustments write.
  transactions.scopeGroups({
    run: (writes) => storageLocation.checkedOnceWhile(() => quota.readOnceWhile(writes)),
    rolledBack: () => quota.forgetReads(),
  });
  const diskSpace = new DiskSpaceService(infra);
  const libraryFiles = new LibraryFiles(repos.libraries, repos.items);
  const libraryContent = new LibraryContent({
    clock,
    log,
    storage,
    intents: uploadIntents,
    libraries: repos.libraries,
    files: libraryFiles,
    host: libraryStaging,
    settings,
  });
  const versions = makeVersions({ tree, views, events, changes, quota, libraryContent, intents: uploadIntents });
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
    starters: new JobStarters(repos.users, repos.teamFolders),
    checksums: repos.fileChecksums,
  };
  const uploads = new UploadService({ ...fileDeps, versions, log, folders: items, views, settings, libraryContent });
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
    zipLimits: config.zips,
  });
  const trash = new TrashService({ ...fileDeps, retentionClock: infra.retentionClock, listing: items, libraries: repos.libraries });
  const copy = new CopyService({ ...fileDeps, libraryFiles, libraryContent, trash });
  // Moves across a library's edge are a copy then a delete, which the tree's own moves leave to the copies.
  items.moveAcrossWith(copy);
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
    copy,
    fileJobs: new FileJobService(queue),
  };
  const outsideChanges = new OutsideChanges({
    changes,
    events,
    dataVersion: () => repos.database.dataVersion(),
    library: (id) => repos.libraries.get(id),
    log,
  });
  const lifecycles = {
    outsideChanges: { name: 'outside changes', start: () => outsideChanges.start(), stop: () => outsideChanges.stop() } satisfies Lifecycle,
    // Objects of uploads a crash cut off go before anything new is written (nothing is in flight yet).
    uploadIntents: { name: 'upload intents', start: async () => void (await uploadIntents.sweep()) } satisfies Lifecycle,
    interruptedTrash: {
      name: 'interrupted trash',
      start: () => {
        const items = transactions.immediate(() => repos.items.settleInterruptedTrash([Jobs.filesTrash.name, Jobs.filesRestore.name]));
        if (items) log.warn('put back items a crash left half trashed or half restored', { items });
      },
    } satisfies Lifecycle,
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
  return { services, shared: { tree, views, events, changes, libraryFiles, versions }, lifecycles };
}
