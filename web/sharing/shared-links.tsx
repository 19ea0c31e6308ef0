import { useEffect, useState } from 'preact/hooks';
import type { TeamFolderChoice } from '../../src/contract/groups.ts';
import type { ShareLinkView } from '../../src/contract/sharing.ts';
import type { LinkCalls } from '../api/sharing.ts';
import { api } from '../api/index.ts';
import { loadSharedFolders, sharedFolders } from '../app/folders.ts';
import { administeredTeams, linkCalls, loadAdministeredTeams } from '../app/team-folders.ts';
import { formatDate, formatExpiry } from '../app/format.ts';
import { invalidateListings } from '../app/listings.ts';
import { toast, toastError } from '../app/toasts.ts';
import { usePages } from '../app/load.ts';
import { copyText } from '../ui/copy.ts';
import { Dialog, openDialog } from '../ui/dialog.tsx';
import { SubmitButton } from '../ui/form.tsx';
import { MoreButton } from '../ui/page.tsx';
import { LinkSettings, linkState, optionsFrom, type SettingsState, settingsOf } from './link-settings.tsx';

function LinkSettingsForm(props: { link: ShareLinkView; folder: boolean; calls: LinkCalls; close: (updated?: ShareLinkView) => void }) {
  const [settings, setSettings] = useState<SettingsState>(settingsOf(props.link));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    const options = optionsFrom(settings, props.link, props.folder);
    if (typeof options === 'string') return setError(options);
    setBusy(true);
    try {
      props.close(await props.calls.updateLink(props.link.token, options));
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  return (
    <form onSubmit={save}>
      <div class="dialog-body share">
        <p class="muted small">{linkState(props.link)}</p>
        <LinkSettings folders={props.folder} link={props.link} value={settings} onChange={setSettings} />
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
      </div>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={() => props.close()}>
          Cancel
        </button>
        <SubmitButton busy={busy}>Save settings</SubmitButton>
      </div>
    </form>
  );
}

const SCOPES = {
  view: 'anyone with the link can see and download everything here, including what is added later.',
  upload: 'anyone with the link can send files into it, and sees nothing in it but what they sent.',
  view_upload: 'anyone with the link can see, download and add files here, including what is added later.',
} as const;

/**
 * What a shared folder's link lets visitors do, for the banner inside it: view until its mode is known (a
 * login without the Share permission cannot read links, and sees the banner as before).
 */
export function LinkScope(props: { folderId: string; canAsk: boolean }) {
  const [mode, setMode] = useState<keyof typeof SCOPES>('view');
  useEffect(() => {
    if (!props.canAsk) return;
    let live = true;
    api.sharing.linkPage({ itemId: props.folderId, limit: 1 }).then(
      (page) => live && setMode(page.links[0]?.mode ?? 'view'),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [props.folderId, props.canAsk]);
  return <>{SCOPES[mode]}</>;
}

/**
 * The Shared view's list of links with their options: state at a glance, copy, change settings, remove.
 * With `team`, the links of that team folder's items, for its administrators.
 */
export function SharedLinks({ team }: { team?: TeamFolderChoice }) {
  const calls = linkCalls(team?.id);
  const titleId = team ? `shared-links-title-${team.id}` : 'shared-links-title';
  const pages = usePages((cursor) => calls.linkPage({ cursor }).then((r) => ({ items: r.links, nextCursor: r.nextCursor })));
  const [open, setOpen] = useState(true);

  const edit = async (link: ShareLinkView) => {
    let folder = sharedFolders.value.has(link.itemId);
    // The account's shared folders are known; a team folder's items are asked for.
    if (team) {
      try {
        folder = (await api.files.info(link.itemId)).type === 'folder';
      } catch (err) {
        return toastError(err);
      }
    }
    const updated = await openDialog<ShareLinkView>((close) => (
      <Dialog title={`Link settings for “${link.itemName}”`} onClose={() => close()} wide>
        <LinkSettingsForm link={link} folder={folder} calls={calls} close={close} />
      </Dialog>
    ));
    if (!updated) return;
    pages.update((links) => links.map((l) => (l.token === updated.token ? updated : l)));
    toast('Link settings saved');
  };
  const remove = async (link: ShareLinkView) => {
    try {
      await calls.unshare([link.itemId]);
    } catch (err) {
      return toastError(err);
    }
    pages.update((links) => links.filter((l) => l.token !== link.token));
    invalidateListings();
    void loadSharedFolders().catch(() => {});
    // Undo shares it again with its mode and limit; a password is stored only as a hash, so it cannot come back.
    const again = async () => {
      const expiry = link.expiresAt === null ? 'never' : Date.parse(link.expiresAt) - Date.now() > 8 * 86_400_000 ? '30d' : '7d';
      await calls.share([link.itemId], expiry, { mode: link.mode, maxDownloads: link.maxDownloads });
      invalidateListings();
      void loadSharedFolders().catch(() => {});
      void pages.reload();
      toast(link.hasPassword ? 'Shared again with a new link and no password' : 'Shared again with a new link');
    };
    toast(`Link to “${link.itemName}” removed`, { action: { label: 'Undo', run: () => again().catch(toastError) } });
  };

  const links = pages.items;
  if (pages.error && !links)
    return (
      <p class="field-error shared-links" role="alert">
        Links could not be loaded: {pages.error}
      </p>
    );
  if (!links || links.length === 0) return null;
  return (
    <section class="shared-links" aria-labelledby={titleId}>
      <button type="button" class="shared-links-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
        <h2 id={titleId}>
          {team ? `Links of ${team.name}` : 'Links'} ({links.length}
          {pages.more ? '+' : ''})
        </h2>
      </button>
      {open && (
        <ul class="shared-links-list" aria-label={team ? `Share links of ${team.name}` : 'Share links'}>
          {links.map((link) => (
            <li key={link.token} class="shared-link">
              <div class="shared-link-main">
                <strong class="shared-link-name" title={link.itemName}>
                  {link.itemName}
                </strong>
                <span class="muted small">
                  {linkState(link)} · {formatExpiry(link.expiresAt)}
                  {link.lastUsedAt ? ` · last used ${formatDate(link.lastUsedAt)}` : ' · not used yet'}
                </span>
              </div>
              <div class="shared-link-actions">
                <button
                  type="button"
                  class="button"
                  aria-label={`Copy link to ${link.itemName}`}
                  onClick={() => copyText(link.url, 'Link copied', null)}
                >
                  Copy
                </button>
                <button
                  type="button"
                  class="button"
                  aria-label={`Settings of the link to ${link.itemName}`}
                  onClick={() => void edit(link)}
                >
                  Settings
                </button>
                <button
                  type="button"
                  class="button danger-ghost"
                  aria-label={`Remove the link to ${link.itemName}`}
                  onClick={() => void remove(link)}
                >
                  Remove
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {open && pages.error && (
        <p class="field-error" role="alert">
          More links could not be loaded: {pages.error}
        </p>
      )}
      {open && <MoreButton pages={pages} label="More links" />}
    </section>
  );
}

/** The links of the team folders this account administers, each under its own heading, below the account's own. */
export function TeamLinks() {
  useEffect(() => void loadAdministeredTeams(true), []);
  return (
    <>
      {[...administeredTeams.value.values()].map((team) => (
        <SharedLinks key={team.id} team={team} />
      ))}
    </>
  );
}
