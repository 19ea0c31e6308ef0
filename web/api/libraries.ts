import type { ApiBody } from '../../src/contract/api.ts';
import { call } from '../app/api.ts';

/** Libraries: host folders shown as they are (Admin → Libraries). */
export const libraries = {
  all: () => call('GET /api/admin/libraries').then((r) => r.libraries),
  add: (body: ApiBody<'POST /api/admin/libraries'>) => call('POST /api/admin/libraries', { body }),
  rescan: (id: string) => call('POST /api/admin/libraries/:id/rescan', { params: { id } }),
  remove: (id: string) => call('DELETE /api/admin/libraries/:id', { params: { id } }),
};
