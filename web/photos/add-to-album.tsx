import { useEffect, useState } from 'preact/hooks';
import { ALBUM_NAME_MAX, type Album } from '../../src/contract/albums.ts';
import { api } from '../api/index.ts';
import { plural } from '../app/format.ts';
import { invalidateListings } from '../app/listings.ts';
import { navigate } from '../app/router.ts';
import { toast } from '../app/toasts.ts';
import { Dialog, FormButtons, openDialog } from '../ui/dialog.tsx';
import { Field, FormError } from '../ui/form.tsx';

const NEW = '';

export const albumPath = (id: string) => `/photos/albums/${encodeURIComponent(id)}`;

function AddToAlbumForm({ ids, close }: { ids: string[]; close: (album?: Album) => void }) {
  const [albums, setAlbums] = useState<Album[] | null>(null);
  const [choice, setChoice] = useState(NEW);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api.albums.list({ limit: 200 }).then(
      (r) => {
        setAlbums(r.albums);
        if (r.albums[0]) setChoice(r.albums[0].id);
      },
      (err) => setError((err as Error).message),
    );
  }, []);
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
        <p class="muted small">Albums hold references: the photos stay where they are, and no copy is made.</p>
        <FormError message={error} />
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
