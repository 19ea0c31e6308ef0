import { useEffect, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { SharedWithMeItem } from '../../src/contract/sharing.ts';
import { itemInfo, peopleFolders } from '../app/folders.ts';
import { exactDate, formatDate, formatExpiry, formatSize } from '../app/format.ts';
import { Icon } from '../ui/icons.tsx';

export type Column = 'size' | 'modified' | 'deleted' | 'sharedAt' | 'expires' | 'location' | 'accessed' | 'owner' | 'role';

export const COLUMN_TITLES: Record<Column, string> = {
  size: 'Size',
  modified: 'Modified',
  deleted: 'Deleted',
  sharedAt: 'Shared',
  expires: 'Link',
  location: 'Folder',
  accessed: 'Opened',
  owner: 'Shared by',
  role: 'Access',
};

export function FolderName({ id }: { id: string | null }) {
  const [name, setName] = useState(id ? '' : 'My files');
  useEffect(() => {
    if (!id) return;
    let live = true;
    itemInfo(id).then(
      (i) => live && setName(i.name),
      () => live && setName('—'),
    );
    return () => {
      live = false;
    };
  }, [id]);
  return <>{name}</>;
}

/** One column of an item's row. */
export function cell(item: Item, col: Column) {
  switch (col) {
    case 'size':
      return item.type === 'folder' ? <span class="muted">—</span> : formatSize(item.size ?? 0);
    case 'modified':
      return <span title={exactDate(item.modified)}>{formatDate(item.modified)}</span>;
    case 'accessed':
      return <span title={exactDate(item.accessedAt)}>{formatDate(item.accessedAt)}</span>;
    case 'deleted':
      return <span title={exactDate(item.deletedAt)}>{formatDate(item.deletedAt)}</span>;
    case 'sharedAt':
      return <span title={exactDate(item.sharedAt)}>{formatDate(item.sharedAt)}</span>;
    case 'expires':
      // Shared with people only: no link to expire.
      if (!item.shared) return <span class="muted">People only</span>;
      return <span title={item.expiresAt ? exactDate(item.expiresAt) : undefined}>{formatExpiry(item.expiresAt)}</span>;
    case 'location':
      return <FolderName id={item.parentId} />;
    case 'owner': {
      const owner = (item as Partial<SharedWithMeItem>).owner;
      return <span title={owner?.email}>{owner?.name || owner?.email}</span>;
    }
    case 'role':
      return (item as Partial<SharedWithMeItem>).role === 'editor' ? 'Can edit' : 'Can view';
  }
}

/** What a row says of its item to a screen reader. */
export const rowLabel = (item: Item, name: string) =>
  `${name}, ${item.type === 'folder' ? 'folder' : formatSize(item.size ?? 0)}${item.teamFolder ? ', team folder' : ''}${item.library ? ', library' : ''}${item.starred ? ', starred' : ''}${item.shared ? ', shared' : ''}`;

export function Badges({ item }: { item: Item }) {
  return (
    <>
      {item.starred && (
        <span class="badge star" title="Starred">
          <Icon name="star" size={14} />
          <span class="sr-only">, starred</span>
        </span>
      )}
      {item.teamFolder && (
        <span class="badge shared" title="Team folder: it belongs to a team you are in">
          <Icon name="users" size={14} />
          <span class="sr-only">, team folder</span>
        </span>
      )}
      {item.library && (
        <span class="badge shared" title={item.unavailable ? 'Library: unavailable now' : 'Library: a folder on the server, not encrypted'}>
          <Icon name="server" size={14} />
          <span class="sr-only">, library{item.unavailable ? ', unavailable' : ''}</span>
        </span>
      )}
      {!item.shared && peopleFolders.value.has(item.id) && (
        <span class="badge shared" title="Shared with people: no public link">
          <Icon name="users" size={14} />
          <span class="sr-only">, shared with people</span>
        </span>
      )}
      {item.shared && (
        <span class="badge shared" title={`Shared by link · ${formatExpiry(item.expiresAt)}`}>
          <Icon name="link" size={14} />
          <span class="sr-only">, shared</span>
        </span>
      )}
    </>
  );
}
