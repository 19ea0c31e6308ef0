import { useEffect, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import type { GroupChoice, TeamFolderChoice } from '../../src/contract/groups.ts';
import { MembersForm, type MembersClient } from '../admin/group-members.tsx';
import { api } from '../api/index.ts';
import { MAX_NAME_LENGTH } from '../../src/contract/names.ts';
import { parseSize } from '../../src/contract/size.ts';
import { formatSize, plural } from '../app/format.ts';
import { usePages } from '../app/load.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog, Dialog, FormButtons, openDialog } from '../ui/dialog.tsx';
import { useFocusAfterRemoval } from '../ui/focus-after-removal.ts';
import { Field, FormError } from '../ui/form.tsx';
import { LoadError, MoreButton, Section } from '../ui/page.tsx';

const LEAD_CLIENT: MembersClient = {
  one: api.groups.led,
  add: api.groups.addToLed,
  remove: api.groups.removeFromLed,
  emails: () => Promise.resolve([]),
};

/** A group administrator's team folder: a name and a quota out of the group's allowance. */
function TeamFolderForm({ group, close }: { group: GroupChoice; close: (name?: string) => void }) {
  const [name, setName] = useState('');
  const [quota, setQuota] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        const bytes = parseSize(quota);
        if (!name.trim()) return setError('Give the team folder a name.');
        if (bytes === null || bytes <= 0) return setError(`“${quota}” is not a size. Type one such as 10G.`);
        setBusy(true);
        setError(null);
        try {
          const made = await api.groups.makeTeamFolder(group.id, name.trim(), bytes);
          close(made.name);
        } catch (err) {
          setError((err as Error).message);
          setBusy(false);
        }
      }}
    >
      <div class="dialog-body form">
        <Field label="Team folder name">
          <input maxLength={MAX_NAME_LENGTH} value={name} onInput={(e) => setName(e.currentTarget.value)} autofocus />
        </Field>
        <Field
          label="Quota"
          hint={`A size such as 10G, out of the ${formatSize(group.teamFolderBytes ?? 0)} the admin lets ${group.name} give its team folders.`}
        >
          <input value={quota} placeholder="10G" onInput={(e) => setQuota(e.currentTarget.value)} />
        </Field>
        <FormError message={error} />
      </div>
      <FormButtons submit="Make team folder" busy={busy} cancel={() => close()} />
    </form>
  );
}

/** A team folder's trash, for its administrators: restore or delete forever, item by item. */
function TeamTrash({ folder, close }: { folder: TeamFolderChoice; close: () => void }) {
  // A trash longer than a page is read on by "More in the trash", each page added to what is shown.
  const trash = usePages((cursor) => api.teamFolders.trash(folder.id, cursor), [folder.id]);
  const items = trash.items;
  const keepFocus = useFocusAfterRemoval(items?.map((i) => i.id) ?? []);
  const act = async (item: Item, restore: boolean) => {
    const sure =
      restore ||
      (await confirmDialog({
        title: `Delete ${item.name} forever?`,
        message: `It is removed from the trash of ${folder.name} for everyone in its groups and cannot be restored.`,
        confirm: 'Delete forever',
        danger: true,
      }));
    if (!sure) return;
    try {
      if (restore) await api.teamFolders.restore(folder.id, [item.id]);
      else await api.teamFolders.deleteForever(folder.id, [item.id]);
      toast(restore ? `${item.name} restored to ${folder.name}` : `Deleting ${item.name} forever`);
      trash.update((list) => list.filter((x) => x.id !== item.id));
    } catch (err) {
      toastError(err);
    }
  };
  return (
    <>
      <div class="dialog-body">
        {trash.error && <LoadError message={trash.error} retry={trash.reload} />}
        {items?.length === 0 && <p class="muted">The trash of {folder.name} is empty.</p>}
        {items && items.length > 0 && (
          <ul class="entries" aria-label={`Trash of ${folder.name}`} {...keepFocus}>
            {items.map((i) => (
              <li key={i.id} data-key={i.id} class="entry">
                <div class="entry-main">
                  <span class="entry-title">{i.name}</span>
                  <span class="muted small">{i.type === 'folder' ? 'Folder' : formatSize(i.size ?? 0)}</span>
                </div>
                <div class="entry-side">
                  <button type="button" class="button small" aria-label={`Restore ${i.name}`} onClick={() => act(i, true)}>
                    Restore
                  </button>
                  <button
                    type="button"
                    class="button small danger-ghost"
                    aria-label={`Delete forever: ${i.name}`}
                    onClick={() => act(i, false)}
                  >
                    Delete forever
                  </button>
                </div>
              </li>
            ))}
          </ul>
        )}
        <MoreButton pages={trash} label="More in the trash" />
      </div>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={close}>
          Done
        </button>
      </div>
    </>
  );
}

/** Settings → Groups: the groups the account is in; in those it administers, their members and new team folders. */
export function Groups() {
  const [groups, setGroups] = useState<GroupChoice[] | null>(null);
  const [teams, setTeams] = useState<TeamFolderChoice[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    Promise.all([api.groups.mine(), api.teamFolders.mine()]).then(
      ([mine, reached]) => {
        setGroups(mine);
        setTeams(reached.filter((f) => f.administrator));
        setError(null);
      },
      (err: Error) => setError(err.message),
    );
  useEffect(() => void load(), []);

  const members = async (g: GroupChoice) => {
    await openDialog<void>((close) => (
      <Dialog title={`Members of ${g.name}`} onClose={() => close()} wide>
        <MembersForm group={g} client={LEAD_CLIENT} close={() => close()} />
      </Dialog>
    ));
    await load();
  };

  const trash = (f: TeamFolderChoice) =>
    openDialog<void>((close) => (
      <Dialog title={`Trash of ${f.name}`} onClose={() => close()} wide>
        <TeamTrash folder={f} close={() => close()} />
      </Dialog>
    ));

  const makeTeamFolder = async (g: GroupChoice) => {
    const made = await openDialog<string>((close) => (
      <Dialog title={`New team folder for ${g.name}`} onClose={() => close()}>
        <TeamFolderForm group={g} close={close} />
      </Dialog>
    ));
    if (made) toast(`Team folder ${made} made for ${g.name}: it is at the top of My files`);
  };

  return (
    <Section
      title="Groups"
      intro="The groups your account is in: whatever is shared with a group reaches you. The admin makes groups; a group administrator adds and removes its members."
    >
      {error && <LoadError message={error} retry={load} />}
      {groups && groups.length === 0 && <p class="muted">Your account is in no group.</p>}
      {groups && groups.length > 0 && (
        <ul class="entries" aria-label="Your groups">
          {groups.map((g) => (
            <li key={g.id} class="entry">
              <div class="entry-main">
                <span class="entry-title">
                  {g.name}
                  {g.admin && <span class="pill accent">Group administrator</span>}
                </span>
                <span class="muted small">{plural(g.size, 'person', 'people')}</span>
              </div>
              {g.admin && (
                <div class="entry-side">
                  {g.teamFolderBytes !== null && (
                    <button
                      type="button"
                      class="button small"
                      aria-label={`New team folder for ${g.name}`}
                      onClick={() => makeTeamFolder(g)}
                    >
                      New team folder
                    </button>
                  )}
                  <button type="button" class="button small" aria-label={`Members of ${g.name}`} onClick={() => members(g)}>
                    Members
                  </button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      {teams.length > 0 && (
        <>
          <h3>Team folders you administer</h3>
          <ul class="entries" aria-label="Team folders you administer">
            {teams.map((f) => (
              <li key={f.id} class="entry">
                <span class="entry-title">{f.name}</span>
                <div class="entry-side">
                  <button type="button" class="button small" aria-label={`Trash of ${f.name}`} onClick={() => trash(f)}>
                    Trash
                  </button>
                </div>
              </li>
            ))}
          </ul>
        </>
      )}
    </Section>
  );
}
