import { useEffect, useId, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { GroupChoice } from '../../src/contract/groups.ts';
import type { MemberRole, SharedGroup } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import { plural } from '../app/format.ts';
import { toast, toastError } from '../app/toasts.ts';
import { AccessRow, RoleField } from './roles.tsx';

const people = (n: number) => plural(n, 'person', 'people');

/** The People section's groups: share with a whole group (completed by name), its role, stop sharing. */
export function GroupsWithAccess({ item }: { item: Item }) {
  const [groups, setGroups] = useState<SharedGroup[] | null>(null);
  const [choices, setChoices] = useState<GroupChoice[]>([]);
  const [name, setName] = useState('');
  const [role, setRole] = useState<MemberRole>('viewer');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const listId = useId();

  useEffect(() => {
    api.groups.ofItem(item.id).then(setGroups, (err: Error) => setError(err.message));
  }, [item.id]);
  useEffect(() => {
    let current = true;
    api.groups.choices(name.trim()).then(
      (found) => current && setChoices(found),
      () => current && setChoices([]),
    );
    return () => {
      current = false;
    };
  }, [name]);

  const add = async (e: Event) => {
    e.preventDefault();
    const wanted = name.trim().toLowerCase();
    const group = choices.find((g) => g.name.toLowerCase() === wanted);
    if (!group) return setError(`No group named “${name.trim()}”. Pick one of the suggestions.`);
    setBusy(true);
    setError(null);
    try {
      const shared = await api.groups.shareWith(item.id, group.id, role);
      setGroups((list) => [...(list ?? []), shared]);
      setName('');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const change = async (g: SharedGroup, next: MemberRole) => {
    try {
      const updated = await api.groups.setRole(item.id, g.groupId, next);
      setGroups((list) => list?.map((x) => (x.groupId === g.groupId ? updated : x)) ?? null);
    } catch (err) {
      toastError(err);
    }
  };
  const remove = async (g: SharedGroup) => {
    try {
      await api.groups.unshare(item.id, g.groupId);
      setGroups((list) => list?.filter((x) => x.groupId !== g.groupId) ?? null);
      toast(`${g.name} no longer has “${item.name}”`);
    } catch (err) {
      toastError(err);
    }
  };

  const shown = new Set(groups?.map((g) => g.groupId));
  return (
    <>
      <form class="people-add" onSubmit={add}>
        <label class="field">
          <span>Group</span>
          <input
            required
            autoComplete="off"
            list={listId}
            maxLength={64}
            value={name}
            placeholder="Family, Design…"
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <datalist id={listId}>
          {choices
            .filter((g) => !shown.has(g.id))
            .map((g) => (
              <option key={g.id} value={g.name} label={`${g.name} · ${people(g.size)}`} />
            ))}
        </datalist>
        <RoleField label="Group role" value={role} onChange={setRole} />
        <button type="submit" class="button" disabled={busy || !name.trim()}>
          Add group
        </button>
      </form>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      {groups && groups.length > 0 && (
        <ul class="people-list" aria-label="Groups with access">
          {groups.map((g) => (
            <AccessRow
              key={g.groupId}
              name={g.name}
              detail={`Group · ${people(g.size)}`}
              who={g.name}
              role={g.role}
              onRole={(r) => void change(g, r)}
              onRemove={() => void remove(g)}
            />
          ))}
        </ul>
      )}
    </>
  );
}
