import type { Item } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import type { LinkCalls } from '../api/sharing.ts';
import { loadSharedFolders } from '../app/folders.ts';
import { formatExpiry } from '../app/format.ts';
import { invalidateListings, patchListings } from '../app/listings.ts';
import { toast, toastError } from '../app/toasts.ts';
import { copyText } from '../ui/copy.ts';

/** The listings, the shared-folder marks and the sidebar learn that these items' links changed. */
export function afterShareChange(ids: string[], shared: boolean, expiresAt?: string | null): void {
  patchListings((items) => items.map((i) => (ids.includes(i.id) ? { ...i, shared, expiresAt: shared ? (expiresAt ?? null) : null } : i)));
  invalidateListings();
  void loadSharedFolders().catch(() => {});
}

/** Removes the items' links, with an Undo that makes new ones (the old URLs are gone for good); `calls`: a team folder's. */
export async function removeLinks(items: Item[], calls: LinkCalls = api.sharing): Promise<void> {
  const ids = items.map((i) => i.id);
  try {
    await calls.unshare(ids);
  } catch (err) {
    return toastError(err);
  }
  afterShareChange(ids, false);
  const again = async () => {
    const r = await calls.share(ids, '7d');
    afterShareChange(Object.keys(r.links), true, new Date(Date.now() + 7 * 86_400_000).toISOString());
    toast('Shared again with a new link, for 7 days');
  };
  toast(items.length === 1 ? `Link to “${items[0]!.name}” removed` : `${items.length} links removed`, {
    action: { label: 'Undo', run: () => again().catch(toastError) },
  });
}

/** Copies an item's existing link without opening the share dialog; it never makes one. */
export async function copyItemLink(item: Item): Promise<void> {
  try {
    const url = (await api.sharing.links([item.id])).links[item.id];
    if (url) await copyText(url, `Link to “${item.name}” copied`);
    else toast(`“${item.name}” has no link any more. Choose Create link to make one.`, { kind: 'error' });
  } catch (err) {
    toastError(err);
  }
}

/** The explicit "Create link": a 7-day view link, copied at once, with an Undo that removes it. */
export async function createItemLink(item: Item): Promise<void> {
  try {
    const url = (await api.sharing.share([item.id], '7d')).links[item.id]!;
    const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
    afterShareChange([item.id], true, expiresAt);
    await copyText(url, `Link to “${item.name}” created and copied · ${formatExpiry(expiresAt)}`);
  } catch (err) {
    toastError(err);
  }
}
