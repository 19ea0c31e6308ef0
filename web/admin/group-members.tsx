import { useEffect, useId, useState } from 'preact/hooks';
import type { GroupDetail, GroupMember, GroupView } from '../../src/contract/groups.ts';
import { EMAIL_MAX } from '../../src/contract/limits.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { useFocusAfterRemoval } from '../ui/focus-after-removal.ts';
import { Field, FormError, SubmitButton } from '../ui/form.tsx';

/** Where a members form reads and changes a group: the admin's routes, or a group administrator's. */
export interface MembersClient {
  one: (id: string) => Promise<GroupDetail>;
  add: (id: string, email: string) => Promise<GroupMember>;
  remove: (id: string, accountId: string) => Promise<unknown>;
  /** The admin's only: make or unmake group administrators (who only the admin removes). */
  setAdmin?: (id: string, accountId: string, admin: boolean) => Promise<unknown>;
  /** Emails to complete `typed` from (the admin's accounts matching it; none for a group administrator). */
  emails: (typed: string) => Promise<string[]>;
}

/** A group's members: add by email (completed from the accounts), make or unmake group administrators, remove. */
export function MembersForm({ group, client, close }: { group: Pick<GroupView, 'id' | 'name'>; client: MembersClient; close: () => void }) {
  const [detail, setDetail] = useState<GroupDetail | null>(null);
  const [emails, setEmails] = useState<string[]>([]);
  const [email, setEmail] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const listId = useId();

  const reload = () => client.one(group.id).then(setDetail, (err: Error) => setError(err.message));
  useEffect(() => void reload(), [group.id]);
  // Asked again after a pause in typing: the completions are the accounts matching what is typed, not the first page of all.
  useEffect(() => {
    let live = true;
    const timer = setTimeout(
      () =>
        client.emails(email.trim()).then(
          (found) => live && setEmails(found),
          () => live && setEmails([]),
        ),
      200,
    );
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [group.id, email]);

  const add = async (e: Event) => {
    e.preventDefault();
    if (!email.trim()) return setError('Type the email of an account on this Coffer.');
    setBusy(true);
    setError(null);
    try {
      const member = await client.add(group.id, email.trim());
      toast(`${member.email} added to ${group.name}`);
      setEmail('');
      await reload();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const setAdmin = async (m: GroupMember, setTo: NonNullable<MembersClient['setAdmin']>) => {
    try {
      await setTo(group.id, m.accountId, !m.admin);
      toast(m.admin ? `${m.email} is no longer a group administrator` : `${m.email} is now a group administrator`);
      await reload();
    } catch (err) {
      toastError(err);
    }
  };
  const remove = async (m: GroupMember) => {
    const removed = await confirmDialog({
      title: `Remove ${m.email} from ${group.name}?`,
      message: `${m.email} loses what is shared with ${group.name} at once. Adding them again gives it back.`,
      confirm: 'Remove member',
      danger: true,
    });
    if (!removed) return;
    try {
      await client.remove(group.id, m.accountId);
      toast(`${m.email} removed from ${group.name}`);
      await reload();
    } catch (err) {
      toastError(err);
    }
  };

  const known = new Set(detail?.members.map((m) => m.email));
  const keepFocus = useFocusAfterRemoval(detail?.members.map((m) => m.accountId) ?? []);
  return (
    <>
      <div class="dialog-body form">
        <form noValidate class="form inline-form" onSubmit={add}>
          <Field label="Email" hint="An account on this Coffer. It reaches what is shared with the group at once.">
            <input
              type="email"
              maxLength={EMAIL_MAX}
              list={listId}
              autoComplete="off"
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
              autofocus
            />
          </Field>
          <datalist id={listId}>
            {emails
              .filter((a) => !known.has(a))
              .map((a) => (
                <option key={a} value={a} />
              ))}
          </datalist>
          <SubmitButton busy={busy}>Add member</SubmitButton>
        </form>
        <FormError message={error} />
        {detail && detail.members.length === 0 && <p class="muted">No one is in {group.name} yet.</p>}
        {detail && detail.members.length > 0 && (
          <ul class="entries" aria-label={`Members of ${group.name}`} {...keepFocus}>
            {detail.members.map((m) => (
              <li key={m.accountId} data-key={m.accountId} class="entry">
                <div class="entry-main">
                  <span class="entry-title">
                    {m.name || m.email}
                    {m.admin && <span class="pill accent">Group administrator</span>}
                  </span>
                  <span class="muted small">{m.email}</span>
                </div>
                <div class="entry-side">
                  {client.setAdmin && (
                    <button
                      type="button"
                      class="button small"
                      aria-label={m.admin ? `Remove as administrator: ${m.email}` : `Make administrator: ${m.email}`}
                      onClick={() => setAdmin(m, client.setAdmin!)}
                    >
                      {m.admin ? 'Remove as administrator' : 'Make administrator'}
                    </button>
                  )}
                  {(client.setAdmin || !m.admin) && (
                    <button type="button" class="button small danger-ghost" aria-label={`Remove ${m.email}`} onClick={() => remove(m)}>
                      Remove
                    </button>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
        {detail?.source === 'idp' && (
          <p class="muted small">This group comes from single sign-on: each sign-in sets its members from the identity provider again.</p>
        )}
      </div>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={close}>
          Done
        </button>
      </div>
    </>
  );
}
