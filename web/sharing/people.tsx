import { useEffect, useId, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { Member } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import { loadSharedFolders } from '../app/folders.ts';
import { toast, toastError } from '../app/toasts.ts';
import { GroupsWithAccess } from './groups.tsx';
import type { SaveStatus } from './link-tab.tsx';
import { pickedPerson, usePersonSuggestions } from './person-suggestions.ts';
import { AccessRow, RoleField } from './roles.tsx';

/** The share dialog's People part: who this item is shared with on this Coffer; each change saves at once. */
export function PeopleSection({ item, say }: { item: Item; say: (status: SaveStatus) => void }) {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Member['role']>('viewer');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const found = usePersonSuggestions(email);
  const listId = useId();

  useEffect(() => {
    api.people.members(item.id).then(setMembers, (err: Error) => setError(err.message));
  }, [item.id]);

  const add = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const picked = pickedPerson(found, email);
      if (!picked && !email.includes('@'))
        throw new Error(`No one named “${email.trim()}” on this Coffer. Pick a suggestion or type an email.`);
      const member = await api.people.add(item.id, picked ? { accountId: picked.accountId } : { email: email.trim() }, role);
      setMembers((list) => [...(list ?? []), member]);
      setEmail('');
      say({ kind: 'saved', text: `Shared with ${member.name || member.email}` });
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
      say({ kind: 'saved', text: `${m.name || m.email} ${next === 'editor' ? 'can edit' : 'can view'}` });
    } catch (err) {
      toastError(err);
    }
  };

  const remove = async (m: Member) => {
    try {
      await api.people.remove(item.id, m.accountId);
      setMembers((list) => list?.filter((x) => x.accountId !== m.accountId) ?? null);
      void loadSharedFolders().catch(() => {});
      say({ kind: 'saved', text: `${m.name || m.email} removed` });
      toast(`${m.name || m.email} no longer has “${item.name}”`);
    } catch (err) {
      toastError(err);
    }
  };

  return (
    <section class="share-people">
      <p class="muted small">People with an account on this Coffer. Editors can add, change and delete what is inside; it stays yours.</p>
      <form class="people-add" onSubmit={add}>
        <label class="field">
          <span>Name or email</span>
          <input
            required
            autoComplete="off"
            list={listId}
            maxLength={254}
            value={email}
            placeholder="Ada, or name@example.com"
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <datalist id={listId}>
          {found
            .filter((p) => !members?.some((m) => m.accountId === p.accountId))
            .map((p) => (
              <option key={p.accountId} value={p.email ?? p.name} label={p.email ? `${p.name} · ${p.email}` : p.name} />
            ))}
        </datalist>
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
