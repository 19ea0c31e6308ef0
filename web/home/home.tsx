import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/index.ts';
import type { Item, Stats } from '../../src/contract/files.ts';
import { onFileEvent, onStreamLive } from '../app/events.ts';
import { displayName, exactDate, familyOf, formatDate, formatSize } from '../app/format.ts';
import { folderPath, navigate } from '../app/router.ts';
import { can, hideExtensions, profile } from '../app/session.ts';
import { viewFileFrom } from '../files/actions.tsx';
import { createFolder } from '../files/item-operations.ts';
import { recentSource } from '../app/listings.ts';
import { FileIcon, Icon, type IconName } from '../ui/icons.tsx';
import { LoadError } from '../ui/page.tsx';
import { Name } from '../ui/name.tsx';
import { filesFromInput } from '../uploads/drop.ts';
import { startUploads } from '../uploads/start.tsx';

function Stat({ href, icon, value, label }: { href: string; icon: IconName; value: number | undefined; label: string }) {
  return (
    <a class="stat" href={href}>
      <Icon name={icon} />
      <span class="stat-value">{value === undefined ? '–' : value.toLocaleString()}</span>
      <span class="stat-label">{label}</span>
    </a>
  );
}

/** Home: counts, recently opened files and the two things people come to do (upload, new folder). */
export function Home() {
  const [stats, setStats] = useState<Stats | null>(null);
  const [recent, setRecent] = useState<Item[] | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  // Said once on the page, where the counts and the list go: a toast for each call (again on every file event) said it
  // elsewhere, over and over, and left the list blank.
  const load = () => {
    Promise.all([api.files.stats(), api.files.recent(8)]).then(
      ([s, r]) => {
        setStats(s);
        setRecent(r);
        setFailed(null);
      },
      (err: Error) => setFailed(err.message),
    );
  };
  useEffect(() => {
    load();
    // The starred count changes by events the stream does not replay: read again each time it is live (not also at its resume or resync, which come with that).
    const offEvents = onFileEvent((e) => e.type !== 'resumed' && e.type !== 'resync' && load());
    const offLive = onStreamLive(load);
    return () => {
      offEvents();
      offLive();
    };
  }, []);
  const p = profile.value;
  const hello = p?.name ? `Hello, ${p.name.split(' ')[0]}` : 'Welcome';
  return (
    <div class="home">
      <h1>{hello}</h1>
      {failed && <LoadError message={failed} retry={load} />}
      <section class="stats" aria-label="Your files at a glance">
        <Stat href="/files" icon="file" value={stats?.totalFiles} label="Files" />
        <Stat href="/files" icon="folder" value={stats?.totalFolders} label="Folders" />
        <Stat href="/starred" icon="star" value={stats?.starredCount} label="Starred" />
        <Stat href="/shared" icon="link" value={stats?.sharedCount} label="Share links" />
      </section>
      {can('files.upload') && (
        <section class="quick" aria-label="Quick actions">
          <label class="button primary">
            <Icon name="upload" size={18} /> Upload files
            <input
              type="file"
              multiple
              class="sr-only"
              onChange={(e) => {
                const files = filesFromInput(e.currentTarget.files!);
                e.currentTarget.value = '';
                void startUploads(files, null);
                navigate('/files');
              }}
            />
          </label>
          <button type="button" class="button" onClick={() => createFolder(null).then(() => navigate('/files'))}>
            <Icon name="folderPlus" size={18} /> New folder
          </button>
        </section>
      )}
      <section class="recent-list" aria-labelledby="recent-title">
        <div class="section-head">
          <h2 id="recent-title">Recent files</h2>
          <a href="/recent">See all</a>
        </div>
        {recent?.length === 0 && <p class="muted">Files you open or download will appear here.</p>}
        {!!recent?.length && (
          <ul>
            {recent.map((item) => (
              <li key={item.id}>
                <button type="button" class="recent-item" onClick={() => viewFileFrom('recent', recentSource, recent, item)}>
                  <FileIcon family={familyOf(item)} size={32} />
                  <Name class="recent-name" text={displayName(item.name, item.type, hideExtensions.value)} />
                  <span class="muted small" title={exactDate(item.accessedAt)}>
                    {formatSize(item.size ?? 0)} · opened {formatDate(item.accessedAt).toLowerCase()}
                  </span>
                </button>
                <a class="icon-button" href={folderPath(item.parentId)} aria-label={`Show ${item.name} in its folder`}>
                  <Icon name="folder" size={18} />
                </a>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
