import { useEffect } from 'preact/hooks';
import type { Album, AlbumLinkView } from '../../src/contract/albums.ts';
import { api } from '../api/index.ts';
import { formatExpiry } from '../app/format.ts';
import { type ExpiryChoice } from '../sharing/expiry-field.tsx';
import type { SaveStatus } from '../sharing/save-status.ts';
import { LinkQr } from '../sharing/link-qr.tsx';
import { LinkControls, LinkRow, NoLinkYet } from '../sharing/link-part.tsx';
import { useLinkEditor } from '../sharing/link-editor.ts';
import { linkState, settingsOf } from '../sharing/link-settings.tsx';

const asLink = (l: AlbumLinkView) => ({ ...l, mode: 'view' as const });
const expiryBody = (c: ExpiryChoice) => (typeof c === 'string' ? { expiry: c } : { expiresAt: c.at });

/**
 * An album's Link part, as a file's: nothing public until "Create link"; then every change saves as it is made
 * (expiry, password, download limit), one after another so answers never cross.
 */
export function AlbumLinkPart(props: { album: Album; say: (status: SaveStatus) => void }) {
  const { album, say } = props;
  const ed = useLinkEditor<AlbumLinkView>({
    say,
    view: asLink,
    folders: false,
    apply: async (_now, changes) => {
      ed.keep(await api.albums.updateLink(album.id, changes));
    },
    saveOnClose: false,
  });
  const { link, keep, save, settings, setSettings } = ed;
  useEffect(() => {
    api.albums.link(album.id).then(
      (l) => {
        keep(l);
        setSettings(settingsOf(l && asLink(l)));
      },
      (err: Error) => say({ kind: 'error', text: err.message }),
    );
  }, [album.id]);

  if (link === undefined) return <p class="muted">Loading the link…</p>;
  if (link === null)
    return (
      <NoLinkYet
        onExpiry={(c) => (ed.choice.current = c)}
        create={() =>
          save('Link created', async () => {
            const made = await api.albums.createLink(album.id, expiryBody(ed.choice.current));
            keep(made);
            setSettings(settingsOf(asLink(made)));
          })
        }
      >
        No public link yet: only you and the people you add can see this album. A link lets anyone who has it see its photos, without
        signing in.
      </NoLinkYet>
    );

  return (
    <div class="share-link-tab">
      <p class="muted">
        Anyone with the link can see the photos in this album, as they are now and as they change
        {settings.password || link.hasPassword ? ', with the password' : ', without signing in'}.
      </p>
      <div class="share-links">
        <LinkRow label="Album link" url={link.url} />
        <p class="muted small">
          {formatExpiry(link.expiresAt)} · {linkState(asLink(link)).replace('View and download · ', '')}
        </p>
      </div>
      <LinkQr link={link.token} name={album.name} load={() => api.albums.linkQr(album.id)} />
      <LinkControls
        edits={ed}
        folders={false}
        link={asLink(link)}
        expiresAt={link.expiresAt}
        onExpiry={(c) => save('Expiry saved', async () => keep(await api.albums.updateLink(album.id, expiryBody(c))))}
        remove={() =>
          save('Link removed: it no longer works', async () => {
            ed.drop();
            await api.albums.removeLink(album.id);
            keep(null);
            setSettings(settingsOf(null));
          })
        }
      />
    </div>
  );
}
