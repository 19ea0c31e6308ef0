import { useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { Member } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';
import { loadSharedFolders } from '../app/folders.ts';
import { toast, toastError } from '../app/toasts.ts';
import { ADD_PERSON, AddAccessForm, PeopleWithAccess, useAccessList } from './access.tsx';
import { GroupsWithAccess } from './groups.tsx';
import type { SaveStatus } from './save-status.ts';
import { personChoices, pickedPerson, usePersonSuggestions } from './person-suggestions.ts';

/** The share dialog's People part: who this item is shared with on this Coffer; each change saves at once. */
export function PeopleSection({ item, say }: { item: Item; say: (status: SaveStatus) => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Member['role']>('viewer');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const found = usePersonSuggestions(email);
  const members = useAccessList<Member>(
    (m) => m.accountId,
    () => api.people.members(item.id),
    (err) => setError(err.message),
    item.id,
  );

  const add = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const picked = pickedPerson(found, email);
      if (!picked && !email.includes('@'))
        throw new Error(`No one named “${email.trim()}” on this Coffer. Pick a suggestion or type an email.`);
      const member = await api.people.add(item.id, picked ? { accountId: picked.accountId } : { email: email.trim() }, role);
      members.put(member);
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
      members.replace(await api.people.setRole(item.id, m.accountId, next));
      say({ kind: 'saved', text: `${m.name || m.email} ${next === 'editor' ? 'can edit' : 'can view'}` });
    } catch (err) {
      toastError(err);
    }
  };

  const remove = async (m: Member) => {
    try {
      await api.people.remove(item.id, m.accountId);
      members.drop(m);
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
      <AddAccessForm
        {...ADD_PERSON}
        value={email}
        onValue={setEmail}
        placeholder="Ada, or name@example.com"
        choices={personChoices(found.filter((p) => !members.list?.some((m) => m.accountId === p.accountId)))}
        role={role}
        onRole={setRole}
        busy={busy}
        onSubmit={add}
        error={error}
      />
      <PeopleWithAccess members={members.list} onRole={(m, r) => void change(m, r)} onRemove={(m) => void remove(m)} />
      <GroupsWithAccess item={item} />
    </section>
  );
}
