import type { CoreContext } from '../context.ts';
import { AccountService } from './accounts.ts';
import { CopyService } from './copy.ts';
import { DownloadService } from './downloads.ts';
import { FileJobService } from './file-jobs.ts';
import { ItemService } from './items.ts';
import { MfaService } from './mfa.ts';
import { QuotaService } from './quota.ts';
import { SessionService } from './sessions.ts';
import { SettingsService } from './settings.ts';
import { TrashService } from './trash.ts';
import { UploadService } from './uploads.ts';
import { UploadIntentService } from './upload-intents.ts';
import { DiskSpaceService } from './disk-space.ts';
import { ShareService } from './shares.ts';
import { VersionService } from './version.ts';
import { UsersService } from './users.ts';
import { SubUserService } from './sub-users.ts';
import { ClientService } from './clients.ts';
import { MetricsService } from './metrics.ts';
import { AuditService } from './audit.ts';
import { OrphanService } from './orphans.ts';
import { KeyService } from './keys.ts';
import { BackupService } from './backup.ts';
import { DoctorService } from './doctor.ts';
import { MaintenanceService } from './maintenance.ts';
import { StorageMigrationService } from './storage-migration.ts';

/** The domain services; each area adds itself here and registers its jobs and schedules. */
export interface Services {
  version: VersionService;
  metrics: MetricsService;
  audit: AuditService;
  settings: SettingsService;
  sessions: SessionService;
  mfa: MfaService;
  accounts: AccountService;
  quota: QuotaService;
  users: UsersService;
  subUsers: SubUserService;
  clients: ClientService;
  orphans: OrphanService;
  keys: KeyService;
  backup: BackupService;
  doctor: DoctorService;
  maintenance: MaintenanceService;
  storageMigration: StorageMigrationService;
  items: ItemService;
  uploads: UploadService;
  uploadIntents: UploadIntentService;
  diskSpace: DiskSpaceService;
  downloads: DownloadService;
  trash: TrashService;
  copy: CopyService;
  fileJobs: FileJobService;
  shares: ShareService;
}

export function createServices(core: CoreContext): Services {
  const metrics = new MetricsService();
  const audit = new AuditService(core, metrics);
  const settings = new SettingsService(core, audit);
  const sessions = new SessionService(core, audit);
  const mfa = new MfaService(core, audit);
  const accounts = new AccountService(core, settings, sessions, mfa, audit);
  const quota = new QuotaService(core);
  const items = new ItemService(core, audit);
  const uploadIntents = new UploadIntentService(core);
  const diskSpace = new DiskSpaceService(core);
  return {
    version: new VersionService(core),
    metrics,
    audit,
    settings,
    sessions,
    mfa,
    accounts,
    quota,
    users: new UsersService(core, quota, audit),
    subUsers: new SubUserService(core, accounts, sessions, audit),
    clients: new ClientService(core, sessions),
    orphans: new OrphanService(core, quota, audit),
    keys: new KeyService(core, audit),
    backup: new BackupService(core, audit),
    doctor: new DoctorService(core, audit, diskSpace),
    maintenance: new MaintenanceService(core),
    storageMigration: new StorageMigrationService(core),
    items,
    uploads: new UploadService(core, items, quota, settings, uploadIntents, diskSpace),
    uploadIntents,
    diskSpace,
    downloads: new DownloadService(core, items, audit),
    trash: new TrashService(core, items, quota),
    copy: new CopyService(core, items, quota, uploadIntents, diskSpace),
    fileJobs: new FileJobService(core),
    shares: new ShareService(core, items, audit),
  };
}
