import { useMemo, useState } from 'preact/hooks';
import type { AuditEvent, AuditStatus } from '../../src/contract/admin.ts';
import { api } from '../api/index.ts';
import { exactDate, formatDate } from '../app/format.ts';
import { usePages } from '../app/load.ts';
import { Field, Options } from '../ui/form.tsx';
import { LoadError, MoreButton, Section, TableWrap } from '../ui/page.tsx';

/** The groups of actions, as `coffer audit list --action` takes them. */
const GROUPS: Array<[string, string]> = [
  ['', 'Everything'],
  ['auth', 'Sign-ins and passwords'],
  ['session', 'Sessions'],
  ['mfa', 'Two-step verification'],
  ['passkey', 'Passkeys'],
  ['app_password', 'App passwords'],
  ['access', 'Refused requests'],
  ['user', 'Accounts'],
  ['subuser', 'Sub-users'],
  ['file', 'Files'],
  ['share', 'Sharing'],
  ['group', 'Groups'],
  ['team_folder', 'Team folders'],
  ['library', 'Libraries'],
  ['document', 'Documents'],
  ['settings', 'Settings'],
  ['backup', 'Backups'],
  ['keys', 'Keys'],
  ['orphans', 'Orphaned files'],
  ['doctor', 'Doctor'],
];

const OUTCOMES: Array<['' | AuditStatus, string]> = [
  ['', 'Any outcome'],
  ['success', 'Succeeded'],
  ['failure', 'Failed'],
  ['denied', 'Refused'],
];

const PERIODS: Array<[number, string]> = [
  [0, 'Any time'],
  [3600_000, 'The last hour'],
  [86400_000, 'The last 24 hours'],
  [7 * 86400_000, 'The last 7 days'],
  [30 * 86400_000, 'The last 30 days'],
];

const OUTCOME_TEXT: Record<AuditStatus, string> = { success: 'Succeeded', failure: 'Failed', denied: 'Refused' };

interface Filter {
  action: string;
  status: '' | AuditStatus;
  period: number;
  user: string;
}

function who(e: AuditEvent): string {
  if (e.email) return e.email;
  if (e.actor === 'cli') return 'The command line';
  if (e.actor === 'system') return 'Coffer';
  return 'Not signed in';
}

/** The details as `name: value` pairs, for a table cell. */
function detailsText(details: AuditEvent['details']): string {
  if (!details) return '';
  return Object.entries(details)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

/** Admin → Audit log: who signed in or failed to, what was changed, shared or refused, newest first. */
export function AuditLog() {
  const [draft, setDraft] = useState<Filter>({ action: '', status: '', period: 0, user: '' });
  const [filter, setFilter] = useState<Filter>(draft);
  // The window's start fixed when the filter is chosen: counted again at each page, More events would read a window
  // that moved on since the first page, leaving out its oldest events.
  const since = useMemo(() => (filter.period ? new Date(Date.now() - filter.period).toISOString() : undefined), [filter]);
  const log = usePages(
    (cursor) =>
      api.admin.audit({
        cursor,
        action: filter.action || undefined,
        status: filter.status || undefined,
        user: filter.user.trim() || undefined,
        since,
      }),
    [filter],
  );
  const change = (part: Partial<Filter>) => {
    const next = { ...draft, ...part };
    setDraft(next);
    // The lists apply at once; the login field when it is submitted.
    if (!('user' in part)) setFilter(next);
  };
  const events = log.items ?? [];
  return (
    <Section
      title="Audit log"
      intro="Sign-ins and failed sign-ins, changes to accounts and settings, file and sharing actions and refused requests, newest first. Events are kept for AUDIT_RETENTION_DAYS (90 days unless set); coffer audit list reads the same log."
    >
      <form
        class="list-tools"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter(draft);
        }}
      >
        <Field label="What">
          <select value={draft.action} onChange={(e) => change({ action: e.currentTarget.value })}>
            <Options choices={GROUPS} />
          </select>
        </Field>
        <Field label="Outcome">
          <select value={draft.status} onChange={(e) => change({ status: e.currentTarget.value as Filter['status'] })}>
            <Options choices={OUTCOMES} />
          </select>
        </Field>
        <Field label="When">
          <select value={draft.period} onChange={(e) => change({ period: Number(e.currentTarget.value) })}>
            <Options choices={PERIODS} />
          </select>
        </Field>
        <Field label="Login" class="list-search">
          <input
            type="search"
            placeholder="Email, then Enter"
            maxLength={320}
            value={draft.user}
            onInput={(e) => change({ user: e.currentTarget.value })}
          />
        </Field>
        <button type="submit" class="button">
          Show
        </button>
      </form>
      {log.error && <LoadError message={log.error} retry={log.reload} />}
      {log.items && events.length === 0 && <p class="muted">No event matches.</p>}
      {events.length > 0 && (
        <TableWrap label="Audit events">
          <table class="table audit-table">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Outcome</th>
                <th scope="col">Who</th>
                <th scope="col">Address</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {events.map((e) => (
                <tr key={e.id}>
                  <td title={exactDate(e.at)}>{formatDate(e.at)}</td>
                  <td>
                    <code>{e.action}</code>
                    {e.targetType && <div class="muted small">{e.targetType}</div>}
                  </td>
                  <td class={e.status === 'success' ? undefined : 'run-failed'}>{OUTCOME_TEXT[e.status]}</td>
                  <td>{who(e)}</td>
                  <td>{e.ip ?? '—'}</td>
                  <td class="audit-details">{detailsText(e.details)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <MoreButton pages={log} label="More events" />
    </Section>
  );
}
