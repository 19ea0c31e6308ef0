import type { VersionsDeps } from '../files/index.ts';
import type { Infrastructure } from '../infrastructure.ts';
import type { SettingsService } from '../admin/settings.ts';
import { VersionService } from './versions.ts';

export interface VersionsServices {
  versions: VersionService;
}

/** A file's earlier contents: kept when it is replaced, listed, downloaded, restored and thinned. */
export function createVersionService(
  infra: Infrastructure,
  settings: SettingsService,
  { tree, views, events, changes, quota, libraryContent, intents }: VersionsDeps,
) {
  const { clock, queue, repos } = infra;
  return new VersionService({
    clock,
    retentionClock: infra.retentionClock,
    queue,
    transactions: repos.transactions,
    items: repos.items,
    versions: repos.versions,
    tree,
    views,
    events,
    changes,
    quota,
    settings,
    libraryContent,
    intents,
    administersTeam: (accountId, teamId) => repos.teamFolders.administers(accountId, teamId),
  });
}
