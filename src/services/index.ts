import type { CoreContext } from '../context.ts';
import type { Repos } from '../db/repos/index.ts';
import { AccessTracker } from './files/access.ts';
import { AccountService } from './accounts/accounts.ts';
import { SetupCodeService } from './accounts/setup-code.ts';
import { AppPasswordService } from './accounts/app-passwords.ts';
import { AuditService } from './administration/audit.ts';
import { BackupService } from './maintenance/backup.ts';
import { ClientService } from './accounts/clients.ts';
import { CopyService } from './files/copy.ts';
import { DavService } from './dav/dav.ts';
import { DavLockService } from './dav/dav-locks.ts';
import { DiskSpaceService } from './files/disk-space.ts';
import { DocserverService } from './docserver/docserver.ts';
import { DoctorService } from './maintenance/doctor.ts';
import { DownloadService } from './files/downloads.ts';
import { FileEvents } from './files/file-events.ts';
import { FileJobService } from './files/file-jobs.ts';
import { IdpService } from './sign-on/idp.ts';
import { ItemViews } from './files/item-views.ts';
import { ItemService } from './files/items.ts';
import { KeyService } from './maintenance/keys.ts';
import { MetricsService } from './administration/metrics.ts';
import { MfaService } from './accounts/mfa.ts';
import { OrphanService } from './maintenance/orphans.ts';
import { PageCache } from './files/page-cache.ts';
import { QuotaService } from './files/quota.ts';
import { SessionService } from './accounts/sessions.ts';
import { SettingsService } from './administration/settings.ts';
import { StorageLocationService } from './administration/storage-location.ts';
import { StorageMigrationService } from './maintenance/storage-migration.ts';
import { ShareService } from './files/shares.ts';
import { SubUserService } from './accounts/sub-users.ts';
import { TrashService } from './files/trash.ts';
import { TusUploadService } from './resumable-uploads/tus-uploads.ts';
import { ResumableStore } from '../storage/resumable.ts';
import { Tree } from './files/tree.ts';
import { UploadIntentService } from './files/upload-intents.ts';
import { UploadService } from './files/uploads.ts';
import { UsersService } from './accounts/users.ts';
import { VersionService } from './administration/version.ts';

/** The domain services. Each gets the repositories and services it uses, nothing else (never the database). */
export interface Services {
  version: VersionService;
  metrics: MetricsService;
  audit: AuditService;
  settings: SettingsService;
  sessions: SessionService;
  mfa: MfaService;
  accounts: AccountService;
  setupCode: SetupCodeService;
  idp: IdpService;
  quota: QuotaService;
  users: UsersService;
  subUsers: SubUserService;
  clients: ClientService;
  orphans: OrphanService;
  keys: KeyService;
  backup: BackupService;
  doctor: DoctorService;
  storageLocation: StorageLocationService;
  storageMigration: StorageMigrationService;
  access: AccessTracker;
  items: ItemService;
  uploads: UploadService;
  tusUploads: TusUploadService;
  uploadIntents: UploadIntentService;
  diskSpace: DiskSpaceService;
  downloads: DownloadService;
  trash: TrashService;
  copy: CopyService;
  fileJobs: FileJobService;
  shares: ShareService;
  docserver: DocserverService;
  appPasswords: AppPasswordService;
  dav: DavService;
}

type ServiceContext = Omit<CoreContext, 'db'>;

export function createServices(core: ServiceContext, repos: Repos): Services {
  const { clock, log, config, queue, storage } = core;
  const { transactions } = repos;
  const metrics = new MetricsService();
  const audit = new AuditService({
    repo: repos.audit,
    metrics,
    clock,
    log,
    retentionDays: config.auditRetentionDays,
    gaugeIntervalSeconds: config.queueMetricsIntervalSeconds,
  });
  const settings = new SettingsService(repos.settings, repos.database, repos.users, clock, audit);
  const sessions = new SessionService({
    clock,
    presence: core.presence,
    jwtSecret: core.jwtSecret,
    transactions,
    users: repos.users,
    sessions: repos.sessions,
    audit,
  });
  const mfa = new MfaService(repos.mfa, core.keyring, clock, audit, sessions);
  const setupCode = new SetupCodeService(core.jwtSecret, config.host, () => !repos.users.hasAny());
  const davLocks = new DavLockService(clock);
  const appPasswords = new AppPasswordService({ clock, repo: repos.appPasswords, users: repos.users, settings, audit, davLocks });
  const accounts = new AccountService({
    clock,
    transactions,
    users: repos.users,
    identities: repos.idp,
    settings,
    sessions,
    mfa,
    audit,
    idp: config.idp,
    appPasswords,
    setupCode,
  });
  const quota = new QuotaService(repos.users, repos.tusUploads, config.defaultStorageLimit);
  const tree = new Tree(repos.items);
  const views = new ItemViews(repos.shares);
  const access = new AccessTracker(repos.items, clock);
  core.hub.onClose(() => access.stop());
  const events = new FileEvents(core.hub, audit);
  const changeVersion = () => repos.database.changeVersion();
  const shares = new ShareService({
    clock,
    transactions,
    shares: repos.shares,
    items: repos.items,
    users: repos.users,
    tree,
    events,
    audit,
    settings,
    pages: new PageCache(changeVersion, (page) => page.items.length),
  });
  const items = new ItemService({
    clock,
    transactions,
    items: repos.items,
    shareLinks: repos.shares,
    tree,
    views,
    access,
    events,
    shares,
    pages: new PageCache(changeVersion, (cached) => cached.page.items.length),
  });
  const storageLocation = new StorageLocationService({
    configured: core.driver.location,
    locations: repos.storageLocation,
    items: repos.items,
    clock,
  });
  const uploadIntents = new UploadIntentService(repos.uploadIntents, storage, clock, log, storageLocation);
  const diskSpace = new DiskSpaceService(core);
  const fileDeps = {
    clock,
    queue,
    storage,
    transactions,
    items: repos.items,
    tree,
    events,
    quota,
    intents: uploadIntents,
    disk: diskSpace,
  };
  const uploads = new UploadService({ ...fileDeps, log, folders: items, views, settings });
  const tusUploads = new TusUploadService({
    clock,
    log,
    transactions,
    repo: repos.tusUploads,
    tree,
    quota,
    settings,
    disk: diskSpace,
    sealed: storage,
    resumable: new ResumableStore(storage),
    uploads,
    views,
    expiryMs: config.tusExpiryHours * 3600_000,
  });
  const downloads = new DownloadService({ clock, log, storage, items: repos.items, tree, access, audit });
  const trash = new TrashService({ ...fileDeps, listing: items });
  const copy = new CopyService(fileDeps);
  return {
    version: new VersionService(core),
    metrics,
    audit,
    settings,
    sessions,
    mfa,
    accounts,
    setupCode,
    idp: new IdpService({
      config: config.idp,
      clock,
      log,
      jwtSecret: core.jwtSecret,
      identities: repos.idp,
      accounts,
      mfa,
      audit,
      setupCode,
    }),
    quota,
    users: new UsersService({
      clock,
      transactions,
      users: repos.users,
      items: repos.items,
      quota,
      audit,
      sessions,
      queue,
      trash,
      hub: core.hub,
      davLocks,
    }),
    subUsers: new SubUserService(repos.users, clock, accounts, sessions, audit, davLocks),
    clients: new ClientService(repos.users, core.presence, sessions),
    orphans: new OrphanService({
      clock,
      queue,
      driver: core.driver,
      hub: core.hub,
      transactions,
      items: repos.items,
      users: repos.users,
      quota,
      audit,
      tusUploads,
    }),
    keys: new KeyService({
      config,
      paths: core.paths,
      clock,
      keyring: core.keyring,
      transactions,
      keys: repos.keys,
      items: repos.items,
      audit,
    }),
    backup: new BackupService(repos.database, core.paths, core.driver, clock, audit),
    doctor: new DoctorService({
      driver: core.driver,
      keyring: core.keyring,
      transactions,
      database: repos.database,
      users: repos.users,
      items: repos.items,
      audit,
      disk: diskSpace,
      tusUploads,
    }),
    storageLocation,
    storageMigration: new StorageMigrationService({ clock, locations: repos.storageLocation, items: repos.items }),
    access,
    items,
    uploads,
    tusUploads,
    uploadIntents,
    diskSpace,
    downloads,
    trash,
    copy,
    fileJobs: new FileJobService(queue),
    shares,
    docserver: new DocserverService({
      clock,
      log,
      config,
      jwtSecret: core.jwtSecret,
      repo: repos.docserver,
      items: repos.items,
      users: repos.users,
      tree,
      settings,
      uploads,
      downloads,
      schedules: core.schedules,
      events,
      audit,
    }),
    appPasswords,
    dav: new DavService({
      transactions,
      items: repos.items,
      properties: repos.davProperties,
      listing: items,
      uploads,
      downloads,
      trash,
      copy,
      quota,
      locks: davLocks,
      users: repos.users,
      audit,
    }),
  };
}
