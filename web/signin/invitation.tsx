import { useEffect, useState } from 'preact/hooks';
import { DISPLAY_NAME_MAX, PASSWORD } from '../../src/contract/limits.ts';
import type { InvitationView } from '../../src/contract/admin.ts';
import { api } from '../api/index.ts';
import { exactDate } from '../app/format.ts';
import { navigate } from '../app/router.ts';
import { profile, signedIn } from '../app/session.ts';
import { Field, FormError, PasswordInput, SubmitButton } from '../ui/form.tsx';
import { Card } from './signin.tsx';

export const INVITATION_PATH = '/invite';

/** The page an invitation link opens (`/invite#<token>`): the invitee chooses a password and is signed in. */
export function AcceptInvitation() {
  // The token rides in the fragment, which the browser never sends.
  const [token] = useState(() => location.hash.slice(1));
  const [invitation, setInvitation] = useState<InvitationView | null>(null);
  const [refused, setRefused] = useState<string | null>(
    token ? null : 'This link has no invitation in it: open the whole link you were sent.',
  );
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!token) return;
    api.accounts.viewInvitation(token).then(
      (v) => {
        setInvitation(v);
        setName(v.name);
      },
      (err) => setRefused((err as Error).message),
    );
  }, [token]);

  if (refused) {
    return (
      <Card title="This invitation cannot be used">
        <p role="alert">{refused}</p>
        <p class="auth-alt">
          <a href="/login">Go to sign in</a>
        </p>
      </Card>
    );
  }
  if (!invitation) return <Card title="Join Coffer">{<p aria-busy="true">Opening your invitation…</p>}</Card>;
  const signedInAs = profile.value?.email;
  return (
    <Card title="Join Coffer">
      <p>
        You were invited to Coffer as <strong>{invitation.email}</strong>. Choose a password to finish creating your account. This link
        works once, until {exactDate(invitation.expiresAt)}.
      </p>
      {signedInAs && (
        <p class="notice" role="note">
          This browser is signed in as {signedInAs}. Creating this account signs it in as {invitation.email} instead.
        </p>
      )}
      <form
        class="auth-form"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            await api.accounts.acceptInvitation({ token, password, ...(name.trim() ? { name: name.trim() } : {}) });
            await signedIn();
            navigate('/', { replace: true });
          } catch (err) {
            setError((err as Error).message);
            setBusy(false);
          }
        }}
      >
        <Field label="Email">
          <input type="email" name="email" autoComplete="username" readOnly value={invitation.email} />
        </Field>
        <Field label="Name">
          <input
            name="name"
            autoComplete="name"
            maxLength={DISPLAY_NAME_MAX}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </Field>
        <Field label="Password" hint={`At least ${PASSWORD.min} characters.`}>
          <PasswordInput purpose="new" name="password" value={password} onValue={setPassword} autofocus />
        </Field>
        <FormError message={error} />
        <SubmitButton busy={busy} class="button block primary">
          Create account
        </SubmitButton>
      </form>
    </Card>
  );
}
