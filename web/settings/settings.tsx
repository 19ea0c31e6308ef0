import { theme, viewMode } from '../app/prefs.ts';
import { isSubUser, profile, signOut } from '../app/session.ts';
import { exactDate } from '../app/format.ts';
import { openShortcuts } from '../palette/shortcuts.tsx';

/** Settings: this browser's preferences and the signed-in account (security and admin screens come next). */
export function Settings() {
  const p = profile.value;
  return (
    <div class="settings">
      <h1>Settings</h1>
      <section class="card" aria-labelledby="appearance">
        <h2 id="appearance">Appearance</h2>
        <fieldset class="radio-row">
          <legend>Theme</legend>
          {(['system', 'light', 'dark'] as const).map((t) => (
            <label key={t} class="radio">
              <input type="radio" name="theme" checked={theme.value === t} onChange={() => (theme.value = t)} />
              <span>{t === 'system' ? 'Same as the system' : t === 'light' ? 'Light' : 'Dark'}</span>
            </label>
          ))}
        </fieldset>
        <fieldset class="radio-row">
          <legend>Show files as</legend>
          {(['list', 'grid'] as const).map((m) => (
            <label key={m} class="radio">
              <input type="radio" name="view" checked={viewMode.value === m} onChange={() => (viewMode.value = m)} />
              <span>{m === 'list' ? 'List' : 'Grid'}</span>
            </label>
          ))}
        </fieldset>
        <p>
          <button type="button" class="button" onClick={openShortcuts}>
            Keyboard shortcuts
          </button>
        </p>
      </section>
      {p && (
        <section class="card" aria-labelledby="account">
          <h2 id="account">Account</h2>
          <dl class="info-list">
            <dt>Name</dt>
            <dd>{p.name || '—'}</dd>
            <dt>Email</dt>
            <dd>{p.email}</dd>
            <dt>Type</dt>
            <dd>{isSubUser.value ? 'Sub-user: works on the account owner’s files with the permissions granted' : 'Account owner'}</dd>
            <dt>Two-step verification</dt>
            <dd>{p.mfaEnabled ? 'On' : 'Off'}</dd>
            <dt>Member since</dt>
            <dd>{exactDate(p.createdAt)}</dd>
          </dl>
          <button type="button" class="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </section>
      )}
    </div>
  );
}
