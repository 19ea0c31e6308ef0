import { useEffect, useState } from 'preact/hooks';
import type { FileVersion, Item } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { exactDate, formatDate, formatSize } from '../app/format.ts';
import { can, profile } from '../app/session.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { ActionButton } from '../ui/form.tsx';
import { Icon } from '../ui/icons.tsx';

const SOURCES: Record<FileVersion['source'], string> = {
  upload: 'Uploaded',
  replace: 'Replaced',
  webdav: 'Saved over WebDAV',
  docserver: 'Edited in the document editor',
  restore: 'Restored from a version',
};

const dayFmt = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
const timeFmt = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });

/** "Today", "Yesterday" or the date: the heading of a day's versions. */
function dayLabel(iso: string, now = new Date()): string {
  const d = new Date(iso);
  const start = (x: Date) => new Date(x.getFullYear(), x.getMonth(), x.getDate()).getTime();
  const days = Math.round((start(now) - start(d)) / 86_400_000);
  return days === 0 ? 'Today' : days === 1 ? 'Yesterday' : dayFmt.format(d);
}

function authorOf(v: FileVersion): string {
  if (!v.author) return 'a login that no longer exists';
  if (v.author.id === profile.value?.id) return 'you';
  return v.author.name || v.author.email;
}

/** Contiguous runs of versions written on the same day, newest first. */
function byDay(versions: FileVersion[]): Array<{ day: string; versions: FileVersion[] }> {
  const groups: Array<{ day: string; versions: FileVersion[] }> = [];
  for (const v of versions) {
    const day = dayLabel(v.modified);
    if (groups.at(-1)?.day === day) groups.at(-1)!.versions.push(v);
    else groups.push({ day, versions: [v] });
  }
  return groups;
}

/** Which of Restore and Delete this login may use on the file's versions (Download follows its permission). */
export interface VersionAccess {
  restore: boolean;
  remove: boolean;
}

/** The Versions tab of a file's details: its earlier contents, with Download, Restore (with Undo) and Delete. */
export function VersionsTab({ item, access }: { item: Item; access: VersionAccess }) {
  const [versions, setVersions] = useState<FileVersion[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = () =>
    api.files.versions(item.id).then(
      (list) => {
        setVersions(list);
        setError(null);
        return list;
      },
      (err: Error) => {
        setError(err.message);
        return null;
      },
    );

  useEffect(() => {
    setVersions(null);
    void load();
  }, [item.id, item.modified]);

  async function restore(v: FileVersion, undo = false) {
    setBusy(true);
    try {
      await api.files.restoreVersion(item.id, v.id);
      const list = await load();
      if (undo) {
        toast('The file is back as it was');
        return;
      }
      // The content just replaced is now the newest version: Undo restores it.
      const replaced = list?.[0];
      toast(`Restored the version of ${formatDate(v.modified)}`, {
        action: replaced ? { label: 'Undo', run: () => void restore(replaced, true) } : undefined,
      });
    } catch (err) {
      toastError(err);
    } finally {
      setBusy(false);
    }
  }

  async function remove(v: FileVersion) {
    const sure = await confirmDialog({
      title: 'Delete this version?',
      message: `The version of ${exactDate(v.modified)} (${formatSize(v.size)}) is deleted for good. The file itself stays as it is.`,
      confirm: 'Delete version',
      danger: true,
    });
    if (!sure) return;
    setBusy(true);
    try {
      await api.files.deleteVersion(item.id, v.id);
      await load();
      toast('Version deleted');
    } catch (err) {
      toastError(err);
    } finally {
      setBusy(false);
    }
  }

  if (error)
    return (
      <p class="field-error" role="alert">
        {error}
      </p>
    );
  if (!versions) return <p class="muted versions-note">Loading versions…</p>;
  if (versions.length === 0)
    return (
      <p class="muted versions-note">
        No earlier versions yet. When this file is replaced, saved over or edited, what it held before is kept here.
      </p>
    );
  return (
    <div class="versions">
      {byDay(versions).map((group) => (
        <section key={group.day} aria-label={group.day}>
          <h3 class="versions-day">{group.day}</h3>
          <ul class="versions-list">
            {group.versions.map((v) => (
              <li key={v.id} class="version" aria-label={`Version of ${exactDate(v.modified)}`}>
                <div class="version-line">
                  <span class="version-time" title={`Written ${exactDate(v.modified)}; replaced ${exactDate(v.createdAt)}`}>
                    {timeFmt.format(new Date(v.modified))}
                  </span>
                  <span class="version-size">{formatSize(v.size)}</span>
                </div>
                <p class="version-meta">
                  {SOURCES[v.source]} by {authorOf(v)}
                </p>
                <div class="version-actions">
                  {can('files.download') && (
                    <a class="button small ghost" href={api.files.versionDownloadUrl(item.id, v.id)} download={item.name}>
                      <Icon name="download" size={16} />
                      Download
                    </a>
                  )}
                  {access.restore && (
                    <ActionButton busy={busy} class="button small ghost" onClick={() => void restore(v)}>
                      <Icon name="restore" size={16} />
                      Restore
                    </ActionButton>
                  )}
                  {access.remove && (
                    <ActionButton busy={busy} class="button small danger-ghost" onClick={() => void remove(v)}>
                      <Icon name="trash" size={16} />
                      Delete
                    </ActionButton>
                  )}
                </div>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
}
