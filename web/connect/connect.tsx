import { useEffect, useState } from 'preact/hooks';
import type { LoginFlowView } from '../../src/contract/accounts.ts';
import { api } from '../api/index.ts';
import { ApiError } from '../app/api.ts';
import { navigate } from '../app/router.ts';
import { profile, signOut } from '../app/session.ts';
import { Card } from '../signin/signin.tsx';
import { ConfirmIdentityField, type ConfirmKind, confirmAsked, proofOf } from '../ui/confirm-identity.tsx';
import { ActionButton, FormError, SubmitButton } from '../ui/form.tsx';

type Step =
  | { kind: 'loading' }
  | { kind: 'ask'; flow: LoginFlowView }
  | { kind: 'granted'; flow: LoginFlowView }
  | { kind: 'cancelled' }
  | { kind: 'gone'; message: string };

const errorText = (err: unknown) => (err instanceof Error ? err.message : 'Something went wrong. Please try again.');

/**
 * The consent page of a Nextcloud client's sign-in (login flows): after Coffer's own sign-in, it names the
 * client and asks. Granting makes an app password for it; a mobile app's web view then follows the
 * `nc://login/` address, a desktop client picks the password up on its next poll.
 */
export function ConnectClient({ token }: { token: string }) {
  const [step, setStep] = useState<Step>({ kind: 'loading' });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<ConfirmKind | null>(null);
  const [secret, setSecret] = useState('');
  useEffect(() => {
    api.devices.loginFlow(token).then(
      (flow) => setStep({ kind: 'ask', flow }),
      (err) => setStep({ kind: 'gone', message: errorText(err) }),
    );
  }, [token]);

  const answer = async (grant: boolean) => {
    if (step.kind !== 'ask') return;
    setBusy(true);
    setError(null);
    try {
      if (!grant) {
        await api.devices.cancelLoginFlow(token);
        setStep({ kind: 'cancelled' });
        return;
      }
      const { redirect } = await api.devices.grantLoginFlow(token, proofOf(confirm, secret));
      setStep({ kind: 'granted', flow: step.flow });
      if (redirect) location.href = redirect;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) setStep({ kind: 'gone', message: err.message });
      else {
        setConfirm(confirmAsked(err) ?? confirm);
        setError(errorText(err));
      }
    } finally {
      setBusy(false);
    }
  };

  // Signed in as someone else in this browser: sign out, then sign in again and come back to the question.
  const switchAccount = async () => {
    const here = location.pathname + location.search;
    await signOut();
    navigate(`/login?next=${encodeURIComponent(here)}`, { replace: true });
  };

  if (step.kind === 'loading') return <div class="splash" role="progressbar" aria-busy="true" aria-label="Loading the sign-in request" />;
  if (step.kind === 'gone')
    return (
      <Card title="Sign-in request not found">
        <p>{step.message}</p>
      </Card>
    );
  if (step.kind === 'cancelled')
    return (
      <Card title="Access not granted">
        <p>The app was not given access to your files. You can close this window.</p>
      </Card>
    );
  if (step.kind === 'granted')
    return (
      <Card title="Access granted">
        <p role="status">
          {step.flow.kind === 'v1'
            ? `Returning to ${step.flow.clientName}…`
            : `${step.flow.clientName} is signed in. You can close this window and return to the app.`}
        </p>
        <p class="muted">Its app password is listed in Settings → App passwords, where you can revoke it at any time.</p>
      </Card>
    );
  const account = profile.value?.email ?? '';
  return (
    <Card title="Connect an app">
      <p>
        <strong>{step.flow.clientName}</strong> asks for access to your Coffer files as <strong>{account}</strong>.
      </p>
      <p class="muted">
        It can read, change and delete your files as you can. It gets its own app password, listed in Settings → App passwords, where you
        can revoke it at any time. Grant access only if you just started signing in from this app.
      </p>
      {/* A form, so Enter in the password the server asks for grants access as a sign-in form would. */}
      <form
        class="auth-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void answer(true);
        }}
      >
        {confirm && <ConfirmIdentityField kind={confirm} value={secret} onValue={setSecret} />}
        <FormError message={error} />
        <div class="form-actions">
          <ActionButton busy={busy} onClick={() => void answer(false)}>
            Cancel
          </ActionButton>
          <SubmitButton busy={busy}>Grant access</SubmitButton>
        </div>
      </form>
      <p class="auth-alt">
        Not you?{' '}
        <ActionButton busy={busy} class="button ghost small" onClick={() => void switchAccount()}>
          Use another account
        </ActionButton>
      </p>
    </Card>
  );
}
