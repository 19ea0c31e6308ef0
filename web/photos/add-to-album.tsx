import { useState } from 'preact/hooks';
import { ALBUM_NAME_MAX, type Album } from '../../src/contract/albums.ts';
import { api } from '../api/index.ts';
import { plural } from '../app/format.ts';
import { invalidateListings } from '../app/listings.ts';
import { usePages } from '../app/load.ts';
import { navigate } from '../app/router.ts';
import { toast } from '../app/toasts.ts';
import { Dialog, FormButtons, openDialog } from '../ui/dialog.tsx';
import { Field, FormError } from '../ui/form.tsx';
import { MoreButton } from '../ui/page.tsx';

const NEW = '';

export const albumPath = (id: string) => `/photos/albums/${encodeURIComponent(id)}`;

function AddToAlbumForm({ ids, close }: { ids: string[]; close: (album?: Album) => void }) {
  // Older albums than the first page's are read on by "More albums", so every album can be chosen.
  const list = usePages((cursor) => api.albums.page({ cursor }));
  const albums = list.items;
  const [chosen, setChoice] = useState<string | null>(null);
  // The newest album is chosen once the list has arrived, unless the user chose already.
  const choice = chosen ?? albums?.[0]?.id ?? NEW;
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          const album = choice === NEW ? (await api.albums.create({ name, ids })).album : (await api.albums.addItems(choice, ids)).album;
          close(album);
        } catch (err) {
          setError((err as Error).message);
          setBusy(false);
        }
      }}
    >
      <div class="dialog-body form">
        <Field label="Album">
          <select name="album" value={choice} onChange={(e) => setChoice(e.currentTarget.value)} disabled={albums === null}>
            {(albums ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name} ({plural(a.itemCount, 'item')})
              </option>
            ))}
            <option value={NEW}>New album…</option>
          </select>
        </Field>
        {choice === NEW && (
          <Field label="Name of the new album">
            <input name="name" required maxLength={ALBUM_NAME_MAX} value={name} onInput={(e) => setName(e.currentTarget.value)} autofocus />
          </Field>
        )}
        <MoreButton pages={list} label="More albums" />
        <p class="muted small">Albums hold references: the photos stay where they are, and no copy is made.</p>
        <FormError message={error ?? list.error} />
      </div>
      <FormButtons submit={choice === NEW ? 'Create album' : 'Add'} busy={busy || albums === null} cancel={() => close()} />
    </form>
  );
}

/** Adds the photos to an album, or to a new one; resolves with the album (undefined when cancelled). */
export async function addToAlbum(items: Array<{ id: string }>): Promise<Album | undefined> {
  const album = await openDialog<Album>((close) => (
    <Dialog title={`Add ${plural(items.length, 'item')} to an album`} onClose={() => close()}>
      <AddToAlbumForm ids={items.map((i) => i.id)} close={close} />
    </Dialog>
  ));
  // The album's page, if it was seen before, shows what it holds now.
  if (album) invalidateListings();
  if (album) toast(`Added to “${album.name}”`, { action: { label: 'Open album', run: () => navigate(albumPath(album.id)) } });
  return album;
}
