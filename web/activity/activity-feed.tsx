import { useEffect } from 'preact/hooks';
import type { ActivityLine, ActivityQuery } from '../../src/contract/activity.ts';
import { api } from '../api/index.ts';
import { onFileEvent } from '../app/events.ts';
import { usePages } from '../app/load.ts';
import { useLoadAtEnd } from '../ui/load-at-end.ts';
import { LoadError } from '../ui/page.tsx';
import { ActivityEntry } from './activity-line.tsx';
import { byDay, groupLines } from './describe.ts';

const PAGE = 50;

/**
 * The change log as the caller sees it, newest first and grouped by day, the next page read when the
 * end of the list scrolls into view; a new change reloads the top.
 */
export function ActivityFeed({ filters, label }: { filters: Omit<ActivityQuery, 'cursor' | 'limit'>; label: string }) {
  const key = JSON.stringify(filters);
  const pages = usePages<ActivityLine>((cursor) => api.files.activity({ ...filters, limit: PAGE, ...(cursor ? { cursor } : {}) }), [key]);
  const end = useLoadAtEnd<HTMLDivElement>(pages);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const off = onFileEvent((e) => {
      if (e.type === 'resumed') return;
      timer ??= setTimeout(() => {
        timer = null;
        void pages.reload();
      }, 500);
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }, [key]);

  const lines = pages.items;
  if (pages.error && !lines) return <LoadError message={pages.error} retry={() => void pages.reload()} />;
  if (!lines)
    return (
      <p class="muted" aria-busy="true">
        Loading activity…
      </p>
    );
  if (lines.length === 0) return <p class="muted activity-empty">No changes yet.</p>;
  return (
    <section class="activity-feed" aria-label={label}>
      {byDay(groupLines(lines)).map((d) => (
        <section key={d.day} class="activity-day" aria-label={d.day}>
          <h2 class="activity-day-title">{d.day}</h2>
          <ul>
            {d.groups.map((g) => (
              <ActivityEntry key={g.key} group={g} />
            ))}
          </ul>
        </section>
      ))}
      {pages.error && <LoadError message={pages.error} retry={() => void pages.loadMore()} />}
      {pages.more && (
        <div ref={end} class="activity-more muted">
          {pages.busy ? 'Loading more…' : ''}
        </div>
      )}
    </section>
  );
}
