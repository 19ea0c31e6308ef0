import type { ApiBody, ApiQuery } from '../../src/contract/api.ts';
import { call, urlOf } from '../app/api.ts';

/** Albums: named sets of the account's photos and videos. */
export const albums = {
  /** A page of 200 albums, newest first, from `cursor` (the first page without), as a list read a page at a time takes it. */
  page: (query: Omit<ApiQuery<'GET /api/albums'>, 'limit'> = {}) =>
    call('GET /api/albums', { query: { limit: 200, ...query } }).then((r) => ({ items: r.albums, nextCursor: r.nextCursor })),
  create: (body: ApiBody<'POST /api/albums'>) => call('POST /api/albums', { body }),
  get: (id: string, query: ApiQuery<'GET /api/albums/:id'> = {}, opts: { signal?: AbortSignal } = {}) =>
    call('GET /api/albums/:id', { params: { id }, query, ...opts }),
  update: (id: string, body: ApiBody<'PATCH /api/albums/:id'>) => call('PATCH /api/albums/:id', { params: { id }, body }),
  remove: (id: string) => call('DELETE /api/albums/:id', { params: { id } }),
  addItems: (id: string, ids: string[]) => call('POST /api/albums/:id/items', { params: { id }, body: { ids } }),
  /** The small thumbnail of the file that stands for an album, through the album's door (a shared album's is another account's). */
  coverUrl: (album: { id: string; coverId: string }) =>
    urlOf('GET /api/albums/:id/items/:itemId/thumbnail', { id: album.id, itemId: album.coverId }, { size: 'small' }),
  members: (id: string) => call('GET /api/albums/:id/members', { params: { id } }).then((r) => r.members),
  addMember: (id: string, body: ApiBody<'POST /api/albums/:id/members'>) =>
    call('POST /api/albums/:id/members', { params: { id }, body }).then((r) => r.member),
  removeMember: (id: string, accountId: string) => call('DELETE /api/albums/:id/members/:accountId', { params: { id, accountId } }),
  link: (id: string) => call('GET /api/albums/:id/link', { params: { id } }).then((r) => r.link),
  createLink: (id: string, body: ApiBody<'POST /api/albums/:id/link'>) =>
    call('POST /api/albums/:id/link', { params: { id }, body }).then((r) => r.link),
  updateLink: (id: string, body: ApiBody<'PATCH /api/albums/:id/link'>) =>
    call('PATCH /api/albums/:id/link', { params: { id }, body }).then((r) => r.link),
  linkQr: (id: string) => call('GET /api/albums/:id/link/qr', { params: { id } }).then((r) => r.qrCode),
  removeLink: (id: string) => call('DELETE /api/albums/:id/link', { params: { id } }),
  removeItems: (id: string, ids: string[]) => call('DELETE /api/albums/:id/items', { params: { id }, body: { ids } }),
};
