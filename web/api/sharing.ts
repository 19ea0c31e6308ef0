import type { Expiry } from '../../src/contract/sharing.ts';
import { call } from '../app/api.ts';

/** Share links (SPEC "Files": share, share/links). */
export const sharing = {
  // Sharing answers the links; unsharing (the same route) only a message.
  share: (ids: string[], expiry: Expiry) =>
    call('POST /api/files/share', { body: { ids, shared: true, expiry } }).then((r) => ('links' in r ? r : { links: {} })),
  unshare: (ids: string[]) => call('POST /api/files/share', { body: { ids, shared: false } }),
  links: (ids: string[]) => call('POST /api/files/share/links', { body: { ids } }),
};
