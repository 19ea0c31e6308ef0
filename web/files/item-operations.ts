import type { Item, ItemSummary, NewFolder } from '../../src/contract/files.ts';
import { NAME_TAKEN, nameProblem, normalizeName } from '../../src/contract/names.ts';
import { api } from '../api/index.ts';
import { cutItems } from '../app/clipboard.ts';
import { forgetInfo } from '../app/folders.ts';
import { extensionOf, formatSize, plural } from '../app/format.ts';
import { invalidateListings, type Listing, optimistic, showsFolder } from '../app/listings.ts';
import { navigate, folderPath } from '../app/router.ts';
import { hideExtensions } from '../app/session.ts';
import { toast, toastError, track } from '../app/toasts.ts';
import { confirmDialog, promptDialog } from '../ui/dialog.tsx';

/** What a toast calls the items acted on: “a.txt”, or 3 items. */
export const names = (items: ItemSummary[]) => (items.length === 1 ? `“${items[0]!.name}”` : plural(items.length, 'item'));
export const ids = (items: Item[]) => items.map((i) => i.id);

/** Items leave every view but the trash, which is revalidated instead. */
const leaving = (gone: Set<string>) => (list: Item[], l: Listing) =>
  l.source.view === 'trash' ? list : list.filter((i) => !gone.has(i.id));

/** A refusal, said with what was refused: “a.txt” was not moved: Folder not found. */
const refused = (items: ItemSummary[], what: string, err: Error) =>
  `${names(items)} ${items.length === 1 ? 'was' : 'were'} not ${what}: ${err.message}`;

/** Moves at once on screen (out of their folders, new parent elsewhere); back where they were if refused. */
function moveOptimistically(items: Item[], parentId: string | null): Promise<unknown> {
  const moving = new Set(ids(items));
  return optimistic(
    (list, l) =>
      typeof l.source.view === 'object'
        ? list.filter((i) => !moving.has(i.id) || showsFolder(l, parentId))
        : list.map((i) => (moving.has(i.id) ? { ...i, parentId } : i)),
    () => api.files.move({ ids: [...moving], parentId }),
  ).finally(() => {
    for (const id of moving) forgetInfo(id);
  });
}

export async function moveItems(items: Item[], target: { id: string | null; name: string }): Promise<void> {
  if (items.every((i) => i.parentId === target.id)) return;
  const from = new Map<string | null, Item[]>();
  for (const i of items) from.set(i.parentId, [...(from.get(i.parentId) ?? []), i]);
  try {
    await moveOptimistically(items, target.id);
  } catch (err) {
    toast(refused(items, 'moved', err as Error), { kind: 'error' });
    return;
  }
  toast(`Moved ${names(items)} to ${target.name}`, {
    action: {
      label: 'Undo',
      run: async () => {
        try {
          for (const [parentId, back] of from) await moveOptimistically(back, parentId);
          toast('Move undone');
        } catch (err) {
          toastError(err);
        }
      },
    },
  });
}

export async function trashItems(items: Item[]): Promise<void> {
  const gone = new Set(ids(items));
  await track(
    `Moving ${names(items)} to the trash…`,
    (progress) => optimistic(leaving(gone), () => api.files.trash([...gone], (done, total) => progress(total ? done / total : 0))),
    () => ({
      message: `Moved ${names(items)} to the trash`,
      action: { label: 'Undo', run: () => void restoreItems(items, true) },
    }),
    (err) => refused(items, 'moved to the trash', err),
  );
}

export async function restoreItems(items: Item[], undo = false): Promise<void> {
  const back = new Set(ids(items));
  await track(
    `Restoring ${names(items)}…`,
    (progress) =>
      optimistic(
        (list, l) => (l.source.view === 'trash' ? list.filter((i) => !back.has(i.id)) : list),
        () => api.files.restore([...back], (done, total) => progress(total ? done / total : 0)),
      ),
    () => ({ message: undo ? 'Moved back from the trash' : `Restored ${names(items)}` }),
  );
}

export async function copyItems(items: Item[], target: { id: string | null; name: string }): Promise<void> {
  await track(
    `Copying ${names(items)} to ${target.name}…`,
    async () => {
      const queued = await api.files.copy({ ids: ids(items), parentId: target.id });
      return api.files.waitForJob(queued.jobId);
    },
    () => ({
      message: `Copied ${names(items)} to ${target.name}`,
      action: { label: 'Show', run: () => navigate(folderPath(target.id)) },
    }),
  );
  invalidateListings();
}

export async function star(items: Item[], starred: boolean): Promise<void> {
  const set = new Set(ids(items));
  try {
    await optimistic(
      (list, l) =>
        l.source.view === 'starred' && !starred
          ? list.filter((i) => !set.has(i.id))
          : list.map((i) => (set.has(i.id) ? { ...i, starred } : i)),
      () => api.files.star({ ids: [...set], starred }),
    );
  } catch (err) {
    toastError(err);
  }
}

/** Renames at once on screen; the old name comes back, with the server's reason, if it refuses. */
async function renameTo(item: Item | ItemSummary, to: string): Promise<ItemSummary> {
  forgetInfo(item.id);
  return optimistic(
    (list) => list.map((i) => (i.id === item.id ? { ...i, name: to } : i)),
    () => api.files.rename({ id: item.id, name: to }),
  ).catch((err: Error) => {
    throw new Error(refused([item], 'renamed', err));
  });
}

/** Asks for a new name, checked against the server's rules and, where the whole folder is listed, its `siblings`. */
export async function rename(item: Item, siblings: Item[], select: (ids: string[]) => void): Promise<void> {
  const ext = item.type === 'file' ? extensionOf(item.name) : '';
  const hidden = hideExtensions.value && ext !== '';
  const shown = hidden ? item.name.slice(0, -ext.length) : item.name;
  const full = (value: string) => normalizeName(hidden ? value.trim() + ext : value);
  const name = await promptDialog({
    title: `Rename ${item.type}`,
    label: 'Name',
    value: shown,
    confirm: 'Rename',
    selectEnd: hidden ? shown.length : shown.length - ext.length,
    // The server's own rules, so most refusals are said before the dialog closes.
    validate: (value) => {
      const n = full(value);
      const clash = siblings.some((i) => i.id !== item.id && i.name.toLowerCase() === n.toLowerCase());
      return nameProblem(n) ?? (clash ? NAME_TAKEN : null);
    },
  });
  if (name === undefined || full(name) === item.name) return;
  // Selected with the optimistic rename, not on the answer: what the user selects meanwhile stands.
  const renaming = renameTo(item, full(name));
  select([item.id]);
  let renamed: ItemSummary;
  try {
    renamed = await renaming;
  } catch (err) {
    toast((err as Error).message, { kind: 'error' });
    return;
  }
  toast(`Renamed to “${renamed.name}”`, {
    action: {
      label: 'Undo',
      run: () => void renameTo(renamed, item.name).catch(toastError),
    },
  });
}

/** What the server said in the frame a ZIP refusal loaded (too many ZIPs at once says to wait), else the likely cause. */
function refusalOf(frame: HTMLIFrameElement): string {
  try {
    const { message } = JSON.parse(frame.contentDocument?.body?.textContent ?? '') as { message?: unknown };
    if (typeof message === 'string' && message) return `The ZIP could not be made: ${message}`;
  } catch {
    // Not the server's JSON (a proxy's page): the usual cause below.
  }
  return 'The ZIP could not be made: some items may have moved or been deleted. Refresh and try again.';
}

/** A single file downloads natively (its size known to the browser); anything else as a streamed ZIP. */
export function download(items: Item[]): void {
  if (items.length === 1 && items[0]!.type === 'file') {
    const a = document.createElement('a');
    a.href = api.files.downloadUrl(items[0]!);
    a.download = items[0]!.name;
    document.body.append(a);
    a.click();
    a.remove();
    return;
  }
  // A form post hands the ZIP to the browser's download manager: never buffered in page memory. It
  // targets a hidden frame, so a refusal (an error page, not a download) cannot replace the app.
  let frame = document.querySelector<HTMLIFrameElement>('iframe[name=coffer-download]');
  if (!frame) {
    frame = document.createElement('iframe');
    frame.name = 'coffer-download';
    frame.hidden = true;
    frame.title = 'Downloads';
    document.body.append(frame);
  }
  frame.onload = () => toast(refusalOf(frame), { kind: 'error' });
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = api.files.zipUrl;
  form.target = 'coffer-download';
  form.hidden = true;
  for (const id of ids(items)) {
    const input = document.createElement('input');
    input.name = 'ids';
    input.value = id;
    form.append(input);
  }
  document.body.append(form);
  form.submit();
  form.remove();
  toast(`Preparing a ZIP of ${names(items)}; your browser shows its progress`);
}

export async function createFolder(parentId: string | null, select?: (ids: string[]) => void): Promise<void> {
  let created: NewFolder | null = null;
  await promptDialog({
    title: 'New folder',
    label: 'Name',
    value: 'New folder',
    confirm: 'Create',
    submit: async (name) => {
      try {
        created = await api.files.createFolder({ name, parentId });
        return null;
      } catch (err) {
        return (err as Error).message;
      }
    },
  });
  if (!created) return;
  invalidateListings();
  select?.([(created as NewFolder).id]);
}

export async function pasteCut(folderId: string | null): Promise<void> {
  const cut = cutItems.value;
  if (!cut) return;
  cutItems.value = null;
  await moveItems(cut, { id: folderId, name: 'this folder' });
}

export async function emptyTrash(listing: Listing): Promise<void> {
  const items = listing.items.value;
  const known = listing.complete
    ? `${plural(items.length, 'item')} (${formatSize(items.reduce((n, i) => n + (i.size ?? 0), 0))} and their contents)`
    : 'every item in the trash';
  const ok = await confirmDialog({
    title: 'Empty the trash?',
    message: `${known[0]!.toUpperCase()}${known.slice(1)} will be erased from the server. This cannot be undone.`,
    confirm: 'Empty trash',
    danger: true,
  });
  if (!ok) return;
  await track(
    'Emptying the trash…',
    () =>
      optimistic(
        (list, l) => (l.source.view === 'trash' ? [] : list),
        async () => {
          const r = await api.files.emptyTrash();
          if ('jobId' in r) await api.files.waitForJob(r.jobId);
        },
      ),
    () => ({ message: 'The trash is empty' }),
  );
}
