import { runStorageBench } from './storage.ts';
import { runStartupBench } from './startup.ts';
import { runAccountsBench } from './accounts.ts';
import { runOrphansBench } from './orphans.ts';
import { runKeysBench } from './keys.ts';
import { runAuditBench } from './audit.ts';
import { runFilesBench, runTransfersBench } from './files.ts';
import { runSharesBench } from './shares.ts';
import { runShareLinksBench } from './share-links.ts';
import { runReliabilityBench } from './reliability.ts';
import { runWebBench } from './web.ts';
import { runBackupBench } from './backup.ts';
import { runExportBench, runScheduledBackupBench, runUpgradeSnapshotBench } from './backup-runs.ts';
import { runBuildsBench } from './builds.ts';
import { runTusBench } from './tus.ts';
import { runNcChunkingBench } from './nc-chunking.ts';
import { runS3Bench } from './s3.ts';
import { runDavBench } from './dav.ts';
import { runDavLocksBench } from './dav-locks.ts';
import { runDavHostileBench } from './dav-hostile.ts';
import { runSigninBench } from './signin.ts';
import { runSearchBench } from './search.ts';
import { runThumbnailsBench } from './thumbnails.ts';
import { runPhotosBench } from './photos.ts';
import { runPhotoViewerBench } from './photo-viewer.ts';
import { runVersionsBench } from './versions.ts';
import { runPasskeysBench } from './passkeys.ts';
import { runPeopleBench } from './people.ts';
import { runGroupsBench } from './groups.ts';
import { runEventStreamsBench } from './event-streams.ts';
import { runSoakBench } from './soak.ts';
import { runRequestsBench } from './requests.ts';
import { runRouteInstructionsBench } from './route-instructions.ts';
import { runSyncBench } from './sync.ts';
import { runReplicationBench } from './replication.ts';
import { runLibrariesBench } from './libraries.ts';
import { runChangeLogBench } from './change-log.ts';
import { runActivityBench } from './activity.ts';
import { runPeersBench } from './peers.ts';
import { runPeakBench } from './peak.ts';
import { runSmallFilesBench } from './small-files.ts';
import { runMemoryBench } from './memory.ts';
import { runDavSyncBench } from './dav-sync.ts';
import { runWebhooksBench } from './webhooks.ts';
import { runInfraBench } from './infra.ts';
import { runDownloadsBench } from './downloads.ts';
import { runWalPagesBench } from './wal-pages.ts';
import { runFloorBench } from './floor.ts';

/** `npm run bench`: every benchmark, each printing its figures; pass names to run a subset. */
const benches: Record<string, () => Promise<void>> = {
  storage: runStorageBench,
  startup: runStartupBench,
  accounts: runAccountsBench,
  orphans: runOrphansBench,
  keys: runKeysBench,
  audit: runAuditBench,
  files: runFilesBench,
  transfers: runTransfersBench,
  shares: runSharesBench,
  'share-links': runShareLinksBench,
  reliability: runReliabilityBench,
  web: runWebBench,
  backup: runBackupBench,
  'backup-scheduled': runScheduledBackupBench,
  export: runExportBench,
  'upgrade-snapshot': runUpgradeSnapshotBench,
  builds: runBuildsBench,
  tus: runTusBench,
  'nc-chunking': runNcChunkingBench,
  s3: runS3Bench,
  dav: runDavBench,
  'dav-locks': runDavLocksBench,
  'dav-hostile': runDavHostileBench,
  signin: runSigninBench,
  search: runSearchBench,
  thumbnails: runThumbnailsBench,
  photos: runPhotosBench,
  libraries: runLibrariesBench,
  'photo-viewer': runPhotoViewerBench,
  versions: runVersionsBench,
  passkeys: runPasskeysBench,
  people: runPeopleBench,
  groups: runGroupsBench,
  streams: runEventStreamsBench,
  soak: runSoakBench,
  requests: runRequestsBench,
  'route-instructions': runRouteInstructionsBench,
  sync: runSyncBench,
  replication: runReplicationBench,
  'change-log': runChangeLogBench,
  activity: runActivityBench,
  peers: runPeersBench,
  peak: runPeakBench,
  'small-files': runSmallFilesBench,
  memory: runMemoryBench,
  'dav-sync': runDavSyncBench,
  webhooks: runWebhooksBench,
  infra: runInfraBench,
  downloads: runDownloadsBench,
  'wal-pages': runWalPagesBench,
  floor: runFloorBench,
};

// Names pick benchmarks; a `--flag value` pair is the benchmark's own (soak's `--minutes`).
const wanted = process.argv.slice(2).filter((arg, i, all) => !arg.startsWith('--') && !all[i - 1]?.startsWith('--'));
// The soak runs for minutes by design: only when named.
const onlyWhenNamed = new Set(['soak']);
for (const [name, run] of Object.entries(benches)) {
  if (wanted.length ? !wanted.includes(name) : onlyWhenNamed.has(name)) continue;
  console.log(`\n== ${name} ==`);
  await run();
}
