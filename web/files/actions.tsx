import type { Item, ItemSummary, NewFolder } from '../../src/contract/files.ts';
import { NAME_TAKEN, nameProblem, normalizeName } from '../../src/contract/names.ts';
import type { Permission } from '../../src/contract/permissions.ts';
import { api } from '../api/index.ts';
import { cutItems } from '../app/clipboard.ts';
import { forgetInfo } from '../app/folders.ts';
import { extensionOf, formatSize, plural } from '../app/format.ts';
import { invalidateListings, type Listing, type ListingSource, listingFor, optimistic, showsFolder } from '../app/listings.ts';
import { navigate, folderPath } from '../app/router.ts';
import { can, hideExtensions } from '../app/session.ts';
import { openInEditor, opensInEditor } from '../app/editor.ts';
import { toast, toastError, track } from '../app/toasts.ts';
import { copyItemLink, createItemLink } from '../share/link-actions.ts';
import { openViewer } from '../viewer/viewer.tsx';
import { openShareDialog } from '../share/share-dialog.tsx';
import { confirmDialog, promptDialog } from '../ui/dialog.tsx';
import type { IconName } from '../ui/icons.tsx';
import { pickFolder } from './folder-picker.tsx';

export type ViewKind = 'folder' | 'recent' | 'starred' | 'shared' | 'sharedWithMe' | 'trash' | 'search' | 'photos';

/** What an action sees: the view it runs in and the selected items. */
export interface ActionContext {
  kind: ViewKind;
  folderId: string | null;
  selection: Item[];
  listing: Listing;
  select(ids: string[]): void;
  toggleInfo(): void;
  pickUpload(folder: boolean): void;
  /** Inside an item another account shares with this one: the role this account has there. */
  sharedRole?: 'viewer' | 'editor';
  /** Inside a team folder this account administers: the team's account, whose links it manages. */
  team?: string;
}

export interface Action {
  id: string;
  label: string | ((ctx: ActionContext) => string);
  icon: IconName;
  /** Shown in menus and the shortcut sheet; handled by the view's key handler. */
  keys?: string;
  permission?: Permission;
  danger?: boolean;
  /** Needs no selection (New folder, Upload...). */
  global?: boolean;
  /** Less used: in the toolbar's More menu rather than a button of its own (always in the context menu). */
  secondary?: boolean;
  applies(ctx: ActionContext): boolean;
  run(ctx: ActionContext): unknown;
}

const one = (ctx: ActionContext) => ctx.selection.length === 1;
const some = (ctx: ActionContext) => ctx.selection.length > 0;
const notTrash = (ctx: ActionContext) => ctx.kind !== 'trash';
const names = (items: ItemSummary[]) => (items.length === 1 ? `“${items[0]!.name}”` : plural(items.length, 'item'));
const ids = (items: Item[]) => items.map((i) => i.id);

export const labelOf = (a: Action, ctx: ActionContext) => (typeof a.label === 'function' ? a.label(ctx) : a.label);

/** Items leave every view but the trash, which is revalidated instead. */
const leaving = (gone: Set<string>) => (list: Item[], l: Listing) =>
  l.source.view === 'trash' ? list : list.filter((i) => !gone.has(i.id));

/** A refusal, said with what was refused: “a.txt” was not moved: Folder not found. */
const refused = (items: ItemSummary[], what: string, err: Error) =>
  `${names(items)} ${items.length === 1 ? 'was' : 'were'} not ${what}: ${err.message}`;

export function openItem(ctx: ActionContext, item: Item): void {
  if (item.type === 'folder') {
    if (ctx.kind !== 'trash') navigate(folderPath(item.id));
    return;
  }
  viewFile(
    ctx.listing.items.value.filter((i) => i.type === 'file'),
    item,
    ctx,
  );
}

/**
 * Opens the viewer on `item` among `files` with the file manager's tools (Share, Delete, Get info where the
 * permissions allow), the same from a folder, Photos, an album, search, Recent or Starred.
 */
function viewFile(files: Item[], item: Item, ctx: Omit<ActionContext, 'selection' | 'toggleInfo'>, find?: string): void {
  openViewer(files, item, find, (shown, toggleInfo) => {
    // Another account's photo (shared with this one, or an editor's in an album) is only looked at and downloaded here.
    if ('owner' in shown && shown.owner) return [];
    const here: ActionContext = { ...ctx, selection: [shown], toggleInfo };
    return available(here)
      .filter((a) => VIEWER_ACTIONS.includes(a.id))
      .map((a) => ({ id: a.id, label: labelOf(a, here), icon: a.icon, removes: a.id === 'delete', run: () => a.run(here) }));
  });
}

/** The viewer opened outside a file list (Recent on the home page, text matches, the palette): the same tools. */
export function viewFileFrom(kind: ViewKind, source: ListingSource, files: Item[], item: Item, find?: string): void {
  viewFile(files, item, { kind, folderId: null, listing: listingFor(source), select: () => {}, pickUpload: () => {} }, find);
}

// The file manager's own actions the viewer offers beside Download, in this order.
const VIEWER_ACTIONS = ['share', 'delete', 'info'];

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

async function trashItems(items: Item[]): Promise<void> {
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

async function restoreItems(items: Item[], undo = false): Promise<void> {
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

async function copyItems(items: Item[], target: { id: string | null; name: string }): Promise<void> {
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

async function star(items: Item[], starred: boolean): Promise<void> {
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

async function rename(ctx: ActionContext, item: Item): Promise<void> {
  const ext = item.type === 'file' ? extensionOf(item.name) : '';
  const hidden = hideExtensions.value && ext !== '';
  const shown = hidden ? item.name.slice(0, -ext.length) : item.name;
  const full = (value: string) => normalizeName(hidden ? value.trim() + ext : value);
  const siblings = ctx.kind === 'folder' && ctx.listing.complete ? ctx.listing.items.value : [];
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
  let renamed: ItemSummary;
  try {
    renamed = await renameTo(item, full(name));
  } catch (err) {
    toast((err as Error).message, { kind: 'error' });
    return;
  }
  ctx.select([item.id]);
  toast(`Renamed to “${renamed.name}”`, {
    action: {
      label: 'Undo',
      run: () => void renameTo(renamed, item.name).catch(toastError),
    },
  });
}

/** A single file downloads natively (its size known to the browser); anything else as a streamed ZIP. */
function download(items: Item[]): void {
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
  frame.onload = () =>
    toast('The ZIP could not be made: some items may have moved or been deleted. Refresh and try again.', { kind: 'error' });
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

async function pasteCut(ctx: ActionContext): Promise<void> {
  const cut = cutItems.value;
  if (!cut) return;
  cutItems.value = null;
  await moveItems(cut, { id: ctx.folderId, name: 'this folder' });
}

export const ACTIONS: Action[] = [
  {
    id: 'new-folder',
    label: 'New folder',
    icon: 'folderPlus',
    keys: 'Shift+N',
    permission: 'files.upload',
    global: true,
    applies: (ctx) => ctx.kind === 'folder',
    run: (ctx) => createFolder(ctx.folderId, ctx.select),
  },
  {
    id: 'upload-files',
    label: 'Upload files',
    icon: 'upload',
    keys: 'U',
    permission: 'files.upload',
    global: true,
    applies: (ctx) => ctx.kind === 'folder',
    run: (ctx) => ctx.pickUpload(false),
  },
  {
    id: 'upload-folder',
    label: 'Upload folder',
    icon: 'uploadFolder',
    keys: 'Shift+U',
    permission: 'files.upload',
    global: true,
    applies: (ctx) => ctx.kind === 'folder',
    run: (ctx) => ctx.pickUpload(true),
  },
  {
    id: 'open',
    label: (ctx) => (ctx.selection[0]?.type === 'folder' ? 'Open' : 'Preview'),
    icon: 'chevronRight',
    keys: 'Enter',
    applies: (ctx) => one(ctx) && notTrash(ctx),
    run: (ctx) => openItem(ctx, ctx.selection[0]!),
  },
  {
    id: 'open-in-editor',
    label: 'Open in editor',
    icon: 'editDocument',
    keys: 'E',
    permission: 'files.download',
    applies: (ctx) => one(ctx) && notTrash(ctx) && opensInEditor(ctx.selection[0]!),
    run: (ctx) => openInEditor(ctx.selection[0]!),
  },
  {
    id: 'share',
    label: 'Share',
    icon: 'link',
    keys: 'Shift+S',
    permission: 'files.share',
    applies: (ctx) => some(ctx) && notTrash(ctx),
    run: (ctx) => openShareDialog(ctx.selection, { team: ctx.team }),
  },
  {
    id: 'copy-link',
    label: 'Copy link',
    icon: 'copy',
    permission: 'files.share',
    secondary: true,
    applies: (ctx) => one(ctx) && notTrash(ctx) && ctx.kind !== 'sharedWithMe' && !ctx.sharedRole && ctx.selection[0]!.shared,
    run: (ctx) => copyItemLink(ctx.selection[0]!),
  },
  {
    id: 'create-link',
    label: 'Create link',
    icon: 'link',
    permission: 'files.share',
    secondary: true,
    applies: (ctx) => one(ctx) && notTrash(ctx) && ctx.kind !== 'sharedWithMe' && !ctx.sharedRole && !ctx.selection[0]!.shared,
    run: (ctx) => createItemLink(ctx.selection[0]!),
  },
  {
    id: 'download',
    label: 'Download',
    icon: 'download',
    keys: 'D',
    permission: 'files.download',
    applies: (ctx) => some(ctx) && notTrash(ctx),
    run: (ctx) => download(ctx.selection),
  },
  {
    id: 'rename',
    label: 'Rename',
    icon: 'pencil',
    keys: 'F2',
    permission: 'files.edit',
    applies: (ctx) => one(ctx) && notTrash(ctx),
    run: (ctx) => rename(ctx, ctx.selection[0]!),
  },
  {
    id: 'move',
    label: 'Move',
    icon: 'move',
    keys: 'M',
    permission: 'files.edit',
    applies: (ctx) => some(ctx) && notTrash(ctx),
    run: async (ctx) => {
      const target = await pickFolder({
        title: `Move ${names(ctx.selection)}`,
        confirm: 'Move here',
        start: ctx.folderId,
        moving: ids(ctx.selection),
      });
      if (target) await moveItems(ctx.selection, target);
    },
  },
  {
    id: 'copy',
    label: 'Copy',
    icon: 'copy',
    keys: 'C',
    permission: 'files.upload',
    applies: (ctx) => some(ctx) && notTrash(ctx),
    run: async (ctx) => {
      const target = await pickFolder({ title: `Copy ${names(ctx.selection)}`, confirm: 'Copy here', start: ctx.folderId });
      if (target) await copyItems(ctx.selection, target);
    },
  },
  {
    id: 'star',
    label: (ctx) => (ctx.selection.every((i) => i.starred) ? 'Unstar' : 'Star'),
    icon: 'star',
    keys: 'S',
    permission: 'files.edit',
    applies: (ctx) => some(ctx) && notTrash(ctx),
    run: (ctx) => star(ctx.selection, !ctx.selection.every((i) => i.starred)),
  },
  {
    id: 'cut',
    label: 'Cut',
    secondary: true,
    icon: 'scissors',
    keys: 'Ctrl+X',
    permission: 'files.edit',
    applies: (ctx) => some(ctx) && notTrash(ctx),
    run: (ctx) => {
      cutItems.value = ctx.selection;
      toast(`Cut ${names(ctx.selection)}. Open a folder and paste (Ctrl+V) to move ${ctx.selection.length === 1 ? 'it' : 'them'} there.`);
    },
  },
  {
    id: 'paste',
    label: 'Paste',
    icon: 'clipboard',
    keys: 'Ctrl+V',
    permission: 'files.edit',
    global: true,
    applies: (ctx) => ctx.kind === 'folder' && cutItems.value !== null,
    run: pasteCut,
  },
  {
    id: 'info',
    label: 'Get info',
    secondary: true,
    icon: 'info',
    keys: 'I',
    applies: (ctx) => one(ctx),
    run: (ctx) => ctx.toggleInfo(),
  },
  {
    id: 'delete',
    label: 'Delete',
    icon: 'trash',
    keys: 'Delete',
    permission: 'files.delete',
    danger: true,
    applies: (ctx) => some(ctx) && notTrash(ctx),
    run: (ctx) => trashItems(ctx.selection),
  },
  {
    id: 'restore',
    label: 'Restore',
    icon: 'restore',
    keys: 'R',
    permission: 'files.trash',
    applies: (ctx) => some(ctx) && ctx.kind === 'trash',
    run: (ctx) => restoreItems(ctx.selection),
  },
  {
    id: 'delete-forever',
    label: 'Delete permanently',
    icon: 'trash',
    keys: 'Shift+Delete',
    permission: 'files.trash',
    danger: true,
    applies: (ctx) => some(ctx) && ctx.kind === 'trash',
    run: async (ctx) => {
      const items = ctx.selection;
      const size = items.reduce((n, i) => n + (i.size ?? 0), 0);
      const folders = items.some((i) => i.type === 'folder');
      const ok = await confirmDialog({
        title: `Delete ${names(items)} permanently?`,
        message: `${names(items)}${folders ? ' and everything inside' : ''} (${folders ? 'at least ' : ''}${formatSize(size)}) will be erased from the server. This cannot be undone.`,
        confirm: 'Delete permanently',
        danger: true,
      });
      if (!ok) return;
      const gone = new Set(ids(items));
      await track(
        `Deleting ${names(items)} permanently…`,
        () =>
          optimistic(
            (list) => list.filter((i) => !gone.has(i.id)),
            async () => api.files.waitForJob((await api.files.deleteForever([...gone])).jobId),
          ),
        () => ({ message: `Deleted ${names(items)} permanently` }),
      );
    },
  },
];

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

/** The actions that apply here and that this login may perform (sub-users see only what they can do). */
export function available(ctx: ActionContext): Action[] {
  return ACTIONS.filter((a) => (!a.permission || can(a.permission)) && memberMay(a, ctx) && a.applies(ctx));
}

/**
 * What a member may do with items shared with its account: never share them onward; viewers only read.
 * The shared items themselves (the Shared with me list) stay their owner's to rename, move or trash.
 */
function memberMay(a: Action, ctx: ActionContext): boolean {
  const role = ctx.kind === 'sharedWithMe' ? 'viewer' : ctx.sharedRole;
  // A team folder itself is shared by link only by its administrators (on the team's routes).
  if (a.id === 'share' && ctx.selection.some((i) => i.teamFolder)) return ctx.team !== undefined;
  if (!role || !a.permission) return true;
  // A team folder's administrators make its links, from inside it.
  if (a.id === 'share' && ctx.team) return true;
  if (a.permission === 'files.share' || a.id === 'star') return false;
  if (a.id === 'copy') return true;
  return role === 'editor' || a.permission === 'files.download';
}
