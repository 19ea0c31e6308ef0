import { useEffect, useId, useState } from 'preact/hooks';
import type { Album, AlbumMember } from '../../src/contract/albums.ts';
import { api } from '../api/index.ts';
import { toastError } from '../app/toasts.ts';
import { pickedPerson, usePersonSuggestions } from '../sharing/person-suggestions.ts';
import { AccessRow, RoleField } from '../sharing/roles.tsx';
import type { SaveStatus } from '../sharing/link-tab.tsx';
import { type Part, PartTabs, SaveLine } from '../sharing/share-dialog.tsx';
import { Dialog, openDialog } from '../ui/dialog.tsx';
import { AlbumLinkPart } from './album-link.tsx';

/** Who an album is shared with on this Coffer: viewers look, editors also add and remove photos. Each change saves at once. */
function AlbumPeople(props: { album: Album; say: (status: SaveStatus) => void }) {
  const { album } = props;
  const [members, setMembers] = useState<AlbumMember[] | null>(null);
  const [who, setWho] = useState('');
  const [role, setRole] = useState<AlbumMember['role']>('viewer');
  const { say } = props;
  const found = usePersonSuggestions(who);
  const listId = useId();
  useEffect(() => {
    api.albums.members(album.id).then(setMembers, (err: Error) => say({ kind: 'error', text: err.message }));
  }, [album.id]);

  const put = async (body: { email: string } | { accountId: string }, as: AlbumMember['role']) => {
    try {
      const member = await api.albums.addMember(album.id, { ...body, role: as });
      setMembers((list) => [...(list ?? []).filter((m) => m.accountId !== member.accountId), member]);
      say({ kind: 'saved', text: `${member.name || member.email} ${as === 'editor' ? 'can edit' : 'can view'}` });
      return true;
    } catch (err) {
      say({ kind: 'error', text: (err as Error).message });
      return false;
    }
  };
  const add = async (e: Event) => {
    e.preventDefault();
    const picked = pickedPerson(found, who);
    if (!picked && !who.includes('@'))
      return say({ kind: 'error', text: `No one named “${who.trim()}” on this Coffer. Pick a suggestion or type an email.` });
    if (await put(picked ? { accountId: picked.accountId } : { email: who.trim() }, role)) setWho('');
  };
  const remove = async (m: AlbumMember) => {
    try {
      await api.albums.removeMember(album.id, m.accountId);
      setMembers((list) => list?.filter((x) => x.accountId !== m.accountId) ?? null);
      say({ kind: 'saved', text: `${m.name || m.email} removed` });
    } catch (err) {
      toastError(err);
    }
  };

  return (
    <>
      <p class="muted small">
        People with an account on this Coffer. Viewers see the album; editors also add their photos and take photos out.
      </p>
      <form class="people-add" onSubmit={add}>
        <label class="field">
          <span>Name or email</span>
          <input required autoComplete="off" list={listId} maxLength={254} value={who} onInput={(e) => setWho(e.currentTarget.value)} />
        </label>
        <datalist id={listId}>
          {found.map((p) => (
            <option key={p.accountId} value={p.email ?? p.name} label={p.email ? `${p.name} · ${p.email}` : p.name} />
          ))}
        </datalist>
        <RoleField label="Role" value={role} onChange={setRole} />
        <button type="submit" class="button" disabled={!who.trim()}>
          Add person
        </button>
      </form>
      {members && members.length > 0 && (
        <ul class="people-list" aria-label="People with access">
          {members.map((m) => (
            <AccessRow
              key={m.accountId}
              name={m.name || m.email}
              detail={m.name ? m.email : undefined}
              who={m.email}
              role={m.role}
              onRole={(r) => void put({ accountId: m.accountId }, r)}
              onRemove={() => void remove(m)}
            />
          ))}
        </ul>
      )}
      {members?.length === 0 && <p class="muted small">Not shared with anyone yet.</p>}
    </>
  );
}

/** An album's Share, in the share dialog's two parts: People on this Coffer, and a public Link to its gallery. */
function AlbumShare(props: { album: Album; close: () => void }) {
  const [part, setPart] = useState<Part>('people');
  const [status, setStatus] = useState<SaveStatus | null>(null);
  return (
    <Dialog title={`Share the album “${props.album.name}”`} onClose={props.close} wide class="share-dialog">
      <div class="dialog-body share">
        <PartTabs part={part} onPart={setPart} />
        {part === 'people' ? (
          <div id="share-panel-people" role="tabpanel" aria-labelledby="share-tab-people">
            <AlbumPeople album={props.album} say={setStatus} />
          </div>
        ) : (
          <div id="share-panel-link" role="tabpanel" aria-labelledby="share-tab-link">
            <AlbumLinkPart album={props.album} say={setStatus} />
          </div>
        )}
        <SaveLine status={status} />
      </div>
      <div class="dialog-actions">
        <button type="button" class="button primary" onClick={props.close}>
          Done
        </button>
      </div>
    </Dialog>
  );
}

export function openAlbumShare(album: Album): void {
  void openDialog<void>((close) => <AlbumShare album={album} close={() => close()} />);
}
