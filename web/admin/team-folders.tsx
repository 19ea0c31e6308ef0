import { useState } from 'preact/hooks';
import type { GroupView, TeamFolderView } from '../../src/contract/groups.ts';
import { MAX_NAME_LENGTH } from '../../src/contract/names.ts';
import type { MemberRole } from '../../src/contract/sharing.ts';
import { parseSize } from '../../src/contract/size.ts';
import { api } from '../api/index.ts';
import { useLoad } from '../app/load.ts';
import { formatSize, plural, sizeInput } from '../app/format.ts';
import { toast, toastError } from '../app/toasts.ts';
import { ROLES } from '../sharing/roles.tsx';
import { useBusyKeys } from '../ui/busy-keys.ts';
import { confirmDialog, Dialog, FormButtons, openDialog, promptDialog } from '../ui/dialog.tsx';
import { ActionButton, Field, FormError, SubmitButton } from '../ui/form.tsx';
import { LoadError, Section } from '../ui/page.tsx';

type Grant = { groupId: string; role: MemberRole };
const roleLabel = (role: MemberRole) => ROLES.find((r) => r.value === role)!.label.toLowerCase();

/** "1.2 MiB of 50 GiB", "300 KiB, no limit". */
const usage = (f: TeamFolderView) =>
  f.quota === null
    ? `${formatSize(f.size)}, no limit`
    : `${formatSize(f.size)} of ${formatSize(f.quota)}${f.ownQuota ? '' : ' (instance default)'}`;

/** A quota as typed: empty is the instance default; else a size such as 50G. */
function readQuota(text: string): { quota: number | null } | { error: string } {
  if (!text.trim()) return { quota: null };
  const bytes = parseSize(text);
  if (bytes === null || bytes <= 0) return { error: `“${text}” is not a size. Type one such as 50G, 500M or 1.5T, or leave it empty.` };
  return { quota: bytes };
}

/** The groups that reach a team folder and their roles: add, change, remove, then save them together. */
function GroupsForm({ folder, groups, close }: { folder: TeamFolderView; groups: GroupView[]; close: (changed?: boolean) => void }) {
  const [grants, setGrants] = useState<Grant[]>(folder.groups.map((g) => ({ groupId: g.groupId, role: g.role })));
  const [adding, setAdding] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const nameOf = (id: string) => groups.find((g) => g.id === id)?.name ?? id;
  const left = groups.filter((g) => !grants.some((x) => x.groupId === g.id));
  return (
    <form
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          await api.teamFolders.setGroups(folder.id, grants);
          close(true);
        } catch (err) {
          setError((err as Error).message);
          setBusy(false);
        }
      }}
    >
      <div class="dialog-body form">
        {grants.length === 0 && <p class="muted">No group reaches {folder.name}: only you see it here.</p>}
        {grants.length > 0 && (
          <ul class="entries" aria-label={`Groups of ${folder.name}`}>
            {grants.map((g) => (
              <li key={g.groupId} class="entry">
                <span class="entry-title">{nameOf(g.groupId)}</span>
                <div class="entry-side">
                  <select
                    aria-label={`Role of ${nameOf(g.groupId)}`}
                    value={g.role}
                    onChange={(e) => {
                      const role = e.currentTarget.value as MemberRole;
                      setGrants((list) => list.map((x) => (x.groupId === g.groupId ? { ...x, role } : x)));
                    }}
                  >
                    {ROLES.map((r) => (
                      <option key={r.value} value={r.value}>
                        {r.label}
                      </option>
                    ))}
                  </select>
                  <button
                    type="button"
                    class="button small danger-ghost"
                    aria-label={`Remove ${nameOf(g.groupId)}`}
                    onClick={() => setGrants((list) => list.filter((x) => x.groupId !== g.groupId))}
                  >
                    Remove
                  </button>
                </div>
              </li>
            ))}
          </ul>
        )}
        {left.length > 0 && (
          <div class="form inline-form">
            <Field label="Add a group">
              <select value={adding} onChange={(e) => setAdding(e.currentTarget.value)}>
                <option value="">Choose a group…</option>
                {left.map((g) => (
                  <option key={g.id} value={g.id}>
                    {g.name} · {plural(g.size, 'person', 'people')}
                  </option>
                ))}
              </select>
            </Field>
            <button
              type="button"
              class="button"
              disabled={!adding}
              onClick={() => {
                setGrants((list) => [...list, { groupId: adding, role: 'viewer' }]);
                setAdding('');
              }}
            >
              Add group
            </button>
          </div>
        )}
        <FormError message={error} />
      </div>
      <FormButtons submit="Save groups" busy={busy} cancel={() => close()} />
    </form>
  );
}

/** Admin → Team folders: folders that belong to a team, with their own quota, reached through groups. */
export function TeamFolders() {
  const removing = useBusyKeys();
  const loaded = useLoad(async () => {
    const [folders, groups] = await Promise.all([api.teamFolders.all(), api.groups.all()]);
    return { folders, groups };
  });
  const { error, reload: load } = loaded;
  const folders = loaded.data?.folders ?? null;
  const groups: GroupView[] = loaded.data?.groups ?? [];
  const [name, setName] = useState('');
  const [quota, setQuota] = useState('');
  const [groupId, setGroupId] = useState('');
  const [role, setRole] = useState<MemberRole>('editor');
  const [createError, setCreateError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const create = async (e: Event) => {
    e.preventDefault();
    if (!name.trim()) return setCreateError('Give the team folder a name.');
    const q = readQuota(quota);
    if ('error' in q) return setCreateError(q.error);
    setBusy(true);
    setCreateError(null);
    try {
      const made = await api.teamFolders.create({ name: name.trim(), quota: q.quota, groups: groupId ? [{ groupId, role }] : [] });
      toast(`Team folder ${made.name} created`);
      setName('');
      setQuota('');
      setGroupId('');
      await load();
    } catch (err) {
      setCreateError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const editGroups = async (f: TeamFolderView) => {
    const changed = await openDialog<boolean>((close) => (
      <Dialog title={`Groups of ${f.name}`} onClose={() => close()} wide>
        <GroupsForm folder={f} groups={groups} close={close} />
      </Dialog>
    ));
    if (!changed) return;
    toast(`Groups of ${f.name} saved`);
    await load();
  };

  const setLimit = async (f: TeamFolderView) => {
    const typed = await promptDialog({
      title: `Quota of ${f.name}`,
      label: `A size such as 50G, or empty for the instance default. It holds ${formatSize(f.size)}; nothing stored is removed.`,
      value: f.ownQuota && f.quota !== null ? sizeInput(f.quota) : '',
      confirm: 'Save',
      maxLength: 20,
      submit: async (v) => {
        const q = readQuota(v);
        if ('error' in q) return q.error;
        try {
          await api.teamFolders.update(f.id, { quota: q.quota });
          return null;
        } catch (err) {
          return (err as Error).message;
        }
      },
    });
    if (typed === undefined) return;
    toast(`Quota of ${f.name} saved`);
    await load();
  };

  const rename = async (f: TeamFolderView) => {
    const renamed = await promptDialog({
      title: `Rename ${f.name}`,
      label: 'Team folder name',
      value: f.name,
      confirm: 'Rename',
      maxLength: MAX_NAME_LENGTH,
      submit: async (v) => {
        try {
          await api.teamFolders.update(f.id, { name: v });
          return null;
        } catch (err) {
          return (err as Error).message;
        }
      },
    });
    if (renamed === undefined) return;
    toast(`Team folder renamed to ${renamed.trim()}`);
    await load();
  };

  // Pressed again while the server answers (the list reloads after), it sends nothing.
  const remove = (f: TeamFolderView) =>
    removing.whileBusy(f.id, async () => {
      const people = f.groups.reduce((n, g) => n + g.size, 0);
      const sure = await confirmDialog({
        title: `Delete ${f.name}?`,
        message: `Everything in it (${formatSize(f.size)}, its trash and file versions included) is deleted, and ${plural(f.groups.length, 'group')} (${plural(people, 'person', 'people')}) lose it at once. This cannot be undone.`,
        confirm: 'Delete team folder',
        danger: true,
      });
      if (!sure) return;
      try {
        await api.teamFolders.remove(f.id);
        toast(`Deleting the team folder ${f.name}`);
        await load();
      } catch (err) {
        toastError(err);
      }
    });

  return (
    <Section
      title="Team folders"
      intro="Folders that belong to a team, not to a person: their bytes count against their own quota, and deleting someone's account never deletes them. Every member of their groups finds them at the top of My files."
    >
      <form noValidate class="form" onSubmit={create}>
        <div class="form inline-form">
          <Field label="Team folder name">
            <input maxLength={MAX_NAME_LENGTH} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field label="Quota" hint="Such as 50G; empty: the instance default.">
            <input value={quota} placeholder="50G" onInput={(e) => setQuota(e.currentTarget.value)} />
          </Field>
        </div>
        <div class="form inline-form">
          <Field label="Group">
            <select value={groupId} onChange={(e) => setGroupId(e.currentTarget.value)}>
              <option value="">None yet</option>
              {groups.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.name} · {plural(g.size, 'person', 'people')}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Group role">
            <select value={role} onChange={(e) => setRole(e.currentTarget.value as MemberRole)}>
              {ROLES.map((r) => (
                <option key={r.value} value={r.value}>
                  {r.label}
                </option>
              ))}
            </select>
          </Field>
          <SubmitButton busy={busy}>Create team folder</SubmitButton>
        </div>
      </form>
      <FormError message={createError} />
      {error && <LoadError message={error} retry={load} />}
      {folders && folders.length === 0 && <p class="muted">No team folders yet.</p>}
      {folders && folders.length > 0 && (
        <ul class="entries" aria-label="Team folders">
          {folders.map((f) => (
            <li key={f.id} class="entry">
              <div class="entry-main">
                <span class="entry-title">{f.name}</span>
                <span class="muted small">
                  {usage(f)} · {f.groups.length === 0 ? 'no group yet' : f.groups.map((g) => `${g.name} (${roleLabel(g.role)})`).join(', ')}
                </span>
              </div>
              <div class="entry-side">
                {f.quota !== null && (
                  <progress class="meter" value={Math.min(1, f.size / f.quota)} max={1} aria-label={`Space used in ${f.name}`} />
                )}
                <button type="button" class="button small" aria-label={`Groups of ${f.name}`} onClick={() => editGroups(f)}>
                  Groups
                </button>
                <button type="button" class="button small" aria-label={`Quota of ${f.name}`} onClick={() => setLimit(f)}>
                  Quota
                </button>
                <button type="button" class="button small" aria-label={`Rename ${f.name}`} onClick={() => rename(f)}>
                  Rename
                </button>
                <ActionButton
                  busy={removing.busy.has(f.id)}
                  class="button small danger-ghost"
                  aria-label={`Delete ${f.name}`}
                  onClick={() => remove(f)}
                >
                  Delete…
                </ActionButton>
              </div>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}
