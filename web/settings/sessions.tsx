import { useState } from 'preact/hooks';
import { api } from '../api/index.ts';
import type { Session } from '../../src/contract/accounts.ts';
import { exactDate, formatDate, plural } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { toSignIn } from '../app/session.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { LoadError, Section } from '../ui/page.tsx';
import { describeAgent } from './user-agent.ts';

/** Where this login is signed in: each browser or app, whether it is there now, and revoking it. */
export function Sessions() {
  // refreshIp: the server otherwise answers from a list cached for two minutes. Presence changes as
  // other devices come and go, so the list is read again while it is open.
  const list = useLoad(api.sessions.list, { everyMs: 30_000 });
  const sessions = list.data?.sessions ?? [];
  const others = sessions.filter((s) => !s.isCurrent);
  const [revokeDevices, setRevokeDevices] = useState(false);

  const revoke = async (s: Session) => {
    try {
      await api.sessions.revoke(s.id);
      toast(`Signed out ${describeAgent(s.user_agent)}`);
    } catch (err) {
      toastError(err);
    }
    await list.reload();
  };

  return (
    <>
      <Section title="Sessions" intro="Every browser and app signed in as you. Online means it was open in the last three minutes.">
        {list.error && <LoadError message={list.error} retry={list.reload} />}
        {list.data && (
          <ul class="entries" aria-label="Sessions">
            {sessions.map((s) => {
              const device = describeAgent(s.user_agent);
              // This browser is here now, whether or not its first heartbeat has been counted yet.
              const online = s.is_online || s.isCurrent;
              return (
                <li key={s.id} class="entry">
                  <div class="entry-main">
                    <span class="entry-title">
                      {device}
                      {s.isCurrent && <span class="pill accent">Current</span>}
                      <span class={`pill ${online ? 'ok' : ''}`}>
                        <span class={`dot ${online ? 'on' : ''}`} aria-hidden="true" />
                        {online ? 'Online' : 'Offline'}
                      </span>
                    </span>
                    <span class="muted small">
                      {s.ip_address || 'address unknown'} ·{' '}
                      <span title={exactDate(s.last_activity)}>active {formatDate(s.last_activity).toLowerCase()}</span> ·{' '}
                      <span title={exactDate(s.created_at)}>signed in {formatDate(s.created_at).toLowerCase()}</span>
                    </span>
                  </div>
                  {!s.isCurrent && (
                    <button type="button" class="button small" onClick={() => revoke(s)}>
                      Revoke
                    </button>
                  )}
                </li>
              );
            })}
          </ul>
        )}
      </Section>
      <Section title="Sign out elsewhere">
        <label class="checkbox">
          <input type="checkbox" checked={revokeDevices} onChange={(e) => setRevokeDevices(e.currentTarget.checked)} />
          When signing out everywhere, also revoke app passwords (drives and apps connected over WebDAV)
        </label>
        <div class="form-actions">
          <button
            type="button"
            class="button"
            disabled={!others.length}
            onClick={async () => {
              const ok = await confirmDialog({
                title: 'Sign out other sessions?',
                message: `${plural(others.length, 'other session')} will be signed out and must sign in again. This browser stays signed in.`,
                confirm: 'Sign out other sessions',
                danger: true,
              });
              if (!ok) return;
              try {
                const r = await api.sessions.revokeOthers();
                toast(`Signed out ${plural(r.deletedCount, 'other session')}`);
              } catch (err) {
                toastError(err);
              }
              await list.reload();
            }}
          >
            Sign out other sessions
          </button>
          <button
            type="button"
            class="button danger-ghost"
            onClick={async () => {
              const ok = await confirmDialog({
                title: 'Sign out everywhere?',
                message: `Every session (${plural(sessions.length, 'session')}), this browser included, is signed out at once.`,
                confirm: 'Sign out everywhere',
                danger: true,
              });
              if (!ok) return;
              try {
                await api.accounts.logoutAll({ revokeAppPasswords: revokeDevices });
                toSignIn('You were signed out everywhere. Sign in again to continue.');
              } catch (err) {
                toastError(err);
              }
            }}
          >
            Sign out everywhere
          </button>
        </div>
      </Section>
    </>
  );
}
