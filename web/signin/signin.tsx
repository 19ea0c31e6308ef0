import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../app/api.ts';
import type { SignupStatus } from '../app/api-types.ts';
import { navigate, route } from '../app/router.ts';
import { signedIn, signInNotice } from '../app/session.ts';
import { Icon } from '../ui/icons.tsx';

function Card({ title, children }: { title: string; children: ComponentChildren }) {
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
    api<SignupStatus>('/api/signup-status', { anonymous: true }).then(setStatus, () =>
      setStatus({ signupEnabled: false, firstUser: false }),
    );
  }, []);
  return status;
}

const keepNext = (path: string) => {
  const next = route.value.query.get('next');
  return next ? `${path}?next=${encodeURIComponent(next)}` : path;
};

export function SignIn() {
  const status = useSignupStatus();
  const [step, setStep] = useState<'password' | 'code'>('password');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const codeRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (status?.firstUser) navigate(keepNext('/signup'), { replace: true });
  }, [status]);
  useEffect(() => {
    if (step === 'code') codeRef.current?.focus();
  }, [step]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('/api/login', {
        method: 'POST',
        anonymous: true,
        body: { email, password, ...(step === 'code' ? { mfaCode: code.trim() } : {}) },
      });
      await signedIn();
    } catch (err) {
      if (err instanceof ApiError && err.status === 400 && err.message === 'MFA code required') {
        setStep('code');
      } else setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card title={step === 'code' ? 'Two-step verification' : 'Sign in'}>
      {signInNotice.value && step === 'password' && (
        <p class="notice" role="status">
          {signInNotice.value}
        </p>
      )}
      <form onSubmit={submit} class="auth-form">
        {step === 'password' ? (
          <>
            <label class="field">
              <span>Email</span>
              <input
                type="email"
                name="email"
                autoComplete="username"
                required
                value={email}
                onInput={(e) => setEmail(e.currentTarget.value)}
                autofocus
              />
            </label>
            <label class="field">
              <span>Password</span>
              <input
                type="password"
                name="password"
                autoComplete="current-password"
                required
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </label>
          </>
        ) : (
          <>
            <p class="muted">Enter the 6-digit code from your authenticator app. Lost your phone? Use one of your backup codes instead.</p>
            <label class="field">
              <span>Authentication code</span>
              <input
                ref={codeRef}
                name="code"
                autoComplete="one-time-code"
                inputMode="text"
                required
                maxLength={16}
                value={code}
                onInput={(e) => setCode(e.currentTarget.value)}
              />
            </label>
          </>
        )}
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="button primary block" disabled={busy}>
          Sign in
        </button>
        {step === 'code' && (
          <button
            type="button"
            class="button ghost block"
            onClick={() => {
              setStep('password');
              setCode('');
              setError(null);
            }}
          >
            Use another account
          </button>
        )}
      </form>
      {status?.signupEnabled && step === 'password' && (
        <p class="auth-alt">
          New here? <a href={keepNext('/signup')}>Create an account</a>
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
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (status && !status.signupEnabled) {
    return (
      <Card title="Sign-up is closed">
        <p>This Coffer does not accept new accounts. Ask its administrator to create one for you.</p>
        <p class="auth-alt">
          <a href={keepNext('/login')}>Back to sign in</a>
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
      <form
        class="auth-form"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            await api('/api/signup', {
              method: 'POST',
              anonymous: true,
              body: { email, password, ...(name.trim() ? { name: name.trim() } : {}) },
            });
            await signedIn();
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label class="field">
          <span>Name</span>
          <input name="name" autoComplete="name" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} autofocus />
        </label>
        <label class="field">
          <span>Email</span>
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            maxLength={254}
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label class="field">
          <span>Password</span>
          <input
            type="password"
            name="password"
            autoComplete="new-password"
            required
            minLength={6}
            maxLength={128}
            aria-describedby="password-hint"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
          <small id="password-hint" class="muted">
            At least 6 characters.
          </small>
        </label>
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="button primary block" disabled={busy}>
          Create account
        </button>
      </form>
      {!status?.firstUser && (
        <p class="auth-alt">
          Already have an account? <a href={keepNext('/login')}>Sign in</a>
        </p>
      )}
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
