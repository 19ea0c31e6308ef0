import { signal } from '@preact/signals';
import type { TeamFolderChoice } from '../../src/contract/groups.ts';
import { api } from '../api/index.ts';
import type { LinkCalls } from '../api/sharing.ts';

/** The team folders this account administers (their links and versions are its to manage), by the team's account id. */
export const administeredTeams = signal<Map<string, TeamFolderChoice>>(new Map());
let loading: Promise<void> | null = null;

/** Loads the administered team folders once per page load (again after `reload`). */
export function loadAdministeredTeams(reload = false): Promise<void> {
  if (!loading || reload) {
    loading = api.teamFolders.mine().then(
      (all) => void (administeredTeams.value = new Map(all.filter((f) => f.administrator).map((f) => [f.id, f]))),
      () => void (loading = null),
    );
  }
  return loading;
}

/** The team folder an item's owner account is, when this account administers it. */
export const administeredTeam = (ownerId: string | null | undefined): TeamFolderChoice | undefined =>
  ownerId ? administeredTeams.value.get(ownerId) : undefined;

/** The administered team folder whose own folder `folderId` is (a team folder's row in My files). */
export const administeredTeamOfFolder = (folderId: string): TeamFolderChoice | undefined =>
  [...administeredTeams.value.values()].find((f) => f.folderId === folderId);

/** Where the links of items of `teamId` (a team's account), or of the caller's own items, are managed. */
export const linkCalls = (teamId?: string): LinkCalls => (teamId ? api.teamSharing(teamId) : api.sharing);
