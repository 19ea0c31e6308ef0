import { useEffect, useState } from 'preact/hooks';
import type { Item, ItemInfo, Photo, PhotoDetails } from '../../src/contract/files.ts';
import type { Member } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import { ancestors, sharedFolders } from '../app/folders.ts';
import { displayName, exactDate, familyOf, formatDate, formatExpiry, formatSize, plural, runningTime } from '../app/format.ts';
import { can, hideExtensions } from '../app/session.ts';
import { administeredTeam, loadAdministeredTeams } from '../app/team-folders.ts';
import { FileIcon, Icon } from '../ui/icons.tsx';
import { ItemActivity } from '../activity/item-activity.tsx';
import { MapTile } from './map-tile.tsx';
import { type VersionAccess, VersionsTab } from './versions-tab.tsx';

type Tab = 'details' | 'versions' | 'activity';

/** What the panel has learnt about one item so far. */
interface Loaded {
  id: string;
  info?: ItemInfo | null;
  path?: string | null;
  error?: string | null;
  people?: Member[] | null;
}

/**
 * What the Versions tab offers: nothing but the list until the file's details arrive; in something shared
 * with this account, Restore for editors and Delete only in a team folder it administers (docs/versions.md › In the web app: the owner's).
 */
function versionAccess(info: ItemInfo | null): VersionAccess {
  if (!info) return { restore: false, remove: false };
  const shared = info.sharedWithMe;
  return {
    restore: can('files.edit') && (!shared || shared.role === 'editor'),
    remove: can('files.delete') && (!shared || administeredTeam(shared.owner?.id) !== undefined),
  };
}

/**
 * Get info: location, size, dates, share expiry and folder totals, beside the list (Drive's details
 * pane); for a file, a Versions tab with its earlier contents; an Activity tab with its history.
 */
export function InfoPanel({ item, onClose }: { item: Item & Partial<Pick<Photo, 'takenAt'>>; onClose: () => void }) {
  const [tab, setTab] = useState<Tab>('details');
  // Each answer is kept with the item it is about: the first render after stepping to another item shows none of the last one's.
  const [loaded, setLoaded] = useState<Loaded>({ id: item.id });
  const current = loaded.id === item.id ? loaded : { id: item.id };
  const { info = null, path = null, error = null, people = null } = current;
  useEffect(() => {
    let live = true;
    const id = item.id;
    const keep = (patch: Omit<Loaded, 'id'>) => live && setLoaded((now) => ({ ...(now.id === id ? now : { id }), ...patch }));
    setLoaded({ id });
    api.people.members(id).then(
      (m) => keep({ people: m }),
      () => keep({ people: [] }),
    );
    // Fresh details each time: sizes and totals change.
    api.files.info(id).then(
      (i) => {
        keep({ info: i });
        if (live && i.sharedWithMe) void loadAdministeredTeams();
      },
      (err: Error) => keep({ error: err.message }),
    );
    (item.parentId
      ? ancestors(item.parentId).then((t) => ['My files', ...t.map((c) => c.name)].join(' / '))
      : Promise.resolve('My files')
    ).then(
      (p) => keep({ path: p }),
      () => keep({ path: null }),
    );
    return () => {
      live = false;
    };
  }, [item.id, item.name, item.modified]);
  const name = displayName(item.name, item.type, hideExtensions.value);
  const shared = item.shared || sharedFolders.value.has(item.id);
  const tabs: Tab[] = item.type === 'file' ? ['details', 'versions', 'activity'] : ['details', 'activity'];
  const shown: Tab = tabs.includes(tab) ? tab : 'details';
  const tabButton = (id: Tab, label: string) => (
    <button
      type="button"
      role="tab"
      id={`info-tab-${id}`}
      aria-selected={shown === id}
      aria-controls={`info-panel-${id}`}
      tabIndex={shown === id ? 0 : -1}
      class={`info-tab${shown === id ? ' active' : ''}`}
      onClick={() => setTab(id)}
      onKeyDown={(e) => {
        if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
        const other = tabs[(tabs.indexOf(id) + (e.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length]!;
        setTab(other);
        document.getElementById(`info-tab-${other}`)?.focus();
      }}
    >
      {label}
    </button>
  );
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
      <div class="info-tabs" role="tablist" aria-label="Details, versions or activity">
        {tabButton('details', 'Details')}
        {item.type === 'file' && tabButton('versions', 'Versions')}
        {tabButton('activity', 'Activity')}
      </div>
      {shown === 'versions' ? (
        <div id="info-panel-versions" role="tabpanel" aria-labelledby="info-tab-versions">
          <VersionsTab item={item} access={versionAccess(info)} />
        </div>
      ) : shown === 'activity' ? (
        <div id="info-panel-activity" role="tabpanel" aria-labelledby="info-tab-activity">
          <ItemActivity item={item} />
        </div>
      ) : (
        <div id="info-panel-details" role="tabpanel" aria-labelledby="info-tab-details">
          <DetailsList item={item} info={info} path={path} error={error} shared={shared} people={people} />
        </div>
      )}
    </aside>
  );
}

/** "51.50000° N, 0.11667° W" */
function place({ latitude, longitude }: { latitude: number; longitude: number }): string {
  return `${Math.abs(latitude).toFixed(5)}° ${latitude < 0 ? 'S' : 'N'}, ${Math.abs(longitude).toFixed(5)}° ${longitude < 0 ? 'W' : 'E'}`;
}

/** What the picture says of itself: its size in pixels, a video's length, the camera and lens, where it was taken. */
function PhotoFacts({ photo }: { photo: PhotoDetails }) {
  return (
    <>
      {photo.width !== null && photo.height !== null && (
        <>
          <dt>Dimensions</dt>
          <dd>
            {photo.width.toLocaleString()} × {photo.height.toLocaleString()} px ({((photo.width * photo.height) / 1e6).toFixed(1)} MP)
          </dd>
        </>
      )}
      {photo.duration !== undefined && (
        <>
          <dt>Duration</dt>
          <dd>{runningTime(photo.duration)}</dd>
        </>
      )}
      {photo.camera && (
        <>
          <dt>Camera</dt>
          <dd>{photo.camera}</dd>
        </>
      )}
      {photo.lens && (
        <>
          <dt>Lens</dt>
          <dd>{photo.lens}</dd>
        </>
      )}
      {photo.location && (
        <>
          <dt>Place</dt>
          <dd>
            {place(photo.location)}
            <MapTile {...photo.location} />
          </dd>
        </>
      )}
    </>
  );
}

function DetailsList({
  item,
  info,
  path,
  error,
  shared,
  people,
}: {
  /** From Photos, with when it was taken. */
  item: Item & Partial<Pick<Photo, 'takenAt'>>;
  info: ItemInfo | null;
  path: string | null;
  error: string | null;
  shared: boolean;
  /** Who the item is shared with (null while loading). */
  people: Member[] | null;
}) {
  return (
    <>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      <dl class="info-list">
        <dt>Kind</dt>
        <dd>{item.type === 'folder' ? 'Folder' : item.mimeType || 'File'}</dd>
        <dt>Location</dt>
        <dd>{(info?.sharedWithMe ? path?.replace(/^My files/, 'Shared with me') : path) ?? '…'}</dd>
        <dt>Size</dt>
        <dd>
          {item.type === 'folder'
            ? info?.folderInfo
              ? `${formatSize(info.folderInfo.totalSize)} · ${plural(info.folderInfo.fileCount, 'file')}, ${plural(info.folderInfo.folderCount, 'folder')}`
              : '…'
            : `${formatSize(item.size ?? 0)} (${(item.size ?? 0).toLocaleString()} bytes)`}
        </dd>
        {/* Photos says the modification time when the picture does not say when it was taken. */}
        {(info?.photo?.takenAt ?? (item.takenAt !== item.modified ? item.takenAt : null)) && (
          <>
            <dt>Taken</dt>
            <dd>{exactDate(info?.photo?.takenAt ?? item.takenAt!)}</dd>
          </>
        )}
        {info?.photo && <PhotoFacts photo={info.photo} />}
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
        {info?.sharedWithMe && (
          <>
            <dt>Owner</dt>
            <dd>
              {info.sharedWithMe.owner?.name || info.sharedWithMe.owner?.email} ·{' '}
              {info.sharedWithMe.role === 'editor' ? 'you can edit' : 'you can view'}
            </dd>
          </>
        )}
        {info?.droppedBy && (
          <>
            <dt>Sent by</dt>
            <dd title={exactDate(info.droppedBy.at)}>{info.droppedBy.uploader ?? 'A visitor (no name given)'}, through a share link</dd>
          </>
        )}
        {item.library && (
          <>
            <dt>Stored</dt>
            <dd>
              In a library: kept as it is in a folder on the server, not encrypted by Coffer
              {item.unavailable ? '. Coffer cannot read it now.' : ''}
            </dd>
          </>
        )}
        <dt>Sharing</dt>
        <dd>
          {shared
            ? `Shared by link · ${formatExpiry(info?.expiresAt ?? item.expiresAt)}`
            : people?.length
              ? 'Shared with people'
              : 'Not shared'}
        </dd>
        {people && people.length > 0 && (
          <>
            <dt>People</dt>
            <dd>
              <ul class="info-people">
                {people.map((m) => (
                  <li key={m.accountId}>
                    {m.name || m.email} <span class="muted small">({m.role === 'editor' ? 'can edit' : 'can view'})</span>
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
      </dl>
    </>
  );
}
