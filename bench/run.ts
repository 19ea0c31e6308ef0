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
import { runS3Bench } from './s3.ts';
import { runDavBench } from './dav.ts';
import { runDavLocksBench } from './dav-locks.ts';
import { runDavHostileBench } from './dav-hostile.ts';
import { runSigninBench } from './signin.ts';
import { runSearchBench } from './search.ts';
import { runThumbnailsBench } from './thumbnails.ts';
import { runPhotosBench } from './photos.ts';
import { runVersionsBench } from './versions.ts';
import { runPasskeysBench } from './passkeys.ts';
import { runPeopleBench } from './people.ts';

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
  s3: runS3Bench,
  dav: runDavBench,
  'dav-locks': runDavLocksBench,
  'dav-hostile': runDavHostileBench,
  signin: runSigninBench,
  search: runSearchBench,
  thumbnails: runThumbnailsBench,
  photos: runPhotosBench,
  versions: runVersionsBench,
  passkeys: runPasskeysBench,
  people: runPeopleBench,
};

const wanted = process.argv.slice(2);
for (const [name, run] of Object.entries(benches)) {
  if (wanted.length && !wanted.includes(name)) continue;
  console.log(`\n== ${name} ==`);
  await run();
}
