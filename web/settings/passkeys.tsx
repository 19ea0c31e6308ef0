import { useState } from 'preact/hooks';
import { PASSKEY_NAME_MAX } from '../../src/contract/limits.ts';
import type { PasskeyEntry } from '../../src/contract/passkeys.ts';
import { api } from '../api/index.ts';
import { exactDate, formatDate } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { createPasskey, passkeyErrorText, passkeysAvailable, passkeysChanged } from '../app/passkeys.ts';
import { profile, refreshSession } from '../app/session.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { Field, FormError, PasswordInput } from '../ui/form.tsx';
import { Icon } from '../ui/icons.tsx';
import { LoadError, Section } from '../ui/page.tsx';

/**
 * Passkeys: named, with their last use; added on this device, removed here. A passkey signs in on its own,
 * so adding one asks for the password again (a code of the second factor for an account without one).
 */
export function Passkeys() {
  const list = useLoad(api.passkeys.list);
  const [name, setName] = useState('');
  const [secret, setSecret] = useState('');
  const byPassword = profile.value?.signInMethods.includes('password') ?? true;
  const byCode = !byPassword && Boolean(profile.value?.mfaEnabled);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const available = passkeysAvailable();

  const add = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await createPasskey(name, byPassword ? { password: secret } : { code: secret });
      toast(name.trim() ? `Passkey “${name.trim()}” added` : 'Passkey added');
      setName('');
      setSecret('');
      passkeysChanged.value++;
      await Promise.all([list.reload(), refreshSession()]);
    } catch (err) {
      setError(passkeyErrorText(err));
    }
    setBusy(false);
  };

  const remove = async (p: PasskeyEntry) => {
    const ok = await confirmDialog({
      title: `Remove “${p.name}”?`,
      message: 'It will no longer sign you in to Coffer. Also delete it from the device or password manager that holds it.',
      confirm: 'Remove',
      danger: true,
    });
    if (!ok) return;
    try {
      await api.passkeys.remove(p.id);
      toast(`Removed “${p.name}”`);
    } catch (err) {
      toastError(err);
    }
    passkeysChanged.value++;
    await Promise.all([list.reload(), refreshSession()]);
  };

  const passkeys = list.data?.passkeys ?? [];
  return (
    <Section
      title="Passkeys"
      intro="Sign in with your fingerprint, face, device PIN or a security key instead of typing a password. With two-factor authentication on, a passkey also replaces the code."
    >
      {list.error && <LoadError message={list.error} retry={list.reload} />}
      {list.data && passkeys.length === 0 && <p class="muted">No passkeys yet.</p>}
      {passkeys.length > 0 && (
        <ul class="entries" aria-label="Passkeys">
          {passkeys.map((p) => (
            <li key={p.id} class="entry" aria-label={p.name}>
              <div class="entry-main">
                <span class="entry-title">
                  {p.name}
                  {p.backedUp && <span class="pill ok">Synced</span>}
                </span>
                <span class="muted small">
                  <span title={exactDate(p.createdAt)}>added {formatDate(p.createdAt).toLowerCase()}</span> ·{' '}
                  {p.lastUsedAt ? (
                    <span title={exactDate(p.lastUsedAt)}>last used {formatDate(p.lastUsedAt).toLowerCase()}</span>
                  ) : (
                    'never used'
                  )}
                </span>
              </div>
              <button type="button" class="button small" onClick={() => remove(p)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {available && !byPassword && !byCode ? (
        <p class="notice" role="note">
          Adding a passkey asks for your password or a code from your authenticator app, and this account has neither. Turn on two-factor
          authentication first.
        </p>
      ) : available ? (
        <form noValidate class="form passkey-add" onSubmit={add}>
          <Field label="Passkey name" hint="Optional: which device or key it is, such as “Work laptop” or “YubiKey”.">
            <input type="text" maxLength={PASSKEY_NAME_MAX} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          {byPassword ? (
            <Field label="Your password" hint="A passkey signs you in on its own, so Coffer checks it is you first.">
              <PasswordInput purpose="current" value={secret} onValue={setSecret} />
            </Field>
          ) : (
            <Field
              label="Authenticator or backup code"
              hint="A passkey signs you in on its own, so Coffer checks it is you first: a code from your authenticator app or a backup code."
            >
              <input autoComplete="one-time-code" required maxLength={9} value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />
            </Field>
          )}
          <FormError message={error} />
          <div class="form-actions">
            <button type="submit" class="button primary" disabled={busy}>
              <Icon name="key" size={16} />
              Add a passkey
            </button>
          </div>
        </form>
      ) : (
        <p class="notice" role="note">
          This browser cannot add passkeys at {location.host}. Passkeys need HTTPS with a host name (or http://localhost on the server
          itself), never an address such as 192.168.1.5, and a current browser.
        </p>
      )}
    </Section>
  );
}
