import type { AuditService } from '../admin/audit.ts';
import type { ChangeLog } from '../changes/change-log.ts';
import type { FileEvents } from '../files/file-events.ts';
import type { MemberService } from '../sharing/members.ts';
import type { ShareService } from '../sharing/shares.ts';
import path from 'node:path';
import { type Config, DEFAULT_CONFIG_FILE, secretFilesOf } from '../../config.ts';
import type { ProtectedPath } from '../../storage/host-paths.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { LibraryHostWrites } from './host-writes.ts';
import { LibraryService } from './libraries.ts';
import { LibraryScanner } from './scanner.ts';
import { LibraryWatcher } from './watch.ts';
import { LibraryWriteGuard } from './write-guard.ts';

export interface LibraryServices {
  libraries: LibraryService;
}

/** Libraries: host folders shown as they are in an account's tree, indexed and kept in step with the host. */
export function createLibraryServices(
  infra: Infrastructure,
  d: { audit: AuditService; events: FileEvents; members: MemberService; shares: ShareService; changes: ChangeLog },
) {
  const { clock, log, repos, config } = infra;
  const guard = new LibraryWriteGuard(repos.libraries, new LibraryHostWrites({ items: repos.items, libraries: repos.libraries }));
  repos.items.guardChanges(guard.check);
  const scanner = new LibraryScanner({
    clock,
    log,
    transactions: repos.transactions,
    items: repos.items,
    libraries: repos.libraries,
    events: d.events,
    changes: d.changes,
    shares: d.shares,
    asHost: (fn) => guard.asHost(fn),
  });
  const libraries = new LibraryService({
    clock,
    log,
    dataDir: infra.paths.root,
    protectedPaths: protectedPaths(config),
    transactions: repos.transactions,
    users: repos.users,
    groups: repos.groups,
    items: repos.items,
    libraries: repos.libraries,
    members: d.members,
    audit: d.audit,
    changes: d.changes,
    events: d.events,
    scanner,
  });
  const libraryWatch = new LibraryWatcher({
    clock,
    log,
    libraries,
    repo: repos.libraries,
    rescanMinutes: config.libraries.rescanMinutes,
    watch: config.libraries.watch,
  });
  return { services: { libraries } satisfies LibraryServices, lifecycles: { libraryWatch } };
}

/**
 * Coffer's own files outside its data directory, which hold what its store's keys or its contents could be
 * read from, or the secrets it signs in elsewhere with (its configuration, a bucket's key, the provider's secret).
 */
function protectedPaths(config: Config): ProtectedPath[] {
  const out: ProtectedPath[] = [];
  if (config.backup.destination.kind === 'dir') out.push({ path: config.backup.destination.dir, what: 'scheduled backups' });
  if (config.replication.destination?.kind === 'dir') out.push({ path: config.replication.destination.dir, what: 'replicas' });
  out.push(...secretFilesOf(config));
  // Where install.sh keeps the configuration and secret files, whichever configuration file this server read.
  out.push({ path: path.dirname(DEFAULT_CONFIG_FILE), what: 'configuration folder' });
  out.push({ path: config.configFile, what: 'configuration file' });
  return out;
}
