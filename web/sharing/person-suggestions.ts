import { useEffect, useRef, useState } from 'preact/hooks';
import type { PersonSuggestion } from '../../src/contract/sharing.ts';
import { api } from '../api/index.ts';

/** The server names at most this many: a shorter answer holds every match of a longer prefix too. */
const FULL = 8;

const matches = (p: PersonSuggestion, q: string) =>
  p.name
    .toLowerCase()
    .split(/\s+/)
    .some((w) => w.startsWith(q)) ||
  (p.email?.toLowerCase().startsWith(q) ?? false);

/**
 * Accounts of this Coffer whose name (or email, for an owner) starts with what is typed. Each answer
 * spends the account's member-lookup allowance, so a pause in typing asks once, and a longer prefix of
 * a complete answer is filtered here without asking again.
 */
export function usePersonSuggestions(text: string): PersonSuggestion[] {
  const [found, setFound] = useState<PersonSuggestion[]>([]);
  const last = useRef<{ q: string; people: PersonSuggestion[] } | null>(null);
  const q = text.trim().toLowerCase();
  useEffect(() => {
    if (q.length < 2) return setFound([]);
    const known = last.current;
    if (known && q.startsWith(known.q) && known.people.length < FULL) return setFound(known.people.filter((p) => matches(p, q)));
    let live = true;
    const timer = setTimeout(() => {
      api.people.suggestions(q).then(
        (people) => {
          last.current = { q, people };
          if (live) setFound(people);
        },
        () => live && setFound([]),
      );
    }, 250);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [q]);
  return found;
}

/** The suggestion a typed text names exactly (its email or its name), if any. */
export function pickedPerson(found: PersonSuggestion[], text: string): PersonSuggestion | undefined {
  const t = text.trim().toLowerCase();
  return found.find((p) => p.email?.toLowerCase() === t) ?? found.find((p) => p.name.toLowerCase() === t);
}

/** Suggestions as an add form's choices: the email to fill in where there is one, else the name. */
export const personChoices = (found: PersonSuggestion[]) =>
  found.map((p) => ({ key: p.accountId, value: p.email ?? p.name, label: p.email ? `${p.name} · ${p.email}` : p.name }));
