import type { Member } from '../../src/contract/sharing.ts';

/** The roles a person or a group gets, as the share dialog names them. */
export const ROLES: { value: Member['role']; label: string }[] = [
  { value: 'viewer', label: 'Can view' },
  { value: 'editor', label: 'Can edit' },
];

function RoleSelect(props: { label: string; value: Member['role']; onChange: (role: Member['role']) => void; disabled?: boolean }) {
  return (
    <select
      aria-label={props.label}
      value={props.value}
      disabled={props.disabled}
      onChange={(e) => props.onChange(e.currentTarget.value as Member['role'])}
    >
      {ROLES.map((r) => (
        <option key={r.value} value={r.value}>
          {r.label}
        </option>
      ))}
    </select>
  );
}

/** The role picked for the next person or group added, as a labelled field of the add form. */
export function RoleField(props: { label: string; value: Member['role']; onChange: (role: Member['role']) => void }) {
  return (
    <label class="field role-field">
      <span>{props.label}</span>
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as Member['role'])}>
        {ROLES.map((r) => (
          <option key={r.value} value={r.value}>
            {r.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** One person or group with access: its name, a detail line, its role and a Remove button, both labelled with `who`. */
export function AccessRow(props: {
  name: string;
  detail?: string;
  who: string;
  role: Member['role'];
  onRole: (role: Member['role']) => void;
  onRemove: () => void;
}) {
  return (
    <li class="person">
      <span class="person-avatar" aria-hidden="true">
        {props.name.slice(0, 1).toUpperCase()}
      </span>
      <span class="person-name">
        {props.name}
        {props.detail && <span class="muted small">{props.detail}</span>}
      </span>
      <RoleSelect label={`Role for ${props.who}`} value={props.role} onChange={props.onRole} />
      <button type="button" class="button danger-ghost" aria-label={`Remove ${props.who}`} onClick={props.onRemove}>
        Remove
      </button>
    </li>
  );
}
