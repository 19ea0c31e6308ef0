import { useEffect, useState } from 'preact/hooks';
import type { GroupChoice } from '../../src/contract/groups.ts';
import { MembersForm, type MembersClient } from '../admin/group-members.tsx';
import { api } from '../api/index.ts';
import { plural } from '../app/format.ts';
import { Dialog, openDialog } from '../ui/dialog.tsx';
import { LoadError, Section } from '../ui/page.tsx';

const LEAD_CLIENT: MembersClient = {
  one: api.groups.led,
  add: api.groups.addToLed,
  remove: api.groups.removeFromLed,
  emails: () => Promise.resolve([]),
};

/** Settings → Groups: the groups the account is in; in those it administers, their members. */
export function Groups() {
  const [groups, setGroups] = useState<GroupChoice[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    api.groups.mine().then(
      (mine) => {
        setGroups(mine);
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
                  <button type="button" class="button small" aria-label={`Members of ${g.name}`} onClick={() => members(g)}>
                    Members
                  </button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}
