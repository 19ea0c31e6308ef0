import type { SaveStatus } from './save-status.ts';
import { useEffect, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { ShareLinkView } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import type { LinkCalls } from '../api/sharing.ts';
import { formatExpiry } from '../app/format.ts';
import { type ExpiryChoice, expiresAtOf } from './expiry-field.tsx';
import { afterShareChange, removeLinks } from './link-actions.ts';
import { LinkQr } from './link-qr.tsx';
import { LinkControls, LinkRow, NoLinkYet } from './link-part.tsx';
import { useLinkEditor } from './link-editor.ts';
import { linkState, settingsOf } from './link-settings.tsx';

/** The share dialog's Link part: nothing public until "Create link"; then every change saves as it is made. */
export function LinkTab(props: { items: Item[]; calls: LinkCalls; team: boolean; say: (status: SaveStatus) => void; close: () => void }) {
  const { items, calls, say } = props;
  const ids = items.map((i) => i.id);
  const single = items.length === 1 ? items[0]! : null;
  const folders = items.every((i) => i.type === 'folder');
  const linked = items.every((i) => i.shared);
  const [links, setLinks] = useState<Record<string, string> | null>(null);
  const [expiresAt, setExpiresAt] = useState<string | null | undefined>(linked ? (single?.expiresAt ?? null) : undefined);
  const [loading, setLoading] = useState(linked);
  const ed = useLinkEditor<ShareLinkView>({
    say,
    view: (l) => l,
    folders,
    apply: async (now, changes) => {
      if (now) ed.keep(await calls.updateLink(now.token, changes));
      else await calls.share(ids, ed.choice.current, changes);
    },
    saveOnClose: true,
  });
  const { settings } = ed;
  const link = ed.link ?? null;
  const loadLink = async () => {
    if (!single) return;
    const found = (await calls.linkPage({ itemId: single.id, limit: 1 })).links[0] ?? null;
    ed.keep(found);
    ed.setSettings((now) => ({ ...settingsOf(found), showPassword: now.showPassword }));
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

  /** Creates the links (the one explicit door to a public link) or re-times them. */
  const share = (next: ExpiryChoice, what: string) =>
    ed.save(what, async () => {
      const r = await calls.share(ids, next);
      ed.choice.current = next;
      setLinks(r.links);
      setExpiresAt(expiresAtOf(next));
      afterShareChange(ids, true, expiresAtOf(next));
      await loadLink();
    });

  const entries = links ? items.filter((i) => links[i.id]) : [];
  if (loading) return <p class="muted">Loading the link…</p>;
  if (entries.length === 0)
    return (
      <NoLinkYet onExpiry={(c) => (ed.choice.current = c)} create={() => void share(ed.choice.current, 'Link created')}>
        No public link yet: only you and the people you add can open {items.length === 1 ? 'this' : 'these'}. A link lets anyone who has it
        open it, without signing in.
      </NoLinkYet>
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
      <LinkControls
        edits={ed}
        folders={folders}
        link={link}
        expiresAt={expiresAt}
        onExpiry={(c) => void share(c, 'Expiry saved')}
        remove={() => {
          // Nothing left to save: the toast offers Undo on the page.
          ed.drop();
          props.close();
          void removeLinks(items, calls);
        }}
      />
    </div>
  );
}
