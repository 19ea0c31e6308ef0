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
import { VersionService } from './version.ts';

/** The domain services; each area adds itself here and registers its jobs and schedules. */
export interface Services {
  version: VersionService;
  settings: SettingsService;
  sessions: SessionService;
  mfa: MfaService;
  accounts: AccountService;
  quota: QuotaService;
  items: ItemService;
  uploads: UploadService;
  downloads: DownloadService;
  trash: TrashService;
  copy: CopyService;
  fileJobs: FileJobService;
}

export function createServices(core: CoreContext): Services {
  const settings = new SettingsService(core);
  const sessions = new SessionService(core);
  const mfa = new MfaService(core);
  const quota = new QuotaService(core);
  const items = new ItemService(core);
  return {
    version: new VersionService(core),
    settings,
    sessions,
    mfa,
    accounts: new AccountService(core, settings, sessions, mfa),
    quota,
    items,
    uploads: new UploadService(core, items, quota, settings),
    downloads: new DownloadService(core, items),
    trash: new TrashService(core, items, quota),
    copy: new CopyService(core, items, quota),
    fileJobs: new FileJobService(core),
  };
}
