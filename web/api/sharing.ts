import type { Expiry, LinkOptions } from '../../src/contract/sharing.ts';
import { call } from '../app/api.ts';

/** Share links (SPEC "Files": share, share/links) and their options (list, change). */
export const sharing = {
  // Sharing answers the links; unsharing (the same route) only a message. Options not named keep their value.
  share: (ids: string[], expiry: Expiry, options: LinkOptions = {}) =>
    call('POST /api/files/share', { body: { ids, shared: true, expiry, ...options } }).then((r) => ('links' in r ? r : { links: {} })),
  unshare: (ids: string[]) => call('POST /api/files/share', { body: { ids, shared: false } }),
  links: (ids: string[]) => call('POST /api/files/share/links', { body: { ids } }),
  /** A page of the account's links with their options, newest first; `itemId` narrows it to that item's link. */
  linkPage: (query: { cursor?: string; itemId?: string; limit?: number } = {}) =>
    call('GET /api/files/share/links', { query: { limit: 100, ...query } }),
  updateLink: (token: string, options: LinkOptions) => call('PATCH /api/files/share/links/:token', { params: { token }, body: options }),
};
