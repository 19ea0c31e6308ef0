import type { Item } from '../../src/contract/files.ts';
import type { Permission } from '../../src/contract/permissions.ts';
import { api } from '../api/index.ts';
import { cutItems } from '../app/clipboard.ts';
import { formatSize } from '../app/format.ts';
import { type Listing, type ListingSource, listingFor, optimistic } from '../app/listings.ts';
import { navigate, folderPath } from '../app/router.ts';
import { can } from '../app/session.ts';
import { openInEditor, opensInEditor } from '../app/editor.ts';
import { toast, track } from '../app/toasts.ts';
import { copyItemLink, createItemLink } from '../sharing/link-actions.ts';
import { openViewer } from '../viewer/viewer.tsx';
import { openShareDialog } from '../sharing/share-dialog.tsx';
import { confirmDialog } from '../ui/dialog.tsx';
import type { IconName } from '../ui/icons.tsx';
import { pickFolder } from './folder-picker.tsx';
import {
  copyItems,
  createFolder,
  download,
  ids,
  moveItems,
  names,
  pasteCut,
  rename,
  restoreItems,
  star,
  trashItems,
} from './item-operations.ts';

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

export const labelOf = (a: Action, ctx: ActionContext) => (typeof a.label === 'function' ? a.label(ctx) : a.label);

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
  openViewer(
    files,
    item,
    find,
    (shown, toggleInfo) => {
      // Another account's photo (shared with this one, or an editor's in an album) is only looked at and downloaded here.
      if ('owner' in shown && shown.owner) return [];
      const here: ActionContext = { ...ctx, selection: [shown], toggleInfo };
      return available(here)
        .filter((a) => VIEWER_ACTIONS.includes(a.id))
        .map((a) => ({ id: a.id, label: labelOf(a, here), icon: a.icon, removes: a.id === 'delete', run: () => a.run(here) }));
    },
    ctx.listing.items,
  );
}

/** The viewer opened outside a file list (Recent on the home page, text matches, the palette): the same tools. */
export function viewFileFrom(kind: ViewKind, source: ListingSource, files: Item[], item: Item, find?: string): void {
  viewFile(files, item, { kind, folderId: null, listing: listingFor(source), select: () => {}, pickUpload: () => {} }, find);
}

// The file manager's own actions the viewer offers beside Download, in this order.
const VIEWER_ACTIONS = ['share', 'delete', 'info'];

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
    run: (ctx) => rename(ctx.selection[0]!, ctx.kind === 'folder' && ctx.listing.complete ? ctx.listing.items.value : [], ctx.select),
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
    run: (ctx) => pasteCut(ctx.folderId),
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
