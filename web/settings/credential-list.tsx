import type { ComponentChildren } from 'preact';
import { exactDate, formatDate } from '../app/format.ts';
import type { Loaded } from '../app/load.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { LoadError } from '../ui/page.tsx';
import { useFocusAfterRemoval } from '../ui/focus-after-removal.ts';

/** The button an entry offers (Revoke, Remove…); `name` is its accessible name, else its label and the entry's name. */
interface EntryAction {
  label: string;
  name?: string;
  run: () => void;
}

/**
 * A list of what can sign in or hold on as this account (app passwords, passkeys, sessions, WebDAV locks): each
 * entry its title, a line of facts and one button; the load error, or a line when there is none.
 */
export function CredentialList<T>(p: {
  label: string;
  list: Loaded<unknown>;
  entries: T[];
  keyOf: (e: T) => string;
  /** Said when the list loaded empty. */
  empty?: string;
  title: (e: T) => ComponentChildren;
  facts: (e: T) => ComponentChildren;
  /** The entry's accessible name, where its title alone is not it; its button says it too, so a list of them tells one from another. */
  entryName?: (e: T) => string;
  action: (e: T) => EntryAction | null;
}) {
  const keepFocus = useFocusAfterRemoval(p.entries.map(p.keyOf));
  return (
    <>
      {p.list.error && <LoadError message={p.list.error} retry={p.list.reload} />}
      {p.list.data && p.entries.length === 0 && p.empty && <p class="muted">{p.empty}</p>}
      {p.entries.length > 0 && (
        <ul class="entries" aria-label={p.label} {...keepFocus}>
          {p.entries.map((e) => {
            const action = p.action(e);
            const name = p.entryName?.(e);
            return (
              <li key={p.keyOf(e)} data-key={p.keyOf(e)} class="entry" aria-label={name}>
                <div class="entry-main">
                  <span class="entry-title">{p.title(e)}</span>
                  <span class="muted small">{p.facts(e)}</span>
                </div>
                {action && (
                  <button
                    type="button"
                    class="button small"
                    aria-label={action.name ?? (name ? `${action.label} ${name}` : undefined)}
                    onClick={action.run}
                  >
                    {action.label}
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </>
  );
}

/** “created 3 min ago”, the exact time on hover. */
export function When({ words, at }: { words: string; at: string }) {
  return (
    <span title={exactDate(at)}>
      {words} {formatDate(at).toLowerCase()}
    </span>
  );
}

/**
 * Revokes or removes one entry: asks first when `confirm` is given, says what happened (or the server's
 * refusal), then reloads the list.
 */
export async function removeEntry(o: {
  confirm?: Parameters<typeof confirmDialog>[0];
  call: () => Promise<unknown>;
  done: string;
  reload: () => Promise<unknown>;
}): Promise<boolean> {
  if (o.confirm && !(await confirmDialog(o.confirm))) return false;
  let ok = false;
  try {
    await o.call();
    toast(o.done);
    ok = true;
  } catch (err) {
    toastError(err);
  }
  await o.reload();
  return ok;
}
