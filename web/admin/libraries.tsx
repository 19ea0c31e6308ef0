import { useEffect, useState } from 'preact/hooks';
import type { GroupView } from '../../src/contract/groups.ts';
import { LIBRARY_NOT_ENCRYPTED, type LibraryView } from '../../src/contract/libraries.ts';
import { api } from '../api/index.ts';
import { useLoad } from '../app/load.ts';
import { formatSize, plural } from '../app/format.ts';
import { toast, toastError } from '../app/toasts.ts';
import { useBusyKeys } from '../ui/busy-keys.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { ActionButton, Field, FormError, SubmitButton } from '../ui/form.tsx';
import { LoadError, Section } from '../ui/page.tsx';

// While a scan runs, the list is read again this often to show its progress.
const SCAN_POLL_MS = 1000;

/** "1,204 files, 32 folders, 3.1 GiB · scanned …", or what stops the library being read. */
function state(l: LibraryView): string {
  if (l.scanning) return `Scanning… ${l.scanning.entries.toLocaleString()} entries so far`;
  if (!l.available) return `Unavailable: ${l.scanError ?? 'the folder cannot be reached'} Its items are kept.`;
  const counts = `${plural(l.files, 'file')}, ${plural(l.folders, 'folder')}, ${formatSize(l.bytes)}`;
  if (l.scanError) return `${counts} · ${l.scanError}`;
  return l.scannedAt ? `${counts} · scanned ${new Date(l.scannedAt).toLocaleString()}` : `${counts} · not scanned yet`;
}

/** Admin → Libraries: host folders shown as they are, not encrypted, in an account's My files. */
export function Libraries() {
  const removing = useBusyKeys();
  const loaded = useLoad(async () => {
    const [libraries, groups] = await Promise.all([api.libraries.all(), api.groups.all()]);
    return { libraries, groups };
  });
  const { error, reload: load } = loaded;
  const libraries = loaded.data?.libraries ?? null;
  const groups: GroupView[] = loaded.data?.groups ?? [];
  const [path, setPath] = useState('');
  const [name, setName] = useState('');
  const [owner, setOwner] = useState('');
  const [group, setGroup] = useState('');
  const [readOnly, setReadOnly] = useState(true);
  const [addError, setAddError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const scanning = libraries?.some((l) => l.scanning) ?? false;
  useEffect(() => {
    if (!scanning) return;
    const timer = setTimeout(() => void load(), SCAN_POLL_MS);
    return () => clearTimeout(timer);
  }, [libraries]);

  const add = async (e: Event) => {
    e.preventDefault();
    if (!path.trim() || !name.trim() || !owner.trim()) return setAddError('Give the folder’s path, a name and the owner’s email.');
    setBusy(true);
    setAddError(null);
    try {
      const { library } = await api.libraries.add({
        path: path.trim(),
        name: name.trim(),
        owner: owner.trim(),
        readOnly,
        ...(group ? { group } : {}),
      });
      toast(`Library ${library.name} added; scanning it`);
      setPath('');
      setName('');
      await load();
    } catch (err) {
      setAddError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const rescan = async (l: LibraryView) => {
    try {
      await api.libraries.rescan(l.id);
      toast(`Scanning ${l.name}`);
      await load();
    } catch (err) {
      toastError(err);
    }
  };

  // Pressed again while the server answers (the list reloads after), it sends nothing.
  const remove = (l: LibraryView) =>
    removing.whileBusy(l.id, async () => {
      const sure = await confirmDialog({
        title: `Remove ${l.name}?`,
        message: `Its ${plural(l.files, 'file')} leave Coffer (with their share links and stars); the folder ${l.path} is not touched and keeps every file.`,
        confirm: 'Remove library',
        danger: true,
      });
      if (!sure) return;
      try {
        await api.libraries.remove(l.id);
        toast(`Library ${l.name} removed`);
        await load();
      } catch (err) {
        toastError(err);
      }
    });

  return (
    <Section
      title="Libraries"
      intro="Folders already on this server (photos, music, an archive), shown as they are at the top of an account’s My files and followed as other programs change them."
    >
      <p class="notice warning" id="library-warning">
        {LIBRARY_NOT_ENCRYPTED}
      </p>
      <form noValidate class="form" onSubmit={add} aria-describedby="library-warning">
        <div class="form inline-form">
          <Field label="Folder on the server" hint="An absolute path, such as /srv/photos.">
            <input value={path} placeholder="/srv/photos" onInput={(e) => setPath(e.currentTarget.value)} />
          </Field>
          <Field label="Library name">
            <input maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
        </div>
        <div class="form inline-form">
          <Field label="Owner’s email">
            <input type="email" value={owner} onInput={(e) => setOwner(e.currentTarget.value)} />
          </Field>
          <Field label="Also for the group">
            <select value={group} onChange={(e) => setGroup(e.currentTarget.value)}>
              <option value="">No group</option>
              {groups.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.name} · {plural(g.size, 'person', 'people')}
                </option>
              ))}
            </select>
          </Field>
          <label class="checkbox">
            <input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.currentTarget.checked)} />
            <span>Read-only</span>
          </label>
          <SubmitButton busy={busy}>Add library</SubmitButton>
        </div>
      </form>
      <FormError message={addError} />
      {error && <LoadError message={error} retry={load} />}
      {libraries && libraries.length === 0 && <p class="muted">No libraries yet.</p>}
      {libraries && libraries.length > 0 && (
        <ul class="entries" aria-label="Libraries">
          {libraries.map((l) => (
            <li key={l.id} class="entry">
              <div class="entry-main">
                <span class="entry-title">
                  {l.name} <span class="muted small">{l.readOnly ? 'read-only' : 'writable'}</span>
                </span>
                <span class="muted small">
                  {l.path} · {l.ownerEmail}
                  {l.group ? ` and ${l.group.name}` : ''}
                </span>
                <span class="muted small" role="status">
                  {state(l)}
                </span>
              </div>
              <div class="entry-side">
                {l.scanning && <progress class="meter" aria-label={`Scanning ${l.name}`} />}
                <button
                  type="button"
                  class="button small"
                  aria-label={`Rescan ${l.name}`}
                  disabled={Boolean(l.scanning)}
                  onClick={() => rescan(l)}
                >
                  Rescan
                </button>
                <ActionButton
                  busy={removing.busy.has(l.id)}
                  class="button small danger-ghost"
                  aria-label={`Remove ${l.name}`}
                  onClick={() => remove(l)}
                >
                  Remove…
                </ActionButton>
              </div>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}
