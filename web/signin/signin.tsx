import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { DISPLAY_NAME_MAX, MFA_CODE_MAX, PASSWORD, SETUP_CODE_MAX } from '../../src/contract/limits.ts';
import { api } from '../api/index.ts';
import { ApiError } from '../app/api.ts';
import type { SignupStatus } from '../../src/contract/accounts.ts';
import { passkeyAnswer, passkeyErrorText, passkeysAvailable } from '../app/passkeys.ts';
import { navigate, route } from '../app/router.ts';
import { retrySession, sessionError, signedIn, signInNotice, wantedPage } from '../app/session.ts';
import { ActionButton, EmailInput, Field, FormError, PasswordInput, SubmitButton } from '../ui/form.tsx';
import { Icon } from '../ui/icons.tsx';

/** The centred card of the sign-in pages, and of the pages a client's browser sign-in ends on. */
export function Card({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <main class="auth">
      <div class="auth-card">
        <div class="auth-brand">
          <span class="brand-mark" aria-hidden="true">
            <Icon name="folder" size={20} />
          </span>
          Coffer
        </div>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

function useSignupStatus() {
  const [status, setStatus] = useState<SignupStatus | null>(null);
  useEffect(() => {
    api.accounts.signupStatus().then(setStatus, () =>
      setStatus({
        signupEnabled: false,
        firstUser: false,
        setupCodeRequired: false,
        passwordLogin: true,
        idp: { enabled: false, name: null },
      }),
    );
  }, []);
  return status;
}

/** `path` with the page to return to after sign-in, when there is one (the shared rule of every `next`). */
const withNext = (path: string) => {
  const next = wantedPage();
  return next === '/' ? path : `${path}?next=${encodeURIComponent(next)}`;
};

/** What each `/login?error=<code>` from single sign-on means, in words that say what to do. */
const SIGN_ON_ERRORS: Record<string, (provider: string) => string> = {
  account_disabled: () => 'This account is disabled. Ask the administrator.',
  setup_code_required: () =>
    'Coffer has no account yet. The first account is the administrator: create it here with email, password and the setup code the server printed, then link single sign-on.',
  signup_disabled: (p) =>
    `No Coffer account belongs to your ${p} account, and sign-up is closed. Ask the administrator to create an account for you or to open sign-up.`,
  email_not_verified: (p) =>
    `An account with your email address already exists here, but ${p} has not verified that address, so it was not linked. Sign in with your password, or verify the address at ${p} first.`,
  email_unconfirmed: (p) =>
    `An account with your email address already exists here, but its address was not set by the administrator, so it was not linked to ${p}. Sign in with your password, or ask the administrator to confirm the address.`,
  account_linked: (p) => `The account with your email address is already linked to another ${p} account. Sign in with that one instead.`,
  email_missing: (p) => `${p} did not share an email address with Coffer. Ask its administrator to allow the email scope for Coffer.`,
  access_denied: (p) => `Sign-in was cancelled at ${p}.`,
  expired: () => 'The sign-in took too long or was started in another window. Please try again.',
  state_mismatch: () => "The answer to the sign-in did not match this browser's request, so you were not signed in. Please try again.",
  invalid_token: (p) =>
    `The answer from ${p} failed Coffer's security checks, so you were not signed in. The administrator can see why in the server log.`,
  provider_error: (p) => `${p} could not complete the sign-in. Try again, or ask the administrator to look at the server log.`,
  provider_unavailable: (p) => `${p} cannot be reached right now. Try again in a moment.`,
  not_configured: () => 'Single sign-on is not set up on this Coffer.',
};

function signOnErrorText(code: string, provider: string): string {
  return (SIGN_ON_ERRORS[code] ?? (() => 'Single sign-on did not complete. Please try again.'))(provider);
}

/** The way to the identity provider: a plain link, so the browser leaves for the provider's page. */
function ProviderButton({ status, verb }: { status: SignupStatus; verb: 'Sign in' | 'Sign up' }) {
  const next = wantedPage();
  const href = api.accounts.signOnUrl(next === '/' ? null : next);
  return (
    <a class="button primary block" href={href}>
      <Icon name="key" size={16} />
      {verb} with {status.idp.name}
    </a>
  );
}

/** "or" between the provider's button and the password form. */
const Or = () => (
  <p class="auth-or" aria-hidden="true">
    <span>or</span>
  </p>
);

export function SignIn() {
  const status = useSignupStatus();
  const query = route.value.query;
  // Single sign-on came back asking for the second step (the server holds it in an httpOnly cookie).
  const [step, setStep] = useState<'password' | 'code' | 'sign-on-code'>(query.get('mfa') === '1' ? 'sign-on-code' : 'password');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [signOnError, setSignOnError] = useState(query.get('error'));
  const [busy, setBusy] = useState(false);
  // The code step's 400 says whether the login has a passkey to use instead.
  const [passkeyOffered, setPasskeyOffered] = useState(false);
  const codeRef = useRef<HTMLInputElement>(null);
  const provider = status?.idp.name ?? 'your identity provider';

  useEffect(() => {
    if (status?.firstUser) navigate(withNext('/signup'), { replace: true });
  }, [status]);
  useEffect(() => {
    if (step !== 'password') codeRef.current?.focus();
  }, [step]);

  const toPasswordStep = () => {
    setStep('password');
    setCode('');
    setError(null);
    if (query.has('mfa')) navigate(withNext('/login'), { replace: true });
  };

  /** Runs one way of signing in; a refusal shows its message beside the form. */
  const attempt = async (work: () => Promise<void>, describe: (err: unknown) => string = (err) => (err as Error).message) => {
    setBusy(true);
    setError(null);
    setSignOnError(null);
    try {
      await work();
      await signedIn();
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };

  const withPasskey = () =>
    attempt(async () => {
      await api.passkeys.signIn(await passkeyAnswer());
    }, passkeyErrorText);

  const passkeyInsteadOfCode = () =>
    attempt(async () => {
      await api.accounts.login({ email, password, passkey: await passkeyAnswer() });
    }, passkeyErrorText);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSignOnError(null);
    try {
      if (step === 'sign-on-code') {
        await api.accounts.signOnVerify(code.trim());
      } else {
        await api.accounts.login({ email, password, ...(step === 'code' ? { mfaCode: code.trim() } : {}) });
      }
      await signedIn();
    } catch (err) {
      if (err instanceof ApiError && err.status === 400 && err.message === 'MFA code required') {
        setPasskeyOffered(err.body.passkey === true && passkeysAvailable());
        setStep('code');
      } else setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const offerProvider = status?.idp.enabled && step === 'password';
  const offerPassword = step !== 'password' || status?.passwordLogin !== false;
  const offerPasskey = step === 'password' && status?.passwordLogin !== false && passkeysAvailable();
  return (
    <Card title={step === 'password' ? 'Sign in' : 'Two-step verification'}>
      {signInNotice.value && step === 'password' && (
        <p class="notice" role="status">
          {signInNotice.value}
        </p>
      )}
      {signOnError && (
        <p class="notice error" role="alert">
          {signOnErrorText(signOnError, provider)}
        </p>
      )}
      {offerProvider && status && <ProviderButton status={status} verb="Sign in" />}
      {offerPasskey && (
        <ActionButton busy={busy} class="button block" onClick={withPasskey}>
          <Icon name="key" size={16} />
          Sign in with a passkey
        </ActionButton>
      )}
      {(offerProvider || offerPasskey) && offerPassword && <Or />}
      {!offerPassword && <p class="muted auth-hint">This Coffer signs people in through {provider} only.</p>}
      {offerPassword && (
        <form onSubmit={submit} class="auth-form">
          {step === 'password' ? (
            <>
              <Field label="Email">
                <EmailInput name="email" autoComplete="username" value={email} onValue={setEmail} autofocus={!offerProvider} />
              </Field>
              <Field label="Password">
                <PasswordInput purpose="current" name="password" value={password} onValue={setPassword} />
              </Field>
            </>
          ) : (
            <>
              <p class="muted">
                {step === 'sign-on-code' ? `${provider} has confirmed who you are. ` : ''}
                Enter the 6-digit code from your authenticator app
                {passkeyOffered ? ', or use your passkey' : ''}. Lost your phone? Use one of your backup codes instead.
              </p>
              <Field label="Authentication code">
                <input
                  ref={codeRef}
                  name="code"
                  autoComplete="one-time-code"
                  inputMode="text"
                  required
                  maxLength={MFA_CODE_MAX}
                  value={code}
                  onInput={(e) => setCode(e.currentTarget.value)}
                />
              </Field>
            </>
          )}
          <FormError message={error} />
          <SubmitButton busy={busy} class={`button block ${offerProvider ? '' : 'primary'}`}>
            Sign in
          </SubmitButton>
          {step === 'code' && passkeyOffered && (
            <ActionButton busy={busy} class="button block" onClick={passkeyInsteadOfCode}>
              <Icon name="key" size={16} />
              Use a passkey instead
            </ActionButton>
          )}
          {step !== 'password' && (
            <button type="button" class="button ghost block" onClick={toPasswordStep}>
              Use another account
            </button>
          )}
        </form>
      )}
      {status?.signupEnabled && step === 'password' && offerPassword && (
        <p class="auth-alt">
          New here? <a href={withNext('/signup')}>Create an account</a>
        </p>
      )}
    </Card>
  );
}

export function SignUp() {
  const status = useSignupStatus();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [setupCode, setSetupCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const needsCode = Boolean(status?.firstUser && status.setupCodeRequired);

  if (status && !status.signupEnabled) {
    return (
      <Card title="Sign-up is closed">
        <p>This Coffer does not accept new accounts. Ask its administrator to create one for you.</p>
        <p class="auth-alt">
          <a href={withNext('/login')}>Back to sign in</a>
        </p>
      </Card>
    );
  }
  return (
    <Card title={status?.firstUser ? 'Set up Coffer' : 'Create your account'}>
      {status?.firstUser && (
        <p class="notice" role="note">
          This is the first account on this Coffer: it becomes the <strong>administrator</strong>, and public sign-up closes once it exists
          (you can reopen it later).
        </p>
      )}
      {needsCode && (
        <p id="setup-code-hint" class="muted">
          To prove you run this server, enter the setup code it printed when it started. Run <code>coffer setup-code</code> on the server to
          see it again.
        </p>
      )}
      {status?.idp.enabled && <ProviderButton status={status} verb="Sign up" />}
      {status?.idp.enabled && status.passwordLogin && <Or />}
      {status?.passwordLogin !== false && (
        <form
          class="auth-form"
          onSubmit={async (e) => {
            e.preventDefault();
            setBusy(true);
            setError(null);
            try {
              await api.accounts.signup({
                email,
                password,
                ...(name.trim() ? { name: name.trim() } : {}),
                ...(needsCode ? { setupCode } : {}),
              });
              await signedIn();
            } catch (err) {
              setError((err as Error).message);
            } finally {
              setBusy(false);
            }
          }}
        >
          {needsCode && (
            <Field label="Setup code">
              <input
                name="setupCode"
                autoComplete="off"
                spellcheck={false}
                required
                maxLength={SETUP_CODE_MAX}
                aria-describedby="setup-code-hint"
                value={setupCode}
                onInput={(e) => setSetupCode(e.currentTarget.value)}
                autofocus
              />
            </Field>
          )}
          <Field label="Name">
            <input
              name="name"
              autoComplete="name"
              maxLength={DISPLAY_NAME_MAX}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
              autofocus={!needsCode}
            />
          </Field>
          <Field label="Email">
            <EmailInput name="email" autoComplete="username" value={email} onValue={setEmail} />
          </Field>
          <Field label="Password" hint={`At least ${PASSWORD.min} characters.`}>
            <PasswordInput purpose="new" name="password" value={password} onValue={setPassword} />
          </Field>
          <FormError message={error} />
          <SubmitButton busy={busy} class={`button block ${status?.idp.enabled ? '' : 'primary'}`}>
            Create account
          </SubmitButton>
        </form>
      )}
      {!status?.firstUser && (
        <p class="auth-alt">
          Already have an account? <a href={withNext('/login')}>Sign in</a>
        </p>
      )}
    </Card>
  );
}

/** The first session check failed: what went wrong and a way to try again, not a blank page. */
export function Unreachable() {
  const [busy, setBusy] = useState(false);
  return (
    <Card title="Coffer is not answering">
      <p role="alert">{sessionError.value}</p>
      <p>Try again in a moment; if this persists, tell whoever runs this Coffer.</p>
      <ActionButton
        busy={busy}
        class="button block"
        onClick={async () => {
          setBusy(true);
          await retrySession();
          setBusy(false);
        }}
      >
        Try again
      </ActionButton>
    </Card>
  );
}

export function DesktopOnly() {
  return (
    <Card title="Desktop app only">
      <p>
        This Coffer is configured for access from the Coffer desktop app only. Open your files there, or ask the administrator to allow
        browser access.
      </p>
    </Card>
  );
}
