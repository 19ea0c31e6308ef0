import { useEffect, useRef } from 'preact/hooks';
import type { InvitationEntry, UserEntry } from '../../src/contract/admin.ts';
import { PERMISSION_CATALOG } from '../../src/contract/permissions.ts';
import { exactDate, formatDate, formatSize, plural } from '../app/format.ts';
import { ActionButton } from '../ui/form.tsx';

const labelOf = (key: string) => PERMISSION_CATALOG.find((p) => p.key === key)?.label ?? key;

/** "1.2 GiB of 50 GiB (own limit)", "300 MiB, no limit"; a limit set below what is stored says what that means. */
function usage(u: UserEntry): string {
  if (u.storageTotal === null) return `${formatSize(u.storageUsed)}, no limit`;
  const of = `${formatSize(u.storageUsed)} of ${formatSize(u.storageTotal)} (${u.storageLimit === null ? 'instance default' : 'own limit'})`;
  return u.storageUsed > u.storageTotal
    ? `${of}: over the limit, so uploads are refused until files are deleted or the limit is raised`
    : of;
}

function Person({ u, admin, justAdded }: { u: UserEntry; admin?: boolean; justAdded?: boolean }) {
  return (
    <div class="entry-main">
      <span class="entry-title">
        {u.name || u.email}
        {admin && <span class="pill accent">Administrator</span>}
        {justAdded && <span class="pill accent">Just added</span>}
        {u.deletionPending ? <span class="pill warn">Being deleted</span> : u.disabled && <span class="pill warn">Disabled</span>}
        <span class={`pill ${u.mfaEnabled ? 'ok' : ''}`}>Two-factor {u.mfaEnabled ? 'on' : 'off'}</span>
        {u.emailTrusted === false && (
          <span
            class="pill"
            title="Typed at sign-up or by the account owner: single sign-on does not link to it by email until you confirm it"
          >
            Email not confirmed
          </span>
        )}
      </span>
      <span class="muted small">
        {u.email} · <span title={exactDate(u.createdAt)}>created {formatDate(u.createdAt).toLowerCase()}</span>
      </span>
    </div>
  );
}

/** An account with its storage, its buttons (limit, disable, delete) and its sub-users nested below it. */
export function AccountEntry(p: {
  o: UserEntry;
  subs: UserEntry[];
  isAdmin: boolean;
  /** Added a moment ago: marked, and the focus brought to it, wherever the sort puts it. */
  justAdded: boolean;
  /** Until the administrator is known, no account offers Disable or Delete. */
  adminKnown: boolean;
  /** Its Enable or Disable is under way. */
  busy: boolean;
  setLimit: (u: UserEntry) => void;
  setDisabled: (u: UserEntry, disabled: boolean) => void;
  remove: (u: UserEntry) => void;
  /** Vouches for a login's address (`coffer users confirm-email`), the account's own or a sub-user's. */
  confirmEmail: (u: UserEntry) => void;
  /** Logins whose confirmation is under way. */
  confirming: ReadonlySet<string>;
}) {
  const { o, subs } = p;
  const entry = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (!p.justAdded) return;
    entry.current?.scrollIntoView({ block: 'center' });
    entry.current?.focus({ preventScroll: true });
  }, [p.justAdded]);
  return (
    <li ref={entry} class={`entry account ${p.justAdded ? 'just-added' : ''}`} tabIndex={p.justAdded ? -1 : undefined}>
      <div class="entry-row">
        <Person u={o} admin={p.isAdmin} justAdded={p.justAdded} />
        <div class="entry-side">
          <span class="small">{usage(o)}</span>
          {(o.sharedWithPeople ?? 0) > 0 && <span class="small muted">shares {plural(o.sharedWithPeople ?? 0, 'item')} with people</span>}
          {o.storageTotal !== null && (
            <progress class="meter" value={Math.min(1, o.storageUsed / o.storageTotal)} max={1} aria-label={`Storage used by ${o.email}`} />
          )}
          <button type="button" class="button small" aria-label={`Storage limit of ${o.email}`} onClick={() => p.setLimit(o)}>
            Storage limit
          </button>
          <ConfirmEmail u={o} {...p} />
          {!p.isAdmin && p.adminKnown && !o.deletionPending && (
            <>
              <ActionButton
                class="button small"
                busy={p.busy}
                aria-label={`${o.disabled ? 'Enable' : 'Disable'} ${o.email}`}
                onClick={() => p.setDisabled(o, !o.disabled)}
              >
                {o.disabled ? 'Enable' : 'Disable'}
              </ActionButton>
              <button type="button" class="button small danger-ghost" aria-label={`Delete ${o.email}`} onClick={() => p.remove(o)}>
                Delete…
              </button>
            </>
          )}
        </div>
      </div>
      {subs.length > 0 && (
        <ul class="sub-entries" aria-label={`Sub-users of ${o.email}`}>
          {subs.map((s) => (
            <li key={s.id} class="entry sub">
              <Person u={s} />
              <span class="small muted">
                Sub-user · may {s.permissions?.length ? s.permissions.map(labelOf).join(', ') : 'only browse'}
              </span>
              <ConfirmEmail u={s} {...p} />
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** Confirm email, on a login whose address nobody has vouched for yet. */
function ConfirmEmail(p: { u: UserEntry; confirmEmail: (u: UserEntry) => void; confirming: ReadonlySet<string> }) {
  if (p.u.emailTrusted !== false) return null;
  return (
    <ActionButton
      class="button small"
      busy={p.confirming.has(p.u.id)}
      aria-label={`Confirm email of ${p.u.email}`}
      onClick={() => p.confirmEmail(p.u)}
    >
      Confirm email
    </ActionButton>
  );
}

/** Invitations not yet accepted, each with Withdraw. */
export function Invitations({
  invitations,
  withdraw,
  busy,
}: {
  invitations: InvitationEntry[];
  withdraw: (i: InvitationEntry) => void;
  /** Invitations whose withdrawal is under way. */
  busy: ReadonlySet<string>;
}) {
  return (
    invitations.length > 0 && (
      <ul class="entries" aria-label="Invitations waiting">
        {invitations.map((i) => (
          <li key={i.id} class="entry account">
            <div class="entry-row">
              <div class="entry-main">
                <span class="entry-title">
                  {i.name || i.email}
                  <span class="pill">Invited</span>
                </span>
                <span class="muted small">
                  {i.email} · <span title={exactDate(i.expiresAt)}>link valid until {formatDate(i.expiresAt).toLowerCase()}</span>
                </span>
              </div>
              <div class="entry-side">
                <ActionButton
                  class="button small"
                  busy={busy.has(i.id)}
                  aria-label={`Withdraw the invitation for ${i.email}`}
                  onClick={() => withdraw(i)}
                >
                  Withdraw
                </ActionButton>
              </div>
            </div>
          </li>
        ))}
      </ul>
    )
  );
}
