import { useEffect, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { GroupChoice } from '../../src/contract/groups.ts';
import type { MemberRole, SharedGroup } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import { plural } from '../app/format.ts';
import { toast, toastError } from '../app/toasts.ts';
import { AccessList, AddAccessForm, useAccessList } from './access.tsx';

const people = (n: number) => plural(n, 'person', 'people');

/** The People section's groups: share with a whole group (completed by name), its role, stop sharing. */
export function GroupsWithAccess({ item }: { item: Item }) {
  const [choices, setChoices] = useState<GroupChoice[]>([]);
  const [name, setName] = useState('');
  const [role, setRole] = useState<MemberRole>('viewer');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const groups = useAccessList<SharedGroup>(
    (g) => g.groupId,
    () => api.groups.ofItem(item.id),
    (err) => setError(err.message),
    item.id,
  );
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
      groups.put(await api.groups.shareWith(item.id, group.id, role));
      setName('');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const change = async (g: SharedGroup, next: MemberRole) => {
    try {
      groups.replace(await api.groups.setRole(item.id, g.groupId, next));
    } catch (err) {
      toastError(err);
    }
  };
  const remove = async (g: SharedGroup) => {
    try {
      await api.groups.unshare(item.id, g.groupId);
      groups.drop(g);
      toast(`${g.name} no longer has “${item.name}”`);
    } catch (err) {
      toastError(err);
    }
  };

  const shown = new Set(groups.list?.map((g) => g.groupId));
  return (
    <>
      <AddAccessForm
        label="Group"
        value={name}
        onValue={setName}
        maxLength={64}
        placeholder="Family, Design…"
        choices={choices.filter((g) => !shown.has(g.id)).map((g) => ({ key: g.id, value: g.name, label: `${g.name} · ${people(g.size)}` }))}
        roleLabel="Group role"
        role={role}
        onRole={setRole}
        busy={busy}
        button="Add group"
        onSubmit={add}
        error={error}
      />
      <AccessList
        label="Groups with access"
        entries={
          groups.list &&
          groups.list.map((g) => ({
            key: g.groupId,
            name: g.name,
            detail: `Group · ${people(g.size)}`,
            who: g.name,
            role: g.role,
            onRole: (r: MemberRole) => void change(g, r),
            onRemove: () => void remove(g),
          }))
        }
      />
    </>
  );
}
