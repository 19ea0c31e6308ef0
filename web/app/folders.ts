import { signal } from '@preact/signals';
import type { ItemInfo } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';

const infos = new Map<string, Promise<ItemInfo>>();
// The same details once they have arrived, for screens that can use them without waiting.
const known = new Map<string, ItemInfo>();

/** Details of one item, cached for breadcrumbs and pickers (renames and moves clear it). */
export function itemInfo(id: string): Promise<ItemInfo> {
  let p = infos.get(id);
  if (!p) {
    p = api.files.info(id);
    p.then(
      (info) => infos.get(id) === p && known.set(id, info),
      () => infos.delete(id),
    );
    infos.set(id, p);
  }
  return p;
}

export const forgetInfo = (id?: string) => {
  if (id) {
    infos.delete(id);
    known.delete(id);
  } else {
    infos.clear();
    known.clear();
  }
};

export interface Crumb {
  id: string;
  name: string;
}

/** The folders from the root down to `id` when all are known already, else null (then ask `ancestors`). */
export function knownAncestors(id: string): Crumb[] | null {
  const trail: Crumb[] = [];
  for (let at: string | null = id; at && trail.length < 64; ) {
    const info = known.get(at);
    if (!info) return null;
    trail.unshift({ id: info.id, name: info.name });
    at = info.parentId;
  }
  return trail;
}

/** The folders from the root down to `id` (inclusive). */
export async function ancestors(id: string): Promise<Crumb[]> {
  const trail: Crumb[] = [];
  for (let at: string | null = id; at && trail.length < 64; ) {
    const info: ItemInfo = await itemInfo(at);
    trail.unshift({ id: info.id, name: info.name });
    at = info.parentId;
  }
  return trail;
}

/** The account's folders shared by link, with their expiry: inside one, everything is reachable through its link (docs/compatibility.md › Deliberate widenings). */
export const sharedFolders = signal<Map<string, string | null>>(new Map());
/** The account's folders shared with people only: no link reaches them. */
export const peopleFolders = signal<Set<string>>(new Set());

export async function loadSharedFolders(): Promise<void> {
  const linked = new Map<string, string | null>();
  const people = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await api.files.collection('shared', { limit: 500, cursor });
    for (const i of page.items) {
      if (i.type !== 'folder') continue;
      // The list also holds folders shared with people only, and those have no link (shared is false).
      if (i.shared) linked.set(i.id, i.expiresAt);
      else people.add(i.id);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor && linked.size + people.size < 5000);
  sharedFolders.value = linked;
  peopleFolders.value = people;
}
