import { secretFilesOf } from '../../config.ts';
import { StartupError } from '../../errors.ts';
import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { AuditService } from '../admin/audit.ts';
import type { MetricsService } from '../admin/metrics.ts';
import type { SettingsService } from '../admin/settings.ts';
import { stagingDirOf } from '../../storage/local.ts';
import type { FilesServices } from '../files/index.ts';
import type { Infrastructure } from '../infrastructure.ts';
import type { ResumableUploadServices } from '../resumable-uploads/index.ts';
import type { ChunkedUploadService } from '../dav/chunked-uploads.ts';
import { BackupService } from './backup.ts';
import { DoctorService } from './doctor.ts';
import { ExportService } from './export.ts';
import { KeyService } from './keys.ts';
import { OrphanService } from './orphans.ts';
import { ReplicationService } from './replication.ts';
import { Jobs } from '../../jobs/catalog.ts';
import { ScheduledBackupService } from './scheduled-backups.ts';
import { StorageMigrationService } from './storage-migration.ts';

export interface MaintenanceServices {
  orphans: OrphanService;
  keys: KeyService;
  backup: BackupService;
  scheduledBackups: ScheduledBackupService;
  exporter: ExportService;
  doctor: DoctorService;
  storageMigration: StorageMigrationService;
  /** Null when REPLICATE_TO is not set. */
  replication: ReplicationService | null;
}

type MaintenanceDeps = {
  audit: AuditService;
  settings: Pick<SettingsService, 'storedNotices'>;
  metrics: MetricsService;
  chunkedUploads: Pick<ChunkedUploadService, 'keysInUse'>;
} & Pick<FilesServices, 'quota' | 'diskSpace' | 'items'> &
  ResumableUploadServices;

/** Wired last: backup, keys, orphans and the doctor inspect and repair what the other domains own. */
export function createMaintenanceServices(
  infra: Infrastructure,
  { audit, settings, metrics, quota, diskSpace, tusUploads, chunkedUploads, items }: MaintenanceDeps,
) {
  const { clock, config, paths, keyring, driver, queue, repos } = infra;
  const { transactions } = repos;
  const backup = new BackupService(repos.database, paths, driver, clock, audit, config.minFreeBytes);
  const scheduledBackups = new ScheduledBackupService({
    config: config.backup,
    backup,
    runs: repos.backupRuns,
    clock,
    queue,
    schedules: infra.schedules,
    metrics,
    log: infra.log,
    paths,
    stagingDir: stagingDirOf(paths.blobs),
  });
  const replication = config.replication.destination
    ? new ReplicationService({
        config: config.replication,
        paths,
        clock,
        retentionClock: infra.retentionClock,
        metrics,
        log: infra.log,
        passphrase: () => scheduledBackups.passphrase(),
        stagingDir: stagingDirOf(paths.blobs),
        autoCheckpoint: (on) => repos.database.setAutoCheckpoint(on),
      })
    : null;
  // Deletions put back to wait for the replica run as soon as it has their commit, not when their backoff ends.
  replication?.onCaughtUp(() => queue.release(Jobs.storageDelete));
  const keys = new KeyService({
    config,
    paths,
    clock,
    keyring,
    transactions,
    keys: repos.keys,
    items: repos.items,
    libraries: repos.libraries,
    audit,
  });
  const services: MaintenanceServices = {
    orphans: new OrphanService({
      clock,
      queue,
      driver,
      hub: infra.hub,
      transactions,
      items: repos.items,
      users: repos.users,
      quota,
      audit,
      // Both kinds of unfinished upload hold objects that orphan review must never offer.
      tusUploads: { keysInUse: (keys) => new Set([...tusUploads.keysInUse(keys), ...chunkedUploads.keysInUse(keys)]) },
    }),
    keys,
    backup,
    scheduledBackups,
    exporter: new ExportService({ users: repos.users, items: repos.items, versions: repos.versions, storage: infra.storage, paths }),
    doctor: new DoctorService({
      driver,
      keyring,
      transactions,
      database: repos.database,
      users: repos.users,
      items: repos.items,
      recovery: items,
      audit,
      disk: diskSpace,
      tusUploads,
      replication,
      settings,
      secretFiles: [paths.secrets, ...secretFilesOf(config).map((f) => f.path)],
    }),
    storageMigration: new StorageMigrationService({
      clock,
      locations: repos.storageLocation,
      items: repos.items,
      thumbnails: repos.thumbnails,
    }),
    replication,
  };
  const masterKeys: Lifecycle = {
    name: 'master keys',
    start: () => {
      const missing = keys.missingKeys();
      if (missing.length === 0) return;
      // Serving would answer every such download with a 500 and wrap new files under a key the old ones lack.
      const list = missing.map((m) => `${m.keyId} (${m.files} file(s))`).join(', ');
      throw new StartupError(
        `files are wrapped by master key(s) missing from ${paths.secrets}: ${list}; restore secrets.json from your backup, or set COFFER_MASTER_KEY to the key they were written with`,
      );
    },
  };
  return {
    services,
    lifecycles: {
      masterKeys,
      scheduledBackups: scheduledBackups.lifecycle(),
      replication: replication?.lifecycle() ?? { name: 'replication' },
    },
  };
}
