import { api, post } from '../app/api.ts';
import type { Expiry, ShareLinkInfo, ShareMode } from '../app/api-types.ts';

/** What a request may change on a link: an absent field keeps its value, null removes it. */
export interface LinkOptions {
  password?: string | null;
  mode?: ShareMode;
  maxDownloads?: number | null;
}

export interface LinksPage {
  links: ShareLinkInfo[];
  nextCursor: string | null;
}

/** Creates the items' links, or re-times them and changes the options named. */
export const shareItems = (ids: string[], expiry: Expiry, options: LinkOptions = {}) =>
  post<{ links: Record<string, string> }>('/api/files/share', { ids, shared: true, expiry, ...options });

export const unshareItems = (ids: string[]) => post('/api/files/share', { ids, shared: false });

export const existingLinks = (ids: string[]) => post<{ links: Record<string, string> }>('/api/files/share/links', { ids });

export function linksPage(params: { cursor?: string; itemId?: string; limit?: number } = {}): Promise<LinksPage> {
  const q = new URLSearchParams({ limit: String(params.limit ?? 100) });
  if (params.cursor) q.set('cursor', params.cursor);
  if (params.itemId) q.set('itemId', params.itemId);
  return api<LinksPage>(`/api/files/share/links?${q}`);
}

export const updateLink = (token: string, options: LinkOptions) =>
  api<ShareLinkInfo>(`/api/files/share/links/${encodeURIComponent(token)}`, { method: 'PATCH', body: options });
