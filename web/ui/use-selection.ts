import { useEffect, useMemo } from 'preact/hooks';
import { createSelection, type Keyed, prune, type Selection } from './selection.ts';

/** One selection (web/ui/selection.ts) for the lifetime of a list component, kept in step with `items`. */
export function useSelection<T extends Keyed>(items: T[]): Selection<T> {
  const s = useMemo(() => createSelection<T>(), []);
  s.items = items;
  useEffect(() => prune(s, items), [items]);
  return s;
}
