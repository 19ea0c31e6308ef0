import { useEffect, useRef, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { Expiry, LinkOptions, ShareLinkView, ShareMode } from '../../src/contract/sharing.ts';
import type { LinkCalls } from '../api/sharing.ts';
import { loadSharedFolders } from '../app/folders.ts';
import { formatExpiry } from '../app/format.ts';
import { invalidateListings, patchListings } from '../app/listings.ts';
import { linkCalls } from '../app/team-folders.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog, Dialog, openDialog } from '../ui/dialog.tsx';
import { copyText } from '../ui/copy.ts';
import { Icon } from '../ui/icons.tsx';
import { PeopleSection } from './people.tsx';

const MODES: { value: ShareMode; label: string; hint: string }[] = [
  { value: 'view', label: 'View and download', hint: 'Visitors browse and download.' },
  { value: 'upload', label: 'Upload only', hint: 'A drop box: visitors send files and see nothing else.' },
  { value: 'view_upload', label: 'View and upload', hint: 'Visitors browse, download and add files.' },
];

/** A password people can read out: four groups of four from an alphabet without look-alikes. */
function generatePassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const chars = [...bytes].map((b) => alphabet[b % alphabet.length]);
  return [0, 4, 8, 12].map((i) => chars.slice(i, i + 4).join('')).join('-');
}

/** One line of what a link is now: mode, password, downloads, last use. */
export function linkState(link: ShareLinkView): string {
  const parts = [MODES.find((m) => m.value === link.mode)!.label];
  parts.push(link.hasPassword ? 'Password protected' : 'No password');
  parts.push(
    link.maxDownloads === null
      ? `${link.downloads} download${link.downloads === 1 ? '' : 's'}`
      : `${link.downloads} of ${link.maxDownloads} downloads used`,
  );
  return parts.join(' · ');
}

const EXPIRIES: { value: Expiry; label: string }[] = [
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: 'never', label: 'Never' },
];

/** The nearest choice to a link's current expiry, so the radio shows roughly what is set. */
function expiryOf(item: Item): Expiry {
  if (!item.shared) return '7d';
  if (!item.expiresAt) return 'never';
  return Date.parse(item.expiresAt) - Date.now() > 8 * 86_400_000 ? '30d' : '7d';
}

function afterShareChange(ids: string[], shared: boolean, expiresAt?: string | null) {
  patchListings((items) => items.map((i) => (ids.includes(i.id) ? { ...i, shared, expiresAt: shared ? (expiresAt ?? null) : null } : i)));
  invalidateListings();
  void loadSharedFolders().catch(() => {});
}

async function shareAgain(calls: LinkCalls, items: Item[], expiry: Expiry): Promise<void> {
  const ids = items.map((i) => i.id);
  await calls.share(ids, expiry);
  afterShareChange(ids, true);
}

async function removeLinks(calls: LinkCalls, items: Item[]): Promise<void> {
  const ids = items.map((i) => i.id);
  const expiry = items[0] ? expiryOf(items[0]) : '7d';
  try {
    await calls.unshare(ids);
  } catch (err) {
    return toastError(err);
  }
  afterShareChange(ids, false);
  toast(items.length === 1 ? `Link to “${items[0]!.name}” removed` : `${items.length} links removed`, {
    action: { label: 'Undo', run: () => shareAgain(calls, items, expiry).then(() => toast('Shared again with a new link'), toastError) },
  });
}

/** Password, mode and download limit, as a form section; `onChange` gets the options the owner set. */
export function LinkSettings(props: {
  folders: boolean;
  link: ShareLinkView | null;
  value: SettingsState;
  onChange: (next: SettingsState) => void;
}) {
  const { value: v, onChange } = props;
  const set = (patch: Partial<SettingsState>) => onChange({ ...v, ...patch });
  const hasPassword = props.link?.hasPassword ?? false;
  return (
    <div class="link-settings">
      {props.folders && (
        <fieldset class="radio-column">
          <legend>Visitors can</legend>
          {MODES.map((m) => (
            <div key={m.value} class="radio-choice">
              <label class="radio">
                <input
                  type="radio"
                  name="mode"
                  value={m.value}
                  checked={v.mode === m.value}
                  aria-describedby={`share-mode-${m.value}`}
                  onChange={() => set({ mode: m.value })}
                />
                <span>{m.label}</span>
              </label>
              <small id={`share-mode-${m.value}`} class="muted">
                {m.hint}
              </small>
            </div>
          ))}
        </fieldset>
      )}
      <div class="field">
        <label for="share-password">{hasPassword && !v.removePassword ? 'New password' : 'Password'}</label>
        <div class="password-row">
          <input
            id="share-password"
            aria-describedby={hasPassword && !v.removePassword ? 'share-password-hint' : undefined}
            // Preact's types tie a text input's other attributes to type text; the attributes here suit both.
            type={(v.showPassword ? 'text' : 'password') as 'text'}
            value={v.password}
            maxLength={128}
            autocomplete="new-password"
            placeholder={hasPassword && !v.removePassword ? 'Password set' : 'No password'}
            onInput={(e) => set({ password: e.currentTarget.value, removePassword: false })}
          />
          <button type="button" class="button" aria-pressed={v.showPassword} onClick={() => set({ showPassword: !v.showPassword })}>
            {v.showPassword ? 'Hide password' : 'Show password'}
          </button>
          <button
            type="button"
            class="button"
            onClick={() => set({ password: generatePassword(), showPassword: true, removePassword: false })}
          >
            Generate password
          </button>
        </div>
        {hasPassword && !v.removePassword && <small id="share-password-hint">Leave it empty to keep the current password.</small>}
        {hasPassword && (
          <label class="checkbox">
            <input
              type="checkbox"
              checked={v.removePassword}
              onChange={(e) => set({ removePassword: e.currentTarget.checked, password: '' })}
            />
            <span>Remove password</span>
          </label>
        )}
      </div>
      <div class="field limit-row">
        <label class="checkbox">
          <input type="checkbox" checked={v.limitDownloads} onChange={(e) => set({ limitDownloads: e.currentTarget.checked })} />
          <span>Limit downloads</span>
        </label>
        {v.limitDownloads && (
          <input
            type="number"
            aria-label="Maximum downloads"
            min={1}
            max={100000}
            step={1}
            value={v.maxDownloads}
            onInput={(e) => set({ maxDownloads: e.currentTarget.value })}
          />
        )}
      </div>
    </div>
  );
}

export interface SettingsState {
  mode: ShareMode;
  password: string;
  showPassword: boolean;
  removePassword: boolean;
  limitDownloads: boolean;
  maxDownloads: string;
}

export const settingsOf = (link: ShareLinkView | null): SettingsState => ({
  mode: link?.mode ?? 'view',
  password: '',
  showPassword: false,
  removePassword: false,
  limitDownloads: link?.maxDownloads != null,
  maxDownloads: String(link?.maxDownloads ?? 10),
});

/** Whether two states of the form set the same options (showing the password or not is no option). */
function sameSettings(a: SettingsState, b: SettingsState, folders: boolean): boolean {
  return (
    (!folders || a.mode === b.mode) &&
    a.password === b.password &&
    a.removePassword === b.removePassword &&
    a.limitDownloads === b.limitDownloads &&
    (!a.limitDownloads || a.maxDownloads === b.maxDownloads)
  );
}

/** The options to send: only what the owner changed from the link (everything, for a new link). */
export function optionsFrom(v: SettingsState, link: ShareLinkView | null, folders: boolean): LinkOptions | string {
  const out: LinkOptions = {};
  if (v.password) {
    if (v.password.length < 6 || v.password.length > 128) return 'The password must be 6 to 128 characters.';
    out.password = v.password;
  } else if (v.removePassword) out.password = null;
  if (folders && v.mode !== (link?.mode ?? 'view')) out.mode = v.mode;
  const max = v.limitDownloads ? Number(v.maxDownloads) : null;
  if (max !== null && (!Number.isInteger(max) || max < 1 || max > 100_000))
    return 'The download limit must be a whole number from 1 to 100000.';
  if (max !== (link?.maxDownloads ?? null)) out.maxDownloads = max;
  return out;
}

function ShareForm(props: { items: Item[]; team?: string | undefined; close: () => void }) {
  const { items } = props;
  const calls = linkCalls(props.team);
  const single = items.length === 1 ? items[0]! : null;
  const folders = items.every((i) => i.type === 'folder');
  const alreadyShared = items.every((i) => i.shared);
  const [links, setLinks] = useState<Record<string, string> | null>(null);
  const [link, setLink] = useState<ShareLinkView | null>(null);
  const [settings, setSettings] = useState<SettingsState>(settingsOf(null));
  const [expiry, setExpiry] = useState<Expiry>(single ? expiryOf(single) : '7d');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [expiresAt, setExpiresAt] = useState(single?.expiresAt ?? null);
  const linkRef = useRef<HTMLInputElement>(null);
  // The settings as last loaded or saved: anything else on screen is unsaved.
  const baseline = useRef(settingsOf(null));

  /** The item's link as it is now; `keepEdits` leaves what the owner changed and has not saved on screen. */
  const loadLink = async (itemId: string, keepEdits: boolean) => {
    const page = await calls.linkPage({ itemId, limit: 1 });
    const found = page.links[0] ?? null;
    const fresh = settingsOf(found);
    const before = baseline.current;
    baseline.current = fresh;
    setLink(found);
    setSettings((now) => (keepEdits && !sameSettings(now, before, folders) ? now : fresh));
  };

  useEffect(() => {
    if (!alreadyShared) return;
    calls.links(items.map((i) => i.id)).then(
      (r) => setLinks(r.links),
      (err: Error) => setError(err.message),
    );
    if (single) loadLink(single.id, true).catch((err: Error) => setError(err.message));
  }, []);

  /** Creates or re-times the links; true when done. `created`: the settings on screen are now the link's. */
  const share = async (choice: Expiry, options: LinkOptions = {}, created = false): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      const r = await calls.share(
        items.map((i) => i.id),
        choice,
        options,
      );
      setLinks(r.links);
      const at = choice === 'never' ? null : new Date(Date.now() + (choice === '7d' ? 7 : 30) * 86_400_000).toISOString();
      setExpiresAt(at);
      afterShareChange(
        items.map((i) => i.id),
        true,
        at,
      );
      if (single) await loadLink(single.id, !created);
      return true;
    } catch (err) {
      setError((err as Error).message);
      return false;
    } finally {
      setBusy(false);
    }
  };

  const create = () => {
    const options = optionsFrom(settings, null, folders);
    if (typeof options === 'string') return setError(options);
    const used = settings;
    void share(expiry, options, true).then((done) => {
      if (done && !single) baseline.current = used;
    });
  };

  const saveSettings = async () => {
    const options = optionsFrom(settings, link, folders);
    if (typeof options === 'string') return setError(options);
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      if (link) {
        const updated = await calls.updateLink(link.token, options);
        setLink(updated);
        baseline.current = settingsOf(updated);
        setSettings(baseline.current);
      } else {
        await calls.share(
          items.map((i) => i.id),
          expiry,
          options,
        );
        baseline.current = settings;
      }
      setSaved('Link settings saved');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const entries = links ? items.filter((i) => links[i.id]) : [];
  // Only a link that exists is re-timed or removed here; anything else waits for Create link.
  const linked = entries.length > 0;

  // Done, Esc, Close and a click outside all come here: changed settings are not dropped without asking.
  const leave = async () => {
    if (sameSettings(settings, baseline.current, folders)) return props.close();
    const discard = await confirmDialog({
      title: 'Discard link settings?',
      message: `You changed the mode, password or download limit and did not save it. Discard the change, or choose Cancel and press ${
        linked ? 'Save settings' : 'Create link'
      }.`,
      confirm: 'Discard changes',
      danger: true,
    });
    if (discard) props.close();
  };
  const mode = link?.mode ?? settings.mode;
  const title = single ? `Share “${single.name}”` : `Share ${items.length} items`;
  return (
    <Dialog title={title} onClose={() => void leave()} wide>
      <div class="dialog-body share">
        {/* A team folder's people are its groups, which the admin sets. */}
        {single && !props.team && <PeopleSection item={single} />}
        {single && <h3 class="share-link-title">Public link</h3>}
        <p class="muted">
          {mode === 'upload'
            ? 'Anyone with the link can send files into this folder, and sees nothing else.'
            : mode === 'view_upload'
              ? 'Anyone with the link can view, download and add files to this folder and everything in it.'
              : `Anyone with the link can view and download ${
                  single
                    ? single.type === 'folder'
                      ? 'this folder and everything in it, including what is added later'
                      : 'this file'
                    : 'these items'
                }.`}{' '}
          No sign-in needed{settings.password || link?.hasPassword ? ', only the password' : ''}.
        </p>
        {links && linked && (
          <div class="share-links">
            {entries.map((i) => (
              <div key={i.id} class="share-link-row">
                <label class="field">
                  <span>{single ? 'Share link' : `Share link for ${i.name}`}</span>
                  <input ref={single ? linkRef : undefined} readOnly value={links[i.id]} onFocus={(e) => e.currentTarget.select()} />
                </label>
                <button
                  type="button"
                  class="button"
                  onClick={(e) =>
                    copyText(
                      links[i.id]!,
                      'Link copied',
                      (e.currentTarget.previousElementSibling?.querySelector('input') as HTMLInputElement) ?? null,
                    )
                  }
                >
                  <Icon name="copy" size={18} /> Copy link
                </button>
              </div>
            ))}
            {single && (
              <p class="muted small">
                {formatExpiry(expiresAt)}
                {link ? ` · ${linkState(link)}` : ''}
              </p>
            )}
          </div>
        )}
        <fieldset class="radio-row">
          <legend>{linked ? 'Change expiry' : 'Link expires after'}</legend>
          {EXPIRIES.map((e) => (
            <label key={e.value} class="radio">
              <input
                type="radio"
                name="expiry"
                value={e.value}
                checked={expiry === e.value}
                onChange={() => {
                  setExpiry(e.value);
                  if (linked) void share(e.value);
                }}
              />
              <span>{e.label}</span>
            </label>
          ))}
        </fieldset>
        <LinkSettings folders={folders} link={link} value={settings} onChange={setSettings} />
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
        {saved && !error && (
          <p class="muted small" role="status">
            {saved}
          </p>
        )}
      </div>
      <div class="dialog-actions">
        {linked ? (
          <>
            <button
              type="button"
              class="button danger-ghost push-left"
              onClick={() => {
                props.close();
                void removeLinks(calls, items);
              }}
            >
              Remove link
            </button>
            <button type="button" class="button" disabled={busy} onClick={() => void saveSettings()}>
              Save settings
            </button>
            <button type="button" class="button primary" onClick={() => void leave()}>
              Done
            </button>
          </>
        ) : (
          <>
            <button type="button" class="button" onClick={() => void leave()}>
              {single ? 'Done' : 'Cancel'}
            </button>
            <button type="button" class="button primary" disabled={busy} onClick={create}>
              Create link
            </button>
          </>
        )}
      </div>
    </Dialog>
  );
}

/** Create, copy, re-time or remove the public links of the selected items; `team`: of a team folder this account administers. */
export function openShareDialog(items: Item[], team?: string): void {
  void openDialog<void>((close) => <ShareForm items={items} team={team} close={() => close()} />);
}
