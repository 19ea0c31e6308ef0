import { useEffect, useId, useState } from 'preact/hooks';
import type { MemberRole } from '../../src/contract/sharing.ts';
import { SubmitButton } from '../ui/form.tsx';
import { AccessRow, RoleField } from './roles.tsx';

/**
 * Who has access to one thing (an item's people or groups, an album's people), loaded again when `of` changes:
 * `put` adds one (or moves it, changed, to the end), `replace` changes one in place, `drop` takes one out.
 */
export function useAccessList<T>(key: (entry: T) => string, load: () => Promise<T[]>, fail: (err: Error) => void, of: string) {
  const [list, setList] = useState<T[] | null>(null);
  useEffect(() => {
    load().then(setList, fail);
  }, [of]);
  const put = (entry: T) => setList((now) => [...(now ?? []).filter((x) => key(x) !== key(entry)), entry]);
  const replace = (entry: T) => setList((now) => now?.map((x) => (key(x) === key(entry) ? entry : x)) ?? null);
  const drop = (entry: T) => setList((now) => now?.filter((x) => key(x) !== key(entry)) ?? null);
  return { list, put, replace, drop };
}

/** The form that gives someone access: who (completed from `choices`), the role they get, the button; then its error. */
export function AddAccessForm(props: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  maxLength: number;
  placeholder?: string;
  choices: { key: string; value: string; label: string }[];
  roleLabel: string;
  role: MemberRole;
  onRole: (role: MemberRole) => void;
  busy?: boolean;
  button: string;
  onSubmit: (e: Event) => void;
  error?: string | null;
}) {
  const listId = useId();
  return (
    <>
      <form class="people-add" onSubmit={props.onSubmit}>
        <label class="field">
          <span>{props.label}</span>
          <input
            required
            autoComplete="off"
            list={listId}
            maxLength={props.maxLength}
            value={props.value}
            placeholder={props.placeholder}
            onInput={(e) => props.onValue(e.currentTarget.value)}
          />
        </label>
        <datalist id={listId}>
          {props.choices.map((c) => (
            <option key={c.key} value={c.value} label={c.label} />
          ))}
        </datalist>
        <RoleField label={props.roleLabel} value={props.role} onChange={props.onRole} />
        <SubmitButton busy={!!props.busy} class="button" disabled={!props.value.trim()}>
          {props.button}
        </SubmitButton>
      </form>
      {props.error && (
        <p class="field-error" role="alert">
          {props.error}
        </p>
      )}
    </>
  );
}

/** One row of an access list: who, a detail line, the role, and what changing or removing it does. */
export interface AccessEntry {
  key: string;
  name: string;
  detail?: string | undefined;
  who: string;
  role: MemberRole;
  onRole: (role: MemberRole) => void;
  onRemove: () => void;
}

/** Who has access, as a labelled list; `empty`, what to say while there is no one. */
export function AccessList(props: { label: string; entries: AccessEntry[] | null; empty?: string }) {
  const { entries } = props;
  if (entries?.length === 0) return props.empty ? <p class="muted small">{props.empty}</p> : null;
  if (!entries) return null;
  return (
    <ul class="people-list" aria-label={props.label}>
      {entries.map(({ key, ...e }) => (
        <AccessRow key={key} {...e} />
      ))}
    </ul>
  );
}

/** The add form's words for a person (an item's, an album's): by name or email, with a role. */
export const ADD_PERSON = { label: 'Name or email', maxLength: 254, roleLabel: 'Role', button: 'Add person' } as const;

/** The people with access (an item's, an album's): each by name (the email where there is none), the email beside a name. */
export function PeopleWithAccess<M extends { accountId: string; name: string; email: string; role: MemberRole }>(props: {
  members: M[] | null;
  onRole: (member: M, role: MemberRole) => void;
  onRemove: (member: M) => void;
}) {
  const entries = props.members?.map((m) => ({
    key: m.accountId,
    name: m.name || m.email,
    detail: m.name ? m.email : undefined,
    who: m.email,
    role: m.role,
    onRole: (r: MemberRole) => props.onRole(m, r),
    onRemove: () => props.onRemove(m),
  }));
  return <AccessList label="People with access" entries={entries ?? null} empty="Not shared with anyone yet." />;
}
