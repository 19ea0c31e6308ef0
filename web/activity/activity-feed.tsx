import { useEffect, useRef, useState } from 'preact/hooks';
import type { ActivityLine, ActivityQuery } from '../../src/contract/activity.ts';
import { api } from '../api/index.ts';
import { onFileEvent } from '../app/events.ts';
import { LoadError } from '../ui/page.tsx';
import { ActivityEntry } from './activity-line.tsx';
import { byDay, groupLines } from './describe.ts';

const PAGE = 50;

/**
 * The change log as the caller sees it, newest first and grouped by day, the next page read when the
 * end of the list scrolls into view; a new change reloads the top.
 */
export function ActivityFeed({ filters, label }: { filters: Omit<ActivityQuery, 'cursor' | 'limit'>; label: string }) {
  const [lines, setLines] = useState<ActivityLine[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [reloads, setReloads] = useState(0);
  const end = useRef<HTMLDivElement>(null);
  const key = JSON.stringify(filters);

  const load = async (from: string | null, signal?: AbortSignal) => {
    setLoading(true);
    try {
      const page = await api.files.activity({ ...filters, limit: PAGE, ...(from ? { cursor: from } : {}) }, { signal });
      setLines((old) => (from && old ? [...old, ...page.items] : page.items));
      setCursor(page.nextCursor);
      setError(null);
    } catch (err) {
      if (!signal?.aborted) setError((err as Error).message);
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    const abort = new AbortController();
    void load(null, abort.signal);
    return () => abort.abort();
  }, [key, reloads]);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const off = onFileEvent((e) => {
      if (e.type === 'resumed') return;
      timer ??= setTimeout(() => {
        timer = null;
        setReloads((n) => n + 1);
      }, 500);
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }, []);

  useEffect(() => {
    const node = end.current;
    if (!node || !cursor) return;
    const seen = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !loading) void load(cursor);
    });
    seen.observe(node);
    return () => seen.disconnect();
  }, [cursor, loading]);

  if (error && !lines) return <LoadError message={error} retry={() => setReloads((n) => n + 1)} />;
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
      {error && <LoadError message={error} retry={() => void load(cursor)} />}
      {cursor && (
        <div ref={end} class="activity-more muted">
          {loading ? 'Loading more…' : ''}
        </div>
      )}
    </section>
  );
}
