import { useState } from 'preact/hooks';
import { api } from '../api/index.ts';
import type { Session } from '../../src/contract/accounts.ts';
import { formatDate, plural } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { toSignIn } from '../app/session.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { Section } from '../ui/page.tsx';
import { CredentialList, removeEntry, When } from './credential-list.tsx';
import { describeAgent } from './user-agent.ts';

/** Where this login is signed in: each browser or app, whether it is there now, and revoking it. */
export function Sessions() {
  // refreshIp: the server otherwise answers from a list cached for two minutes. Presence changes as
  // other devices come and go, so the list is read again while it is open.
  const list = useLoad(api.sessions.list, { everyMs: 30_000 });
  const sessions = list.data?.sessions ?? [];
  const others = sessions.filter((s) => !s.isCurrent);
  const [revokeDevices, setRevokeDevices] = useState(false);

  const revoke = (s: Session) =>
    removeEntry({ call: () => api.sessions.revoke(s.id), done: `Signed out ${describeAgent(s.user_agent)}`, reload: list.reload });

  return (
    <>
      <Section title="Sessions" intro="Every browser and app signed in as you. Online means it was open in the last three minutes.">
        <CredentialList
          label="Sessions"
          list={list}
          entries={sessions}
          keyOf={(s) => s.id}
          entryName={(s) =>
            `${describeAgent(s.user_agent)}${s.isCurrent ? ' (this browser)' : ''}, ${s.ip_address || 'address unknown'}, active ${formatDate(s.last_activity).toLowerCase()}`
          }
          title={(s) => {
            // This browser is here now, whether or not its first heartbeat has been counted yet.
            const online = s.is_online || s.isCurrent;
            return (
              <>
                {describeAgent(s.user_agent)}
                {s.isCurrent && <span class="pill accent">Current</span>}
                <span class={`pill ${online ? 'ok' : ''}`}>
                  <span class={`dot ${online ? 'on' : ''}`} aria-hidden="true" />
                  {online ? 'Online' : 'Offline'}
                </span>
              </>
            );
          }}
          facts={(s) => (
            <>
              {s.ip_address || 'address unknown'} · <When words="active" at={s.last_activity} /> ·{' '}
              <When words="signed in" at={s.created_at} />
            </>
          )}
          action={(s) => (s.isCurrent ? null : { label: 'Revoke', run: () => void revoke(s) })}
        />
        {/* Beside the list it acts on, where one looks after reading who else is signed in. */}
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
        </div>
      </Section>
      <Section title="Sign out everywhere">
        <label class="checkbox">
          <input type="checkbox" checked={revokeDevices} onChange={(e) => setRevokeDevices(e.currentTarget.checked)} />
          When signing out everywhere, also revoke app passwords (drives and apps connected over WebDAV)
        </label>
        <div class="form-actions">
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
