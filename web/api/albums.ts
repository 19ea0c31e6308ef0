import type { ApiBody, ApiQuery } from '../../src/contract/api.ts';
import { call, urlOf } from '../app/api.ts';

/** Albums: named sets of the account's photos and videos. */
export const albums = {
  list: (query: ApiQuery<'GET /api/albums'> = {}) => call('GET /api/albums', { query }),
  create: (body: ApiBody<'POST /api/albums'>) => call('POST /api/albums', { body }),
  get: (id: string, query: ApiQuery<'GET /api/albums/:id'> = {}, opts: { signal?: AbortSignal } = {}) =>
    call('GET /api/albums/:id', { params: { id }, query, ...opts }),
  update: (id: string, body: ApiBody<'PATCH /api/albums/:id'>) => call('PATCH /api/albums/:id', { params: { id }, body }),
  remove: (id: string) => call('DELETE /api/albums/:id', { params: { id } }),
  addItems: (id: string, ids: string[]) => call('POST /api/albums/:id/items', { params: { id }, body: { ids } }),
  /** The small thumbnail of the file that stands for an album. */
  coverUrl: (coverId: string) => urlOf('GET /api/files/:id/thumbnail', { id: coverId }, { size: 'small' }),
  removeItems: (id: string, ids: string[]) => call('DELETE /api/albums/:id/items', { params: { id }, body: { ids } }),
};
