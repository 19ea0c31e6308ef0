import { useState } from 'preact/hooks';
import { PASSWORD } from '../../src/contract/limits.ts';
import { api } from '../api/index.ts';
import { formatDate } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { passkeysChanged } from '../app/passkeys.ts';
import { instance, passwordSignIn, profile, providerName, toSignIn } from '../app/session.ts';
import { Field, FormError, PasswordInput, SubmitButton } from '../ui/form.tsx';
import { Section } from '../ui/page.tsx';

/**
 * Change password: the server signs every session out, this one included, and the page says so. An
 * account made through single sign-on has no password to change (the server answers 400), and under
 * OIDC_DISABLE_PASSWORD_LOGIN no password signs in: either way the section says why instead.
 */
export function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [revokeDevices, setRevokeDevices] = useState(false);
  const [removePasskeys, setRemovePasskeys] = useState(false);
  if (profile.value && !profile.value.signInMethods.includes('password')) {
    const via = providerName.value ?? 'single sign-on';
    return (
      <Section title="Password">
        <p>
          This account has no Coffer password: you sign in through {via}, which keeps your password, so change it there. If you also want to
          sign in to Coffer with a password, ask the administrator of this Coffer to set one for you.
        </p>
      </Section>
    );
  }
  if (!passwordSignIn.value) {
    return (
      <Section title="Password">
        <p>
          This Coffer signs people in through {providerName.value ?? 'single sign-on'} only, so a Coffer password is not used to sign in and
          there is nothing to change here.
        </p>
      </Section>
    );
  }
  if (instance.value && !instance.value.allowPasswordChange) {
    return (
      <Section title="Password">
        <p>
          The administrator of this Coffer has turned off password changes, so there is no form here. If you need a new password, ask them
          to set one for you.
        </p>
      </Section>
    );
  }
  const problem = () => {
    if (next.length < PASSWORD.min) return `The new password must be at least ${PASSWORD.min} characters.`;
    if (next.length > PASSWORD.max) return `The new password must be at most ${PASSWORD.max} characters.`;
    if (next === current) return 'The new password must differ from the current one.';
    if (repeat !== next) return 'The two new passwords are not the same.';
    return null;
  };
  return (
    <Section
      title="Password"
      intro="Changing your password signs you out everywhere, this browser included; you then sign in with the new one."
    >
      <form
        noValidate
        class="form"
        onSubmit={async (e) => {
          e.preventDefault();
          const bad = problem();
          if (bad) return setError(bad);
          setBusy(true);
          setError(null);
          try {
            await api.accounts.changePassword({
              oldPassword: current,
              newPassword: next,
              revokeAppPasswords: revokeDevices,
              removePasskeys,
            });
            toSignIn(
              `Your password was changed and every session was signed out, this one included.${removePasskeys ? ' Your passkeys were removed.' : ''} Sign in with your new password.`,
            );
          } catch (err) {
            setError((err as Error).message);
            setBusy(false);
          }
        }}
      >
        <Field label="Current password">
          <PasswordInput purpose="current" value={current} onValue={setCurrent} />
        </Field>
        <Field label="New password" hint={`At least ${PASSWORD.min} characters.`}>
          <PasswordInput purpose="new" value={next} onValue={setNext} />
        </Field>
        <Field label="Repeat new password">
          <PasswordInput purpose="new" min={0} value={repeat} onValue={setRepeat} />
        </Field>
        <label class="checkbox">
          <input type="checkbox" checked={revokeDevices} onChange={(e) => setRevokeDevices(e.currentTarget.checked)} />
          Also revoke app passwords (drives and apps connected over WebDAV)
        </label>
        <PasskeysToRemove key={passkeysChanged.value} checked={removePasskeys} onChange={setRemovePasskeys} />
        <FormError message={error} />
        <div class="form-actions">
          <SubmitButton busy={busy}>Change password</SubmitButton>
        </div>
      </form>
    </Section>
  );
}

/**
 * The login's passkeys, which sign in without the password: a new password leaves them working, so the
 * form lists them and offers to remove them with the change (one added by someone else, say).
 */
function PasskeysToRemove({ checked, onChange }: { checked: boolean; onChange: (remove: boolean) => void }) {
  const list = useLoad(api.passkeys.list);
  const passkeys = list.data?.passkeys ?? [];
  if (passkeys.length === 0) return null;
  return (
    <div>
      <p id="passkeys-still-sign-in">These passkeys sign in without your password, so they keep working after the change:</p>
      <ul aria-labelledby="passkeys-still-sign-in">
        {passkeys.map((p) => (
          <li key={p.id}>
            {p.name} <span class="muted small">(added {formatDate(p.createdAt).toLowerCase()})</span>
          </li>
        ))}
      </ul>
      <label class="checkbox">
        <input type="checkbox" checked={checked} onChange={(e) => onChange(e.currentTarget.checked)} />
        Also remove {passkeys.length === 1 ? 'this passkey' : `these ${passkeys.length} passkeys`}
      </label>
    </div>
  );
}
