import { useEffect, useRef, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { LinkOptions, ShareLinkView } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import type { LinkCalls } from '../api/sharing.ts';
import { formatExpiry } from '../app/format.ts';
import { Icon } from '../ui/icons.tsx';
import { type ExpiryChoice, ExpiryField, expiresAtOf } from './expiry-field.tsx';
import { afterShareChange, removeLinks } from './link-actions.ts';
import { LinkQr } from './link-qr.tsx';
import { LinkFooter, LinkRow } from './link-row.tsx';
import { LinkSettings, linkState, optionsFrom, type SettingsState, settingsOf } from './link-settings.tsx';

/** What the dialog's status line says about the last change. */
export type SaveStatus = { kind: 'saving' | 'saved' | 'error'; text: string };

/** The share dialog's Link part: nothing public until "Create link"; then every change saves as it is made. */
export function LinkTab(props: { items: Item[]; calls: LinkCalls; team: boolean; say: (status: SaveStatus) => void; close: () => void }) {
  const { items, calls, say } = props;
  const ids = items.map((i) => i.id);
  const single = items.length === 1 ? items[0]! : null;
  const folders = items.every((i) => i.type === 'folder');
  const linked = items.every((i) => i.shared);
  const [links, setLinks] = useState<Record<string, string> | null>(null);
  const [link, setLink] = useState<ShareLinkView | null>(null);
  const [settings, setSettings] = useState<SettingsState>(settingsOf(null));
  const [expiresAt, setExpiresAt] = useState<string | null | undefined>(linked ? (single?.expiresAt ?? null) : undefined);
  const [loading, setLoading] = useState(linked);
  const choice = useRef<ExpiryChoice>('7d');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  // Saves run one after another, each against the link as the last one left it: answers never cross.
  const queue = useRef<Promise<void>>(Promise.resolve());
  const latest = useRef<ShareLinkView | null>(null);
  const keep = (l: ShareLinkView | null) => setLink((latest.current = l));
  // What is still to save when the dialog closes: a debounced change, a typed password.
  const pending = useRef<(() => void) | null>(null);
  const unsaved = useRef<(() => void) | null>(null);
  const loadLink = async () => {
    if (!single) return;
    const found = (await calls.linkPage({ itemId: single.id, limit: 1 })).links[0] ?? null;
    keep(found);
    setSettings((now) => ({ ...settingsOf(found), showPassword: now.showPassword }));
    if (found) setExpiresAt(found.expiresAt);
  };
  useEffect(() => {
    if (!linked) return;
    calls
      .links(ids)
      .then(
        (r) => setLinks(r.links),
        (err: Error) => say({ kind: 'error', text: err.message }),
      )
      .finally(() => setLoading(false));
    loadLink().catch((err: Error) => say({ kind: 'error', text: err.message }));
  }, []);
  useEffect(
    () => () => {
      clearTimeout(timer.current);
      pending.current?.();
      unsaved.current?.();
    },
    [],
  );

  const save = (what: string, run: () => Promise<void>) => {
    say({ kind: 'saving', text: 'Saving…' });
    queue.current = queue.current.then(() =>
      run().then(
        () => say({ kind: 'saved', text: what }),
        (err: Error) => say({ kind: 'error', text: err.message }),
      ),
    );
    return queue.current;
  };

  /** Creates the links (the one explicit door to a public link) or re-times them. */
  const share = (next: ExpiryChoice, what: string) =>
    save(what, async () => {
      const r = await calls.share(ids, next);
      choice.current = next;
      setLinks(r.links);
      setExpiresAt(expiresAtOf(next));
      afterShareChange(ids, true, expiresAtOf(next));
      await loadLink();
    });

  const saveOptions = (v: SettingsState, withPassword: boolean) => {
    const wanted = withPassword ? v : { ...v, password: '' };
    const options = optionsFrom(wanted, latest.current, folders);
    if (typeof options === 'string') return say({ kind: 'error', text: options });
    if (Object.keys(options).length === 0) return;
    const what = options.password ? 'Password set' : options.password === null ? 'Password removed' : 'Link settings saved';
    if (withPassword) {
      unsaved.current = null;
      setSettings((now) => ({ ...now, password: '', removePassword: false }));
    }
    void save(what, async () => {
      const now = latest.current;
      const changes = optionsFrom(wanted, now, folders) as LinkOptions;
      if (Object.keys(changes).length === 0) return;
      if (now) keep(await calls.updateLink(now.token, changes));
      else await calls.share(ids, choice.current, changes);
    });
  };

  const change = (next: SettingsState) => {
    const before = settings;
    setSettings(next);
    // Typing or generating a password waits for "Set password"; showing it changes nothing.
    if ((next.password !== before.password && !next.removePassword) || next.showPassword !== before.showPassword) return;
    clearTimeout(timer.current);
    pending.current = () => saveOptions(next, false);
    timer.current = setTimeout(
      () => {
        pending.current = null;
        saveOptions(next, false);
      },
      next.maxDownloads !== before.maxDownloads ? 600 : 0,
    );
  };
  unsaved.current = settings.password ? () => saveOptions(settings, true) : null;

  const entries = links ? items.filter((i) => links[i.id]) : [];
  if (loading) return <p class="muted">Loading the link…</p>;
  if (entries.length === 0)
    return (
      <div class="share-link-tab">
        <p class="muted">
          No public link yet: only you and the people you add can open {items.length === 1 ? 'this' : 'these'}. A link lets anyone who has
          it open it, without signing in.
        </p>
        <ExpiryField legend="The link will expire after" expiresAt={undefined} onChange={(c) => (choice.current = c)} />
        <button type="button" class="button primary" onClick={() => void share(choice.current, 'Link created')}>
          <Icon name="link" size={18} /> Create link
        </button>
      </div>
    );

  return (
    <div class="share-link-tab">
      <p class="muted">
        Anyone with the link can {link?.mode === 'upload' ? 'send files into' : 'open'}{' '}
        {single
          ? single.type === 'folder'
            ? 'this folder and everything in it, including what is added later'
            : 'this file'
          : 'these items'}
        {settings.password || link?.hasPassword ? ', with the password' : ', without signing in'}.
      </p>
      <div class="share-links">
        {entries.map((i) => (
          <LinkRow key={i.id} label={single ? 'Share link' : `Share link for ${i.name}`} url={links![i.id]!} />
        ))}
        {single && (
          <p class="muted small">
            {formatExpiry(expiresAt)}
            {link ? ` · ${linkState(link)}` : ''}
          </p>
        )}
      </div>
      {single && link && !props.team && <LinkQr link={link.token} name={single.name} load={() => api.sharing.qrCode(link.token)} />}
      <ExpiryField legend="Expires" expiresAt={expiresAt} onChange={(c) => void share(c, 'Expiry saved')} />
      <div
        onFocusOut={(e) => {
          if ((e.target as HTMLElement).id === 'share-password' && settings.password) saveOptions(settings, true);
        }}
      >
        <LinkSettings folders={folders} link={link} value={settings} onChange={change} />
      </div>
      <LinkFooter
        password={settings.password !== ''}
        setPassword={() => saveOptions(settings, true)}
        remove={() => {
          // Nothing left to save: the toast offers Undo on the page.
          pending.current = null;
          unsaved.current = null;
          props.close();
          void removeLinks(items, calls);
        }}
      />
    </div>
  );
}
