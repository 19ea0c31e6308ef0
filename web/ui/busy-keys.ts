import { useRef, useState } from 'preact/hooks';

/**
 * Work keyed by what it acts on (an account, an invitation): `whileBusy` does not start a key's work again while it
 * runs (a second press sends nothing), and `busy` names the keys at work, for their buttons to show it.
 */
export function useBusyKeys() {
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set());
  const inFlight = useRef(new Set<string>());
  const whileBusy = async (key: string, work: () => Promise<unknown>) => {
    if (inFlight.current.has(key)) return;
    inFlight.current.add(key);
    setBusy(new Set(inFlight.current));
    try {
      await work();
    } finally {
      inFlight.current.delete(key);
      setBusy(new Set(inFlight.current));
    }
  };
  return { busy, whileBusy };
}
