import type { ApiBody } from '../../src/contract/api.ts';
import type { MemberRole, SharedGroup } from '../../src/contract/sharing.ts';
import { call, page } from '../app/api.ts';

/** Groups of accounts: the admin's console, and items shared with a group. */
export const groups = {
  all: () => call('GET /api/admin/groups').then((r) => r.groups),
  one: (id: string) => call('GET /api/admin/groups/:id', { params: { id } }),
  create: (name: string, description: string) => call('POST /api/admin/groups', { body: { name, description } }),
  rename: (id: string, name: string) => call('PATCH /api/admin/groups/:id', { params: { id }, body: { name } }),
  setAllowance: (id: string, teamFolderBytes: number | null) =>
    call('PATCH /api/admin/groups/:id', { params: { id }, body: { teamFolderBytes } }),
  /** A group administrator's team folder for its group. */
  makeTeamFolder: (id: string, name: string, quota: number) =>
    call('POST /api/groups/:id/team-folders', { params: { id }, body: { name, quota } }),
  remove: (id: string) => call('DELETE /api/admin/groups/:id', { params: { id } }),
  addMember: (id: string, email: string, admin: boolean) =>
    call('POST /api/admin/groups/:id/members', { params: { id }, body: { email, admin } }).then((r) => r.member),
  setAdmin: (id: string, accountId: string, admin: boolean) =>
    call('PATCH /api/admin/groups/:id/members/:accountId', { params: { id, accountId }, body: { admin } }).then((r) => r.member),
  removeMember: (id: string, accountId: string) => call('DELETE /api/admin/groups/:id/members/:accountId', { params: { id, accountId } }),
  /** The groups the account is in, and whether it administers each. */
  mine: () => call('GET /api/groups', { query: {} }).then((r) => r.groups),
  /** A group administrator's: its group's members, add and remove them. */
  led: (id: string) => call('GET /api/groups/:id', { params: { id } }),
  addToLed: (id: string, email: string) => call('POST /api/groups/:id/members', { params: { id }, body: { email } }).then((r) => r.member),
  removeFromLed: (id: string, accountId: string) => call('DELETE /api/groups/:id/members/:accountId', { params: { id, accountId } }),
  /** Groups whose name starts with `q`, else the caller's own (the share dialog's completion). */
  choices: (q: string) => call('GET /api/groups', { query: { q } }).then((r) => r.groups),
  /** The groups an item is shared with. */
  ofItem: (itemId: string) => call('GET /api/files/:id/members', { params: { id: itemId } }).then((r) => r.groups),
  // Sent a group id, the answer names the group.
  shareWith: (itemId: string, groupId: string, role: MemberRole) =>
    call('POST /api/files/:id/members', { params: { id: itemId }, body: { groupId, role } }).then(
      (r) => (r as { group: SharedGroup }).group,
    ),
  setRole: (itemId: string, groupId: string, role: MemberRole) =>
    call('PATCH /api/files/:id/groups/:groupId', { params: { id: itemId, groupId }, body: { role } }).then((r) => r.group),
  unshare: (itemId: string, groupId: string) => call('DELETE /api/files/:id/groups/:groupId', { params: { id: itemId, groupId } }),
};

/** Team folders (Admin → Team folders). */
export const teamFolders = {
  all: () => call('GET /api/admin/team-folders').then((r) => r.teamFolders),
  create: (body: ApiBody<'POST /api/admin/team-folders'>) => call('POST /api/admin/team-folders', { body }),
  update: (id: string, body: ApiBody<'PATCH /api/admin/team-folders/:id'>) =>
    call('PATCH /api/admin/team-folders/:id', { params: { id }, body }),
  setGroups: (id: string, groups: ApiBody<'PUT /api/admin/team-folders/:id/groups'>['groups']) =>
    call('PUT /api/admin/team-folders/:id/groups', { params: { id }, body: { groups } }),
  remove: (id: string) => call('DELETE /api/admin/team-folders/:id', { params: { id } }),
  /** The team folders the account reaches, and whether it administers each. */
  mine: () => call('GET /api/team-folders').then((r) => r.teamFolders),
  /** A page of a team folder's trash, from `cursor` (the first page without). */
  trash: (id: string, cursor?: string) => page('GET /api/team-folders/:id/trash', { params: { id }, query: { limit: 200, cursor } }),
  restore: (id: string, ids: string[]) => call('POST /api/team-folders/:id/trash/restore', { params: { id }, body: { ids } }),
  deleteForever: (id: string, ids: string[]) => call('POST /api/team-folders/:id/trash/delete', { params: { id }, body: { ids } }),
};
