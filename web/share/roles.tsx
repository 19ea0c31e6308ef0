import type { Member } from '../../src/contract/sharing.ts';

/** The roles a person or a group gets, as the share dialog names them. */
export const ROLES: { value: Member['role']; label: string }[] = [
  { value: 'viewer', label: 'Can view' },
  { value: 'editor', label: 'Can edit' },
];

export function RoleSelect(props: { label: string; value: Member['role']; onChange: (role: Member['role']) => void; disabled?: boolean }) {
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
