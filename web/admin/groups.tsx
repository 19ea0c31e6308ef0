import { useEffect, useId, useState } from 'preact/hooks';
import { GROUP_NAME_MAX, type GroupDetail, type GroupMember, type GroupView } from '../../src/contract/groups.ts';
import { EMAIL_MAX } from '../../src/contract/limits.ts';
import { api } from '../api/index.ts';
import { plural } from '../app/format.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog, Dialog, openDialog, promptDialog } from '../ui/dialog.tsx';
import { Field, FormError } from '../ui/form.tsx';
import { LoadError, Section } from '../ui/page.tsx';

/** "3 people · shared with 2 items". */
const summary = (g: GroupView) =>
  `${plural(g.size, 'person', 'people')} · ${g.items === 0 ? 'nothing shared with it' : `shared with ${plural(g.items, 'item')}`}`;

/** A group's members: add by email (completed from the accounts), make or unmake group administrators, remove. */
function MembersForm({ group, close }: { group: GroupView; close: () => void }) {
  const [detail, setDetail] = useState<GroupDetail | null>(null);
  const [emails, setEmails] = useState<string[]>([]);
  const [email, setEmail] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const listId = useId();

  const reload = () => api.groups.one(group.id).then(setDetail, (err: Error) => setError(err.message));
  useEffect(() => {
    void reload();
    api.admin.users({ limit: 100 }).then(
      (page) => setEmails(page.users.filter((u) => u.parentUserId === null && !u.deletionPending).map((u) => u.email)),
      () => setEmails([]),
    );
  }, [group.id]);

  const add = async (e: Event) => {
    e.preventDefault();
    if (!email.trim()) return setError('Type the email of an account on this Coffer.');
    setBusy(true);
    setError(null);
    try {
      const member = await api.groups.addMember(group.id, email.trim(), false);
      toast(`${member.email} added to ${group.name}`);
      setEmail('');
      await reload();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const setAdmin = async (m: GroupMember) => {
    try {
      await api.groups.setAdmin(group.id, m.accountId, !m.admin);
      toast(m.admin ? `${m.email} is no longer a group administrator` : `${m.email} is now a group administrator`);
      await reload();
    } catch (err) {
      toastError(err);
    }
  };
  const remove = async (m: GroupMember) => {
    try {
      await api.groups.removeMember(group.id, m.accountId);
      toast(`${m.email} removed from ${group.name}`);
      await reload();
    } catch (err) {
      toastError(err);
    }
  };

  const known = new Set(detail?.members.map((m) => m.email));
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
          <button type="submit" class="button primary" disabled={busy}>
            Add member
          </button>
        </form>
        <FormError message={error} />
        {detail && detail.members.length === 0 && <p class="muted">No one is in {group.name} yet.</p>}
        {detail && detail.members.length > 0 && (
          <ul class="entries" aria-label={`Members of ${group.name}`}>
            {detail.members.map((m) => (
              <li key={m.accountId} class="entry">
                <div class="entry-main">
                  <span class="entry-title">
                    {m.name || m.email}
                    {m.admin && <span class="pill accent">Group administrator</span>}
                  </span>
                  <span class="muted small">{m.email}</span>
                </div>
                <div class="entry-side">
                  <button
                    type="button"
                    class="button small"
                    aria-label={m.admin ? `Remove as administrator: ${m.email}` : `Make administrator: ${m.email}`}
                    onClick={() => setAdmin(m)}
                  >
                    {m.admin ? 'Remove as administrator' : 'Make administrator'}
                  </button>
                  <button type="button" class="button small danger-ghost" aria-label={`Remove ${m.email}`} onClick={() => remove(m)}>
                    Remove
                  </button>
                </div>
              </li>
            ))}
          </ul>
        )}
        {group.source === 'idp' && (
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

/** Admin → Groups: groups of accounts to share with instead of one person at a time. */
export function Groups() {
  const [groups, setGroups] = useState<GroupView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [createError, setCreateError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = () =>
    api.groups.all().then(
      (all) => {
        setGroups(all);
        setError(null);
      },
      (err: Error) => setError(err.message),
    );
  useEffect(() => void load(), []);

  const create = async (e: Event) => {
    e.preventDefault();
    if (!name.trim()) return setCreateError('Give the group a name.');
    setBusy(true);
    setCreateError(null);
    try {
      const group = await api.groups.create(name.trim(), '');
      toast(`Group ${group.name} created`);
      setName('');
      await load();
      await members(group);
    } catch (err) {
      setCreateError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const members = async (g: GroupView) => {
    await openDialog<void>((close) => (
      <Dialog title={`Members of ${g.name}`} onClose={() => close()} wide>
        <MembersForm group={g} close={() => close()} />
      </Dialog>
    ));
    await load();
  };

  const rename = async (g: GroupView) => {
    const renamed = await promptDialog({
      title: `Rename ${g.name}`,
      label: 'Group name',
      value: g.name,
      confirm: 'Rename',
      maxLength: GROUP_NAME_MAX,
      submit: async (v) => {
        try {
          await api.groups.rename(g.id, v);
          return null;
        } catch (err) {
          return (err as Error).message;
        }
      },
    });
    if (renamed === undefined) return;
    toast(`Group renamed to ${renamed.trim()}`);
    await load();
  };

  const remove = async (g: GroupView) => {
    const sure = await confirmDialog({
      title: `Delete ${g.name}?`,
      message: `${plural(g.size, 'person', 'people')} in it lose what was shared with the group (${plural(g.items, 'item')}) at once. The items stay with their owners, and what is shared with them in person stays shared.`,
      confirm: 'Delete group',
      danger: true,
    });
    if (!sure) return;
    try {
      await api.groups.remove(g.id);
      toast(`Group ${g.name} deleted`);
      await load();
    } catch (err) {
      toastError(err);
    }
  };

  return (
    <Section
      title="Groups"
      intro="Groups of accounts, such as a household or a team. Share a folder with a group instead of one person at a time: whoever joins the group reaches it at once, whoever leaves loses it at once."
    >
      <form noValidate class="form inline-form" onSubmit={create}>
        <Field label="Group name" hint="1 to 64 characters, such as Family or Design.">
          <input maxLength={GROUP_NAME_MAX} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <button type="submit" class="button primary" disabled={busy}>
          Create group
        </button>
      </form>
      <FormError message={createError} />
      {error && <LoadError message={error} retry={load} />}
      {groups && groups.length === 0 && <p class="muted">No groups yet.</p>}
      {groups && groups.length > 0 && (
        <ul class="entries" aria-label="Groups">
          {groups.map((g) => (
            <li key={g.id} class="entry">
              <div class="entry-main">
                <span class="entry-title">
                  {g.name}
                  {g.source === 'idp' && <span class="pill">From single sign-on</span>}
                </span>
                <span class="muted small">
                  {summary(g)}
                  {g.description && ` · ${g.description}`}
                </span>
              </div>
              <div class="entry-side">
                <button type="button" class="button small" aria-label={`Members of ${g.name}`} onClick={() => members(g)}>
                  Members
                </button>
                <button type="button" class="button small" aria-label={`Rename ${g.name}`} onClick={() => rename(g)}>
                  Rename
                </button>
                <button type="button" class="button small danger-ghost" aria-label={`Delete ${g.name}`} onClick={() => remove(g)}>
                  Delete…
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <p class="muted small">
        From a terminal: <code>coffer groups list</code>, <code>coffer groups create &lt;name&gt;</code>,{' '}
        <code>coffer groups add &lt;group&gt; &lt;email&gt;</code>, <code>coffer groups remove &lt;group&gt; &lt;email&gt;</code>,{' '}
        <code>coffer groups delete &lt;group&gt;</code>.
      </p>
    </Section>
  );
}
