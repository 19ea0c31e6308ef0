import { useState } from 'preact/hooks';
import { PASSKEY_NAME_MAX } from '../../src/contract/limits.ts';
import type { PasskeyEntry } from '../../src/contract/passkeys.ts';
import { api } from '../api/index.ts';
import { useLoad } from '../app/load.ts';
import { createPasskey, passkeyErrorText, passkeysAvailable, passkeysChanged } from '../app/passkeys.ts';
import { profile, refreshSession } from '../app/session.ts';
import { toast } from '../app/toasts.ts';
import { Field, FormError, PasswordInput, SubmitButton } from '../ui/form.tsx';
import { Icon } from '../ui/icons.tsx';
import { Section } from '../ui/page.tsx';
import { CredentialList, removeEntry, When } from './credential-list.tsx';

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

  const remove = (p: PasskeyEntry) =>
    removeEntry({
      confirm: {
        title: `Remove “${p.name}”?`,
        message: 'It will no longer sign you in to Coffer. Also delete it from the device or password manager that holds it.',
        confirm: 'Remove',
        danger: true,
      },
      call: () => api.passkeys.remove(p.id),
      done: `Removed “${p.name}”`,
      reload: () => {
        passkeysChanged.value++;
        return Promise.all([list.reload(), refreshSession()]);
      },
    });

  const passkeys = list.data?.passkeys ?? [];
  return (
    <Section
      title="Passkeys"
      intro="Sign in with your fingerprint, face, device PIN or a security key instead of typing a password. With two-factor authentication on, a passkey also replaces the code."
    >
      <CredentialList
        label="Passkeys"
        list={list}
        entries={passkeys}
        keyOf={(p) => p.id}
        empty="No passkeys yet."
        entryName={(p) => p.name}
        title={(p) => (
          <>
            {p.name}
            {p.backedUp && <span class="pill ok">Synced</span>}
          </>
        )}
        facts={(p) => (
          <>
            <When words="added" at={p.createdAt} /> · {p.lastUsedAt ? <When words="last used" at={p.lastUsedAt} /> : 'never used'}
          </>
        )}
        action={(p) => ({ label: 'Remove', run: () => void remove(p) })}
      />
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
            <SubmitButton busy={busy}>
              <Icon name="key" size={16} />
              Add a passkey
            </SubmitButton>
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
