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
