import { useState } from 'preact/hooks';
import { ALBUM_NAME_MAX, type Album } from '../../src/contract/albums.ts';
import { api } from '../api/index.ts';
import { plural } from '../app/format.ts';
import { albumSource, invalidateListings, type PhotoItem } from '../app/listings.ts';
import { useLoad, usePages } from '../app/load.ts';
import { navigate } from '../app/router.ts';
import { can } from '../app/session.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog, promptDialog } from '../ui/dialog.tsx';
import { Icon } from '../ui/icons.tsx';
import { LoadError, MoreButton } from '../ui/page.tsx';
import { albumPath } from './add-to-album.tsx';
import { openAlbumShare } from './album-share.tsx';
import { PhotoGrid, PhotoViews } from './photos.tsx';

/** Asks for a name; null when cancelled. `save` answers the server's refusal, shown in the dialog. */
function askName(title: string, confirm: string, value: string, save: (name: string) => Promise<unknown>): Promise<string | undefined> {
  return promptDialog({
    title,
    label: 'Album name',
    value,
    confirm,
    maxLength: ALBUM_NAME_MAX,
    validate: (v) => (v.trim() ? null : 'Give the album a name.'),
    submit: async (v) => {
      try {
        await save(v.trim());
        return null;
      } catch (err) {
        return (err as Error).message;
      }
    },
  });
}

function AlbumCard({ album }: { album: Album }) {
  const [broken, setBroken] = useState(false);
  return (
    <li class="album-card">
      <a href={albumPath(album.id)}>
        <span class="album-cover">
          {album.coverId && !broken ? (
            <img
              src={api.albums.coverUrl({ id: album.id, coverId: album.coverId })}
              alt=""
              loading="lazy"
              onError={() => setBroken(true)}
            />
          ) : (
            <Icon name="album" size={40} />
          )}
        </span>
        <span class="album-name">{album.name}</span> <span class="muted small">{plural(album.itemCount, 'item')}</span>
        {album.owner && <span class="muted small album-owner">Shared by {album.owner.name}</span>}
      </a>
    </li>
  );
}

/** Albums: the account's albums, newest first, each with its cover, name and size. */
export function AlbumsScreen() {
  const list = usePages((cursor) => api.albums.page({ cursor }));
  const shared = usePages((cursor) => api.albums.page({ cursor, whose: 'shared' }));
  const mayEdit = can('files.edit');
  const create = async () => {
    let made: Album | undefined;
    const name = await askName('New album', 'Create album', '', async (n) => {
      made = (await api.albums.create({ name: n })).album;
    });
    if (name !== undefined && made) navigate(albumPath(made.id));
  };
  return (
    <div class="browser albums">
      <header class="browser-head">
        <h1 class="view-title">Albums</h1>
        <PhotoViews />
        {mayEdit && (
          <button type="button" class="button push-left" onClick={create}>
            <Icon name="album" size={18} />
            New album
          </button>
        )}
      </header>
      <div class="page albums-page">
        {list.error && <LoadError message={list.error} retry={list.reload} />}
        {list.items?.length === 0 && (
          <div class="empty">
            <p>No albums yet. Select photos in All photos and choose “Add to album”, or make an empty one with “New album”.</p>
          </div>
        )}
        {list.items && list.items.length > 0 && (
          <ul class="album-grid" aria-label="Albums">
            {list.items.map((a) => (
              <AlbumCard key={a.id} album={a} />
            ))}
          </ul>
        )}
        <MoreButton pages={list} label="More albums" />
        {shared.error && <LoadError message={shared.error} retry={shared.reload} />}
        {shared.items && shared.items.length > 0 && (
          <>
            <h2 class="albums-heading">Shared with you</h2>
            <ul class="album-grid" aria-label="Albums shared with you">
              {shared.items.map((a) => (
                <AlbumCard key={a.id} album={a} />
              ))}
            </ul>
            <MoreButton pages={shared} label="More albums shared with you" />
          </>
        )}
      </div>
    </div>
  );
}

/** One album: its photos as Photos shows them, with the album's own tools. */
export function AlbumScreen({ id }: { id: string }) {
  const meta = useLoad(() => api.albums.get(id, { limit: 1 }));
  const album = meta.data?.album;
  // Another account's album: an editor adds and takes out photos, a viewer looks; only the owner renames, deletes or shares.
  const owner = album?.role === 'owner';
  const mayEdit = can('files.edit') && (album?.role === 'owner' || album?.role === 'editor');
  // A viewer still takes out its own photos (added while it was an editor): the server allows only those.
  const mayRemove = (selection: PhotoItem[]) =>
    mayEdit || (can('files.edit') && album?.role === 'viewer' && selection.every((p) => !p.owner));
  const changed = () => {
    invalidateListings();
    void meta.reload();
  };
  const rename = async () => {
    if (!album) return;
    const name = await askName('Rename album', 'Rename', album.name, (n) => api.albums.update(id, { name: n }));
    if (name !== undefined) changed();
  };
  const remove = async () => {
    if (!album) return;
    const sure = await confirmDialog({
      title: `Delete the album “${album.name}”?`,
      message: `Its ${plural(album.itemCount, 'photo or video', 'photos and videos')} stay where they are in your files: only the album goes.`,
      confirm: 'Delete album',
      danger: true,
    });
    if (!sure) return;
    try {
      await api.albums.remove(id);
      toast(`Album “${album.name}” deleted`);
      navigate('/photos/albums');
    } catch (err) {
      toastError(err);
    }
  };
  if (meta.error) return <LoadError message={meta.error} retry={meta.reload} />;
  return (
    <PhotoGrid
      key={id}
      source={albumSource(id)}
      head={
        <>
          <h1 class="view-title">{album?.name ?? 'Album'}</h1>
          <PhotoViews />
          {album && !owner && album.owner && (
            <span class="muted small push-left">
              Shared by {album.owner.name} · you can {album.role === 'editor' ? 'add and remove photos' : 'view'}
            </span>
          )}
          {owner && album && (
            <span class="push-left album-tools">
              {can('files.share') && (
                <button type="button" class="button small" onClick={() => openAlbumShare(album)}>
                  <Icon name="users" size={16} /> Share
                </button>
              )}
              {mayEdit && (
                <>
                  <button type="button" class="button small" onClick={rename}>
                    Rename
                  </button>
                  <button type="button" class="button small danger-ghost" onClick={remove}>
                    Delete album
                  </button>
                </>
              )}
            </span>
          )}
        </>
      }
      label={album ? `Photos in ${album.name}` : 'Photos in the album'}
      empty={<p>This album is empty. Select photos in All photos and choose “Add to album”.</p>}
      tools={(selection, clear) =>
        mayRemove(selection)
          ? [
              {
                id: 'album-remove',
                label: 'Remove from album',
                icon: 'albumRemove',
                run: async () => {
                  const { removed } = await api.albums.removeItems(
                    id,
                    selection.map((s) => s.id),
                  );
                  toast(
                    `${plural(removed, 'item')} removed from the album; ${owner || album?.role === 'viewer' ? 'they stay in your files' : 'the files stay where they are'}`,
                  );
                  clear();
                  changed();
                },
              },
              ...(selection.length === 1 && owner
                ? [
                    {
                      id: 'album-cover',
                      label: 'Use as cover',
                      icon: 'cover' as const,
                      run: async () => {
                        await api.albums.update(id, { coverItemId: selection[0]!.id });
                        toast('Album cover set');
                        clear();
                        changed();
                      },
                    },
                  ]
                : []),
            ]
          : []
      }
    />
  );
}
