import { useState } from 'preact/hooks';
import type { Album, AlbumMember } from '../../src/contract/albums.ts';
import { api } from '../api/index.ts';
import { toastError } from '../app/toasts.ts';
import { ADD_PERSON, AddAccessForm, PeopleWithAccess, useAccessList } from '../sharing/access.tsx';
import { personChoices, pickedPerson, usePersonSuggestions } from '../sharing/person-suggestions.ts';
import type { SaveStatus } from '../sharing/save-status.ts';
import { type Part, PartTabs, ShareFrame } from '../sharing/share-dialog.tsx';
import { openDialog } from '../ui/dialog.tsx';
import { AlbumLinkPart } from './album-link.tsx';

/** Who an album is shared with on this Coffer: viewers look, editors also add and remove photos. Each change saves at once. */
function AlbumPeople(props: { album: Album; say: (status: SaveStatus) => void }) {
  const { album, say } = props;
  const [who, setWho] = useState('');
  const [role, setRole] = useState<AlbumMember['role']>('viewer');
  const found = usePersonSuggestions(who);
  const members = useAccessList<AlbumMember>(
    (m) => m.accountId,
    () => api.albums.members(album.id),
    (err) => say({ kind: 'error', text: err.message }),
    album.id,
  );

  const put = async (body: { email: string } | { accountId: string }, as: AlbumMember['role']) => {
    try {
      const member = await api.albums.addMember(album.id, { ...body, role: as });
      members.put(member);
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
      members.drop(m);
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
      <AddAccessForm
        {...ADD_PERSON}
        value={who}
        onValue={setWho}
        choices={personChoices(found)}
        role={role}
        onRole={setRole}
        onSubmit={add}
      />
      <PeopleWithAccess
        members={members.list}
        onRole={(m, r) => void put({ accountId: m.accountId }, r)}
        onRemove={(m) => void remove(m)}
      />
    </>
  );
}

/** An album's Share, in the share dialog's two parts: People on this Coffer, and a public Link to its gallery. */
function AlbumShare(props: { album: Album; close: () => void }) {
  const [part, setPart] = useState<Part>('people');
  const [status, setStatus] = useState<SaveStatus | null>(null);
  return (
    <ShareFrame title={`Share the album “${props.album.name}”`} status={status} close={props.close}>
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
    </ShareFrame>
  );
}

export function openAlbumShare(album: Album): void {
  void openDialog<void>((close) => <AlbumShare album={album} close={() => close()} />);
}
