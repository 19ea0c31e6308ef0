import { useEffect, useState } from 'preact/hooks';
import type { Item, ItemInfo } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { ancestors, sharedFolders } from '../app/folders.ts';
import { displayName, exactDate, familyOf, formatDate, formatExpiry, formatSize, plural } from '../app/format.ts';
import { hideExtensions } from '../app/session.ts';
import { FileIcon, Icon } from '../ui/icons.tsx';

/** Get info: location, size, dates, share expiry and folder totals, beside the list (Drive's details pane). */
export function InfoPanel({ item, onClose }: { item: Item; onClose: () => void }) {
  const [info, setInfo] = useState<ItemInfo | null>(null);
  const [path, setPath] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setInfo(null);
    setError(null);
    // Fresh details each time: sizes and totals change.
    api.files.info(item.id).then(
      (i) => live && setInfo(i),
      (err: Error) => live && setError(err.message),
    );
    (item.parentId
      ? ancestors(item.parentId).then((t) => ['My files', ...t.map((c) => c.name)].join(' / '))
      : Promise.resolve('My files')
    ).then(
      (p) => live && setPath(p),
      () => live && setPath(null),
    );
    return () => {
      live = false;
    };
  }, [item.id, item.name, item.modified]);
  const name = displayName(item.name, item.type, hideExtensions.value);
  const shared = item.shared || sharedFolders.value.has(item.id);
  return (
    <aside class="info-panel" aria-label={`Details of ${name}`}>
      <header class="info-head">
        <h2>Details</h2>
        <button type="button" class="icon-button" aria-label="Close details" onClick={onClose}>
          <Icon name="close" size={18} />
        </button>
      </header>
      <div class="info-icon">
        <FileIcon family={familyOf(item)} size={72} />
        <p class="info-name">{name}</p>
      </div>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      <dl class="info-list">
        <dt>Kind</dt>
        <dd>{item.type === 'folder' ? 'Folder' : item.mimeType || 'File'}</dd>
        <dt>Location</dt>
        <dd>{path ?? '…'}</dd>
        <dt>Size</dt>
        <dd>
          {item.type === 'folder'
            ? info?.folderInfo
              ? `${formatSize(info.folderInfo.totalSize)} · ${plural(info.folderInfo.fileCount, 'file')}, ${plural(info.folderInfo.folderCount, 'folder')}`
              : '…'
            : `${formatSize(item.size ?? 0)} (${(item.size ?? 0).toLocaleString()} bytes)`}
        </dd>
        <dt>Modified</dt>
        <dd title={exactDate(item.modified)}>{exactDate(item.modified)}</dd>
        <dt>Last opened</dt>
        <dd title={exactDate(info?.accessedAt ?? item.accessedAt)}>{formatDate(info?.accessedAt ?? item.accessedAt)}</dd>
        {item.deletedAt && (
          <>
            <dt>Deleted</dt>
            <dd>{exactDate(item.deletedAt)}</dd>
          </>
        )}
        <dt>Sharing</dt>
        <dd>{shared ? `Shared by link · ${formatExpiry(info?.expiresAt ?? item.expiresAt)}` : 'Not shared'}</dd>
      </dl>
    </aside>
  );
}
