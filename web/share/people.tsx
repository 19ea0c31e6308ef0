import { useEffect, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { Member } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import { loadSharedFolders } from '../app/folders.ts';
import { toast, toastError } from '../app/toasts.ts';
import { GroupsWithAccess } from './groups.tsx';
import { AccessRow, RoleField } from './roles.tsx';

/** The share dialog's People section: who this item is shared with on this Coffer, and their roles. */
export function PeopleSection({ item }: { item: Item }) {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Member['role']>('viewer');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api.people.members(item.id).then(setMembers, (err: Error) => setError(err.message));
  }, [item.id]);

  const add = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const member = await api.people.add(item.id, email.trim(), role);
      setMembers((list) => [...(list ?? []), member]);
      setEmail('');
      void loadSharedFolders().catch(() => {});
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const change = async (m: Member, next: Member['role']) => {
    try {
      const updated = await api.people.setRole(item.id, m.accountId, next);
      setMembers((list) => list?.map((x) => (x.accountId === m.accountId ? updated : x)) ?? null);
    } catch (err) {
      toastError(err);
    }
  };

  const remove = async (m: Member) => {
    try {
      await api.people.remove(item.id, m.accountId);
      setMembers((list) => list?.filter((x) => x.accountId !== m.accountId) ?? null);
      void loadSharedFolders().catch(() => {});
      toast(`${m.name || m.email} no longer has “${item.name}”`);
    } catch (err) {
      toastError(err);
    }
  };

  return (
    <section class="share-people" aria-labelledby="share-people-title">
      <h3 id="share-people-title">People</h3>
      <p class="muted small">People with an account on this Coffer. Editors can add, change and delete what is inside; it stays yours.</p>
      <form class="people-add" onSubmit={add}>
        <label class="field">
          <span>Email</span>
          <input
            type="email"
            required
            autoComplete="off"
            value={email}
            placeholder="name@example.com"
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <RoleField label="Role" value={role} onChange={setRole} />
        <button type="submit" class="button" disabled={busy || !email.trim()}>
          Add person
        </button>
      </form>
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      {members && members.length > 0 && (
        <ul class="people-list" aria-label="People with access">
          {members.map((m) => (
            <AccessRow
              key={m.accountId}
              name={m.name || m.email}
              detail={m.name ? m.email : undefined}
              who={m.email}
              role={m.role}
              onRole={(r) => void change(m, r)}
              onRemove={() => void remove(m)}
            />
          ))}
        </ul>
      )}
      {members?.length === 0 && <p class="muted small">Not shared with anyone yet.</p>}
      <GroupsWithAccess item={item} />
    </section>
  );
}
