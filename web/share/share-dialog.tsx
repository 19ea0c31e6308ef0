import { useEffect, useRef, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { Expiry } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import { loadSharedFolders } from '../app/folders.ts';
import { formatExpiry } from '../app/format.ts';
import { invalidateListings, patchListings } from '../app/listings.ts';
import { toast, toastError } from '../app/toasts.ts';
import { Dialog, openDialog } from '../ui/dialog.tsx';
import { copyText } from '../ui/copy.ts';
import { Icon } from '../ui/icons.tsx';

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

async function shareAgain(items: Item[], expiry: Expiry): Promise<void> {
  const ids = items.map((i) => i.id);
  await api.sharing.share(ids, expiry);
  afterShareChange(ids, true);
}

async function removeLinks(items: Item[]): Promise<void> {
  const ids = items.map((i) => i.id);
  const expiry = items[0] ? expiryOf(items[0]) : '7d';
  try {
    await api.sharing.unshare(ids);
  } catch (err) {
    return toastError(err);
  }
  afterShareChange(ids, false);
  toast(items.length === 1 ? `Link to “${items[0]!.name}” removed` : `${items.length} links removed`, {
    action: { label: 'Undo', run: () => shareAgain(items, expiry).then(() => toast('Shared again with a new link'), toastError) },
  });
}

function ShareForm(props: { items: Item[]; close: () => void }) {
  const { items } = props;
  const single = items.length === 1 ? items[0]! : null;
  const alreadyShared = items.every((i) => i.shared);
  const [links, setLinks] = useState<Record<string, string> | null>(null);
  const [expiry, setExpiry] = useState<Expiry>(single ? expiryOf(single) : '7d');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [expiresAt, setExpiresAt] = useState(single?.expiresAt ?? null);
  const linkRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (!alreadyShared) return;
    api.sharing.links(items.map((i) => i.id)).then(
      (r) => setLinks(r.links),
      (err: Error) => setError(err.message),
    );
  }, []);

  const share = async (choice: Expiry) => {
    setBusy(true);
    setError(null);
    try {
      const r = await api.sharing.share(
        items.map((i) => i.id),
        choice,
      );
      setLinks(r.links);
      const at = choice === 'never' ? null : new Date(Date.now() + (choice === '7d' ? 7 : 30) * 86_400_000).toISOString();
      setExpiresAt(at);
      afterShareChange(
        items.map((i) => i.id),
        true,
        at,
      );
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const entries = links ? items.filter((i) => links[i.id]) : [];
  return (
    <>
      <div class="dialog-body share">
        <p class="muted">
          Anyone with the link can view and download{' '}
          {single
            ? single.type === 'folder'
              ? 'this folder and everything in it, including what is added later'
              : 'this file'
            : 'these items'}
          . No sign-in needed.
        </p>
        {links && entries.length > 0 && (
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
            {single && <p class="muted small">{formatExpiry(expiresAt)}</p>}
          </div>
        )}
        <fieldset class="radio-row">
          <legend>{links ? 'Change expiry' : 'Link expires after'}</legend>
          {EXPIRIES.map((e) => (
            <label key={e.value} class="radio">
              <input
                type="radio"
                name="expiry"
                value={e.value}
                checked={expiry === e.value}
                onChange={() => {
                  setExpiry(e.value);
                  if (links) void share(e.value);
                }}
              />
              <span>{e.label}</span>
            </label>
          ))}
        </fieldset>
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
      </div>
      <div class="dialog-actions">
        {links ? (
          <>
            <button
              type="button"
              class="button danger-ghost push-left"
              onClick={() => {
                props.close();
                void removeLinks(items);
              }}
            >
              Remove link
            </button>
            <button type="button" class="button primary" onClick={props.close}>
              Done
            </button>
          </>
        ) : (
          <>
            <button type="button" class="button" onClick={props.close}>
              Cancel
            </button>
            <button type="button" class="button primary" disabled={busy} onClick={() => share(expiry)}>
              Create
            </button>
          </>
        )}
      </div>
    </>
  );
}

/** Create, copy, re-time or remove the public links of the selected items. */
export function openShareDialog(items: Item[]): void {
  const title = items.length === 1 ? `Share “${items[0]!.name}”` : `Share ${items.length} items`;
  void openDialog<void>((close) => (
    <Dialog title={title} onClose={() => close()} wide>
      <ShareForm items={items} close={() => close()} />
    </Dialog>
  ));
}
