import { useEffect, useState } from 'preact/hooks';
import { GROUP_NAME_MAX, type GroupView } from '../../src/contract/groups.ts';
import { api } from '../api/index.ts';
import { parseSize } from '../../src/contract/size.ts';
import { formatSize, plural, sizeInput } from '../app/format.ts';
import { toast, toastError } from '../app/toasts.ts';
import { useBusyKeys } from '../ui/busy-keys.ts';
import { confirmDialog, Dialog, openDialog, promptDialog } from '../ui/dialog.tsx';
import { ActionButton, Field, FormError, SubmitButton } from '../ui/form.tsx';
import { LoadError, Section } from '../ui/page.tsx';
import { type MembersClient, MembersForm } from './group-members.tsx';

/** "3 people · shared with 2 items". */
const summary = (g: GroupView) =>
  `${plural(g.size, 'person', 'people')} · ${g.items === 0 ? 'nothing shared with it' : `shared with ${plural(g.items, 'item')}`}`;

const ADMIN_CLIENT: MembersClient = {
  one: api.groups.one,
  add: (id, email) => api.groups.addMember(id, email, false),
  remove: api.groups.removeMember,
  setAdmin: api.groups.setAdmin,
  emails: (typed) =>
    api.admin
      .users({ limit: 100, ...(typed ? { q: typed } : {}) })
      .then((page) => page.users.filter((u) => u.parentUserId === null && !u.deletionPending).map((u) => u.email)),
};

/** Admin → Groups: groups of accounts to share with instead of one person at a time. */
export function Groups() {
  const removing = useBusyKeys();
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
        <MembersForm group={g} client={ADMIN_CLIENT} close={() => close()} />
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

  const allowance = async (g: GroupView) => {
    const typed = await promptDialog({
      title: `Team folder allowance of ${g.name}`,
      label: 'Quota its administrators may give team folders they make for it: a size such as 100G, or empty for none',
      value: g.teamFolderBytes === null ? '' : sizeInput(g.teamFolderBytes),
      confirm: 'Save',
      maxLength: 20,
      submit: async (v) => {
        const bytes = v.trim() ? parseSize(v) : null;
        if (v.trim() && (bytes === null || bytes <= 0)) return `“${v}” is not a size. Type one such as 100G, or leave it empty.`;
        try {
          await api.groups.setAllowance(g.id, bytes);
          return null;
        } catch (err) {
          return (err as Error).message;
        }
      },
    });
    if (typed === undefined) return;
    toast(`Team folder allowance of ${g.name} saved`);
    await load();
  };

  // Pressed again while the server answers (the list reloads after), it sends nothing.
  const remove = (g: GroupView) =>
    removing.whileBusy(g.id, async () => {
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
    });

  return (
    <Section
      title="Groups"
      intro="Groups of accounts, such as a household or a team. Share a folder with a group instead of one person at a time: whoever joins the group reaches it at once, whoever leaves loses it at once."
    >
      <form noValidate class="form inline-form" onSubmit={create}>
        <Field label="Group name" hint="1 to 64 characters, such as Family or Design.">
          <input maxLength={GROUP_NAME_MAX} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <SubmitButton busy={busy}>Create group</SubmitButton>
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
                  {g.teamFolderBytes !== null && ` · its administrators may make team folders of ${formatSize(g.teamFolderBytes)} in all`}
                  {g.description && ` · ${g.description}`}
                </span>
              </div>
              <div class="entry-side">
                <button type="button" class="button small" aria-label={`Members of ${g.name}`} onClick={() => members(g)}>
                  Members
                </button>
                <button type="button" class="button small" aria-label={`Team folder allowance of ${g.name}`} onClick={() => allowance(g)}>
                  Allowance
                </button>
                <button type="button" class="button small" aria-label={`Rename ${g.name}`} onClick={() => rename(g)}>
                  Rename
                </button>
                <ActionButton
                  busy={removing.busy.has(g.id)}
                  class="button small danger-ghost"
                  aria-label={`Delete ${g.name}`}
                  onClick={() => remove(g)}
                >
                  Delete…
                </ActionButton>
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
