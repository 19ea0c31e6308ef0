import { useEffect, useRef, useState } from 'preact/hooks';
import type { Album, AlbumLinkView } from '../../src/contract/albums.ts';
import type { LinkOptions } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import { formatExpiry } from '../app/format.ts';
import { Icon } from '../ui/icons.tsx';
import { type ExpiryChoice, ExpiryField } from '../sharing/expiry-field.tsx';
import type { SaveStatus } from '../sharing/link-tab.tsx';
import { LinkQr } from '../sharing/link-qr.tsx';
import { LinkFooter, LinkRow } from '../sharing/link-row.tsx';
import { LinkSettings, linkState, optionsFrom, type SettingsState, settingsOf } from '../sharing/link-settings.tsx';

const asLink = (l: AlbumLinkView) => ({ ...l, mode: 'view' as const });
const expiryBody = (c: ExpiryChoice) => (typeof c === 'string' ? { expiry: c } : { expiresAt: c.at });

/**
 * An album's Link part, as a file's: nothing public until "Create link"; then every change saves as it is made
 * (expiry, password, download limit), one after another so answers never cross.
 */
export function AlbumLinkPart(props: { album: Album; say: (status: SaveStatus) => void }) {
  const { album, say } = props;
  const [link, setLink] = useState<AlbumLinkView | null | undefined>(undefined);
  const [settings, setSettings] = useState<SettingsState>(settingsOf(null));
  const choice = useRef<ExpiryChoice>('7d');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const queue = useRef<Promise<void>>(Promise.resolve());
  const latest = useRef<AlbumLinkView | null>(null);
  const keep = (l: AlbumLinkView | null) => {
    latest.current = l;
    setLink(l);
  };
  useEffect(() => {
    api.albums.link(album.id).then(
      (l) => {
        keep(l);
        setSettings(settingsOf(l && asLink(l)));
      },
      (err: Error) => say({ kind: 'error', text: err.message }),
    );
    return () => clearTimeout(timer.current);
  }, [album.id]);

  const save = (what: string, run: () => Promise<void>) => {
    say({ kind: 'saving', text: 'Saving…' });
    queue.current = queue.current.then(() =>
      run().then(
        () => say({ kind: 'saved', text: what }),
        (err: Error) => say({ kind: 'error', text: err.message }),
      ),
    );
  };
  const saveOptions = (v: SettingsState, withPassword: boolean) => {
    const wanted = withPassword ? v : { ...v, password: '' };
    const first = optionsFrom(wanted, latest.current && asLink(latest.current), false);
    if (typeof first === 'string') return say({ kind: 'error', text: first });
    if (Object.keys(first).length === 0) return;
    if (withPassword) setSettings((now) => ({ ...now, password: '', removePassword: false }));
    const what = first.password ? 'Password set' : first.password === null ? 'Password removed' : 'Link settings saved';
    save(what, async () => {
      const changes = optionsFrom(wanted, latest.current && asLink(latest.current), false) as LinkOptions;
      if (Object.keys(changes).length > 0) keep(await api.albums.updateLink(album.id, changes));
    });
  };
  const change = (next: SettingsState) => {
    const before = settings;
    setSettings(next);
    // Typing or generating a password waits for "Set password"; showing it changes nothing.
    if ((next.password !== before.password && !next.removePassword) || next.showPassword !== before.showPassword) return;
    clearTimeout(timer.current);
    timer.current = setTimeout(() => saveOptions(next, false), next.maxDownloads !== before.maxDownloads ? 600 : 0);
  };

  if (link === undefined) return <p class="muted">Loading the link…</p>;
  if (link === null)
    return (
      <div class="share-link-tab">
        <p class="muted">
          No public link yet: only you and the people you add can see this album. A link lets anyone who has it see its photos, without
          signing in.
        </p>
        <ExpiryField legend="The link will expire after" expiresAt={undefined} onChange={(c) => (choice.current = c)} />
        <button
          type="button"
          class="button primary"
          onClick={() =>
            save('Link created', async () => {
              const made = await api.albums.createLink(album.id, expiryBody(choice.current));
              keep(made);
              setSettings(settingsOf(asLink(made)));
            })
          }
        >
          <Icon name="link" size={18} /> Create link
        </button>
      </div>
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
      <ExpiryField
        legend="Expires"
        expiresAt={link.expiresAt}
        onChange={(c) => save('Expiry saved', async () => keep(await api.albums.updateLink(album.id, expiryBody(c))))}
      />
      <div
        onFocusOut={(e) => {
          if ((e.target as HTMLElement).id === 'share-password' && settings.password) saveOptions(settings, true);
        }}
      >
        <LinkSettings folders={false} link={asLink(link)} value={settings} onChange={change} />
      </div>
      <LinkFooter
        password={settings.password !== ''}
        setPassword={() => saveOptions(settings, true)}
        remove={() =>
          save('Link removed: it no longer works', async () => {
            clearTimeout(timer.current);
            await api.albums.removeLink(album.id);
            keep(null);
            setSettings(settingsOf(null));
          })
        }
      />
    </div>
  );
}
