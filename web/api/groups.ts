import { call } from '../app/api.ts';

/** Groups of accounts: the admin's console. */
export const groups = {
  all: () => call('GET /api/admin/groups').then((r) => r.groups),
  one: (id: string) => call('GET /api/admin/groups/:id', { params: { id } }),
  create: (name: string, description: string) => call('POST /api/admin/groups', { body: { name, description } }),
  rename: (id: string, name: string) => call('PATCH /api/admin/groups/:id', { params: { id }, body: { name } }),
  remove: (id: string) => call('DELETE /api/admin/groups/:id', { params: { id } }),
  addMember: (id: string, email: string, admin: boolean) =>
    call('POST /api/admin/groups/:id/members', { params: { id }, body: { email, admin } }).then((r) => r.member),
  setAdmin: (id: string, accountId: string, admin: boolean) =>
    call('PATCH /api/admin/groups/:id/members/:accountId', { params: { id, accountId }, body: { admin } }).then((r) => r.member),
  removeMember: (id: string, accountId: string) => call('DELETE /api/admin/groups/:id/members/:accountId', { params: { id, accountId } }),
};
