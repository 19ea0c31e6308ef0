import { useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  reload(): Promise<void>;
  set(data: T): void;
}

/**
 * Loads what a screen shows when it opens (and again on `reload`, and every `everyMs` while it is shown, for
 * lists that change by themselves); the error is the server's message.
 */
export function useLoad<T>(load: () => Promise<T>, opts: { everyMs?: number } = {}): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const latest = useRef(0);
  const reload = async () => {
    const call = ++latest.current;
    try {
      const fresh = await load();
      if (call === latest.current) {
        setData(fresh);
        setError(null);
      }
    } catch (err) {
      if (call === latest.current) setError((err as Error).message);
    }
  };
  useEffect(() => {
    setData(null);
    setError(null);
    void reload();
    if (!opts.everyMs) return;
    const t = setInterval(() => void reload(), opts.everyMs);
    return () => clearInterval(t);
  }, []);
  return { data, error, reload, set: setData };
}

export interface Pages<T> {
  /** What is shown: every page read so far, in order; null until the first arrives. */
  items: T[] | null;
  error: string | null;
  /** The server has more beyond what is shown. */
  more: boolean;
  busy: boolean;
  /** Reads the next page and adds it to what is shown. */
  loadMore(): Promise<void>;
  /** Reads the first page again, in place of all shown. */
  reload(): Promise<void>;
  /**
   * Reads from the first page again, page after page until `enough` holds for what is read (or the list ends), in place of
   * all shown; resolves with what was read (null: it failed, or a later read took its place).
   */
  reloadUntil(enough: (items: T[]) => boolean): Promise<T[] | null>;
  /** Changes what is shown (an entry removed) without asking the server. */
  update(change: (items: T[]) => T[]): void;
}

/**
 * A list read a page at a time: the first page when the screen opens (and again when `deps` change), the next at each
 * `loadMore` (a "More" button, or the end scrolled into view), so no entry is out of reach however long the list is.
 */
export function usePages<T>(load: (cursor?: string) => Promise<{ items: T[]; nextCursor: string | null }>, deps: unknown[] = []): Pages<T> {
  const [items, setItems] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const latest = useRef(0);
  /** Pages from `from` (the first without) until `enough` holds for them, added to what is shown (in its place from the first). */
  const read = async (from: string | undefined, enough: (items: T[]) => boolean = () => true): Promise<T[] | null> => {
    const call = ++latest.current;
    setBusy(true);
    try {
      const got: T[] = [];
      let next = from;
      do {
        const page = await load(next);
        if (call !== latest.current) return null;
        got.push(...page.items);
        next = page.nextCursor ?? undefined;
      } while (next && !enough(got));
      setItems((shown) => (from ? [...(shown ?? []), ...got] : got));
      setCursor(next ?? null);
      setError(null);
      return got;
    } catch (err) {
      if (call === latest.current) setError((err as Error).message);
      return null;
    } finally {
      if (call === latest.current) setBusy(false);
    }
  };
  useEffect(() => {
    setItems(null);
    setCursor(null);
    setError(null);
    void read(undefined);
  }, deps);
  return {
    items,
    error,
    more: cursor !== null,
    busy,
    loadMore: () => (cursor ? read(cursor).then(() => {}) : Promise.resolve()),
    reload: () => read(undefined).then(() => {}),
    reloadUntil: (enough) => read(undefined, enough),
    update: (change) => setItems((shown) => shown && change(shown)),
  };
}
