import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { Listing } from '../app/listings.ts';
import { can } from '../app/session.ts';
import { filesFromDrop } from '../uploads/drop.ts';
import { startUploads } from '../uploads/start.tsx';
import { moveItems } from './item-operations.ts';
import { DRAG_TYPE } from './item-pointer.ts';

/**
 * A drop onto a folder (a row, a tile, a breadcrumb, the view itself): items dragged from the list move there,
 * files from the desktop are uploaded there.
 */
export async function dropOnFolder(
  target: { id: string | null; name: string },
  data: DataTransfer,
  here: { items: Item[]; folderId: string | null; listing: Listing },
): Promise<void> {
  const raw = data.getData(DRAG_TYPE);
  if (raw) {
    if (!can('files.edit')) return;
    const ids = new Set(JSON.parse(raw) as string[]);
    const moving = here.items.filter((i) => ids.has(i.id) && i.id !== target.id);
    if (moving.length) await moveItems(moving, target);
  } else if (data.types.includes('Files') && can('files.upload')) {
    const dropped = await filesFromDrop(data);
    await startUploads(dropped.files, target.id, target.id === here.folderId ? here.listing : null, dropped.emptyFolders);
  }
}

/** The whole view as a drop target for files from the desktop, and whether files are over it now. */
export function useDropZone(canDrop: boolean, onDrop: (data: DataTransfer) => void) {
  const [dropping, setDropping] = useState(false);
  const handlers: Pick<JSX.IntrinsicElements['div'], 'onDragOver' | 'onDragLeave' | 'onDrop'> = {
    onDragOver: (e) => {
      if (!canDrop || !e.dataTransfer?.types.includes('Files')) return;
      e.preventDefault();
      setDropping(true);
    },
    onDragLeave: (e) => {
      if (e.currentTarget === e.target || !(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node)) setDropping(false);
    },
    onDrop: (e) => {
      setDropping(false);
      if (!canDrop || !e.dataTransfer?.types.includes('Files')) return;
      e.preventDefault();
      onDrop(e.dataTransfer);
    },
  };
  return { dropping, handlers };
}
