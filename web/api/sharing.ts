import type { Expiry, LinkOptions, Member, MemberRole } from '../../src/contract/sharing.ts';
import { call } from '../app/api.ts';

/** Share links (docs/api.md › API reference, Sharing) and their options (list, change). */
export const sharing = {
  // Sharing answers the links; unsharing (the same route) only a message. Options not named keep their value.
  // `expiry` a preset, or an ISO moment the owner picked.
  share: (ids: string[], expiry: Expiry | { at: string }, options: LinkOptions = {}) =>
    call('POST /api/files/share', {
      body: { ids, shared: true, ...(typeof expiry === 'string' ? { expiry } : { expiresAt: expiry.at }), ...options },
    }).then((r) => ('links' in r ? r : { links: {} })),
  unshare: (ids: string[]) => call('POST /api/files/share', { body: { ids, shared: false } }),
  links: (ids: string[]) => call('POST /api/files/share/links', { body: { ids } }),
  /** A page of the account's links with their options, newest first; `itemId` narrows it to that item's link. */
  linkPage: (query: { cursor?: string; itemId?: string; limit?: number } = {}) =>
    call('GET /api/files/share/links', { query: { limit: 100, ...query } }),
  updateLink: (token: string, options: LinkOptions) => call('PATCH /api/files/share/links/:token', { params: { token }, body: options }),
  qrCode: (token: string) => call('GET /api/files/share/links/:token/qr', { params: { token } }).then((r) => r.qrCode),
};

/** The links of one account's items: the caller's own (`sharing`), or a team folder's for its administrators. */
export interface LinkCalls {
  share: typeof sharing.share;
  unshare: (ids: string[]) => Promise<unknown>;
  links: typeof sharing.links;
  linkPage: typeof sharing.linkPage;
  updateLink: typeof sharing.updateLink;
}

/** The same calls on a team folder's links (its administrators only; the links are the team's). */
export const teamSharing = (id: string): LinkCalls => ({
  share: (ids, expiry, options = {}) =>
    call('POST /api/team-folders/:id/share', {
      params: { id },
      body: { ids, shared: true, ...(typeof expiry === 'string' ? { expiry } : { expiresAt: expiry.at }), ...options },
    }).then((r) => ('links' in r ? r : { links: {} })),
  unshare: (ids) => call('POST /api/team-folders/:id/share', { params: { id }, body: { ids, shared: false } }),
  links: (ids) => call('POST /api/team-folders/:id/share/links', { params: { id }, body: { ids } }),
  linkPage: (query = {}) => call('GET /api/team-folders/:id/share/links', { params: { id }, query: { limit: 100, ...query } }),
  updateLink: (token, options) => call('PATCH /api/team-folders/:id/share/links/:token', { params: { id, token }, body: options }),
});

/** Sharing with people: an item's members and what other accounts share with this one. */
export const people = {
  members: (id: string) => call('GET /api/files/:id/members', { params: { id } }).then((r) => r.members),
  add: (id: string, who: { email: string } | { accountId: string }, role: MemberRole) =>
    // Sent a person, the answer names a person.
    call('POST /api/files/:id/members', { params: { id }, body: { ...who, role } }).then((r) => (r as { member: Member }).member),
  suggestions: (q: string) => call('GET /api/people/suggestions', { query: { q } }).then((r) => r.people),
  setRole: (id: string, accountId: string, role: MemberRole) =>
    call('PATCH /api/files/:id/members/:accountId', { params: { id, accountId }, body: { role } }).then((r) => r.member),
  remove: (id: string, accountId: string) => call('DELETE /api/files/:id/members/:accountId', { params: { id, accountId } }),
  sharedWithMe: (query: { limit?: number; cursor?: string }, opts: { signal?: AbortSignal } = {}) =>
    call('GET /api/files/shared-with-me', { query, ...opts }),
};

/** The account's notifications (the header bell). */
export const notifications = {
  list: (limit: number, cursor?: string) => call('GET /api/notifications', { query: { limit, cursor } }),
  read: (body: { ids: string[] } | { all: true }) => call('POST /api/notifications/read', { body }),
};
