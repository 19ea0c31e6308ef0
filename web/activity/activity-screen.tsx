import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/index.ts';
import { navigate, route } from '../app/router.ts';
import { pickFolder } from '../files/folder-picker.tsx';
import { Field } from '../ui/form.tsx';
import { Icon } from '../ui/icons.tsx';
import { ActivityFeed } from './activity-feed.tsx';
import { KINDS } from './describe.ts';

/** The filters live in the URL (`?actor=&kind=&folder=`), so a filtered view can be bookmarked and shared. */
function setFilter(name: 'actor' | 'kind' | 'folder', value: string | null): void {
  const q = new URLSearchParams(route.value.query);
  if (value) q.set(name, value);
  else q.delete(name);
  navigate(`/activity${q.size ? `?${q}` : ''}`, { replace: true });
}

/** The people whose changes the reader may see (the server's list over the whole change log), for the person filter. */
function usePeople(): Array<{ id: string; name: string }> {
  const [people, setPeople] = useState<Array<{ id: string; name: string }>>([]);
  useEffect(() => {
    api.files.activityPeople().then(
      (r) => setPeople(r.people.map((p) => ({ id: p.id, name: p.name }))),
      () => setPeople([]),
    );
  }, []);
  return people;
}

/** Activity: who changed what in the account's files and in what is shared with it, newest first. */
export function ActivityScreen() {
  const q = route.value.query;
  const actor = q.get('actor') ?? '';
  const kind = q.get('kind') ?? '';
  const folderId = q.get('folder') ?? '';
  const folderName = q.get('folderName') ?? 'the chosen folder';
  const people = usePeople();

  const chooseFolder = async () => {
    const target = await pickFolder({ title: 'Show activity in', confirm: 'Show', start: folderId || null });
    if (!target) return;
    const next = new URLSearchParams(route.value.query);
    if (target.id) {
      next.set('folder', target.id);
      next.set('folderName', target.name);
    } else {
      next.delete('folder');
      next.delete('folderName');
    }
    navigate(`/activity${next.size ? `?${next}` : ''}`, { replace: true });
  };

  return (
    <div class="page activity-page">
      <h1>Activity</h1>
      <div class="activity-filters" role="group" aria-label="Filters">
        <Field label="Person">
          <select value={actor} onChange={(e) => setFilter('actor', e.currentTarget.value || null)}>
            <option value="">Everyone</option>
            {people.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Change">
          <select value={kind} onChange={(e) => setFilter('kind', e.currentTarget.value || null)}>
            <option value="">All changes</option>
            {Object.entries(KINDS).map(([k, v]) => (
              <option key={k} value={k}>
                {v.label}
              </option>
            ))}
          </select>
        </Field>
        <div class="field">
          <span class="label">Folder</span>
          <div class="activity-folder">
            <button type="button" class="button small" onClick={() => void chooseFolder()}>
              <Icon name="folder" size={16} />
              {folderId ? folderName : 'All folders'}
            </button>
            {folderId && (
              <button type="button" class="button small ghost" aria-label="Show every folder" onClick={() => setFilter('folder', null)}>
                <Icon name="close" size={16} />
              </button>
            )}
          </div>
        </div>
      </div>
      <ActivityFeed
        label="Changes"
        filters={{ ...(actor ? { actor } : {}), ...(kind ? { kind } : {}), ...(folderId ? { folderId } : {}) }}
      />
    </div>
  );
}
