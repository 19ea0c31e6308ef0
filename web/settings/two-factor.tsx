import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/index.ts';
import { ApiError } from '../app/api.ts';
import { formatDuration } from '../app/format.ts';
import { profile, refreshSession } from '../app/session.ts';
import { toast, toastError } from '../app/toasts.ts';
import { copyText, downloadText } from '../ui/copy.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { ActionButton, Field, FormError, SubmitButton } from '../ui/form.tsx';
import { Section } from '../ui/page.tsx';

type Stage =
  | { step: 'idle' }
  | { step: 'setup'; secret: string; qrCode: string }
  | { step: 'codes'; codes: string[]; fresh: boolean }
  | { step: 'disable' };

// The server's own shapes for codes (docs/compatibility.md › Two-factor: a 6-digit TOTP, or an 8-character backup code).
const TOTP = /^\d{6}$/;
const BACKUP = /^[A-Za-z0-9]{4}-?[A-Za-z0-9]{4}$/;

/** The secret in groups of four, as authenticator apps show keys typed by hand. */
const grouped = (secret: string) => secret.replace(/(.{4})/g, '$1 ').trim();

/** Asked after MFA changes while other sessions exist (the server's `shouldPromptSessions`). */
function SessionsPrompt({ done }: { done: () => void }) {
  return (
    <div class="notice prompt" role="note">
      <p>You are also signed in on other devices or browsers. Sign them out now? Each will have to sign in again, with the new settings.</p>
      <div class="form-actions">
        <button
          type="button"
          class="button primary"
          onClick={async () => {
            try {
              const r = await api.sessions.revokeOthers();
              toast(`Signed out ${r.deletedCount} other session${r.deletedCount === 1 ? '' : 's'}`);
              done();
            } catch (err) {
              toastError(err);
            }
          }}
        >
          Sign out other sessions
        </button>
        <button type="button" class="button" onClick={done}>
          Keep them signed in
        </button>
      </div>
    </div>
  );
}

function BackupCodes({ codes, fresh, done }: { codes: string[]; fresh: boolean; done: () => void }) {
  const text = `Coffer backup codes for ${profile.value?.email ?? 'your account'}\nEach code signs in once, in place of an authenticator code.\n\n${codes.join('\n')}\n`;
  return (
    <div class="backup-codes">
      <p>
        <strong>{fresh ? 'Two-factor authentication is on.' : 'Your new backup codes.'}</strong> Save these backup codes somewhere safe:
        each one signs you in once if you lose your authenticator. They are shown only now
        {fresh ? '' : ', and the earlier codes no longer work'}.
      </p>
      <ol class="codes" aria-label="Backup codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ol>
      <div class="form-actions">
        <button type="button" class="button" onClick={() => copyText(codes.join('\n'), 'Backup codes copied')}>
          Copy
        </button>
        <button type="button" class="button" onClick={() => downloadText(text, 'coffer-backup-codes.txt')}>
          Download
        </button>
        <button type="button" class="button primary" onClick={done}>
          I have saved them
        </button>
      </div>
    </div>
  );
}

/** Turning two-factor authentication on and off, and the backup codes. */
export function TwoFactor() {
  const enabled = profile.value?.mfaEnabled ?? false;
  const [stage, setStage] = useState<Stage>({ step: 'idle' });
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [left, setLeft] = useState<number | null>(null);
  const [askSessions, setAskSessions] = useState(false);
  const [wait, setWait] = useState<number | null>(null);

  useEffect(() => {
    if (!enabled || stage.step === 'codes') return;
    api.mfa.backupCodeCount().then(
      (r) => setLeft(r.count),
      () => setLeft(null),
    );
  }, [enabled, stage.step]);

  const reset = () => {
    setStage({ step: 'idle' });
    setCode('');
    setError(null);
  };

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const codeField = (hint: string, pattern: RegExp, problem: string, submit: (code: string) => Promise<void>, label: string) => (
    <form
      noValidate
      class="form"
      onSubmit={(e) => {
        e.preventDefault();
        const c = code.trim();
        if (!pattern.test(c)) return setError(problem);
        void run(() => submit(c));
      }}
    >
      <Field label="Authentication code" hint={hint}>
        <input
          autoComplete="one-time-code"
          inputMode={pattern === TOTP ? 'numeric' : 'text'}
          required
          maxLength={9}
          value={code}
          onInput={(e) => setCode(e.currentTarget.value)}
          autofocus
        />
      </Field>
      <FormError message={error} />
      <div class="form-actions">
        <SubmitButton busy={busy} class={`button ${stage.step === 'disable' ? 'danger' : 'primary'}`}>
          {label}
        </SubmitButton>
        <button type="button" class="button" onClick={reset}>
          Cancel
        </button>
      </div>
    </form>
  );

  let body;
  if (stage.step === 'codes') {
    body = (
      <BackupCodes
        codes={stage.codes}
        fresh={stage.fresh}
        done={() => {
          reset();
          setWait(null);
        }}
      />
    );
  } else if (stage.step === 'setup') {
    body = (
      <div class="mfa-setup">
        <ol class="steps">
          <li>
            <p>Scan this code with an authenticator app (such as Aegis, Google Authenticator or 1Password).</p>
            <img class="qr" src={stage.qrCode} alt="QR code for your authenticator app" width={180} height={180} />
            <p>
              Or type this key into the app:{' '}
              <code class="secret" aria-label="Secret key">
                {grouped(stage.secret)}
              </code>
            </p>
          </li>
          <li>
            <p>Enter the 6-digit code the app shows now.</p>
            {codeField(
              'The code changes every 30 seconds.',
              TOTP,
              'Enter the 6-digit code from your authenticator app',
              async (c) => {
                const r = await api.mfa.verify(c);
                await refreshSession();
                setStage({ step: 'codes', codes: r.backupCodes, fresh: true });
                setAskSessions(r.shouldPromptSessions);
                setCode('');
              },
              'Verify',
            )}
          </li>
        </ol>
      </div>
    );
  } else if (stage.step === 'disable') {
    body = codeField(
      'A code from your authenticator app, or one of your backup codes.',
      new RegExp(`${TOTP.source}|${BACKUP.source}`),
      'Enter a 6-digit code or an 8-character backup code',
      async (c) => {
        const r = await api.mfa.disable(c);
        await refreshSession();
        reset();
        setAskSessions(r.shouldPromptSessions);
        toast('Two-factor authentication is off');
      },
      'Disable two-factor authentication',
    );
  } else if (!enabled) {
    body = (
      <>
        <p>Off. With it on, signing in also asks for a code from an app on your phone, so a stolen password alone is not enough.</p>
        <FormError message={error} />
        <ActionButton
          busy={busy}
          class="button primary"
          onClick={() =>
            run(async () => {
              const r = await api.mfa.setup();
              setStage({ step: 'setup', ...r });
            })
          }
        >
          Enable two-factor authentication
        </ActionButton>
      </>
    );
  } else {
    body = (
      <TwoFactorOn
        left={left}
        wait={wait}
        error={error}
        busy={busy}
        regenerate={() =>
          run(async () => {
            try {
              const r = await api.mfa.regenerateBackupCodes();
              setWait(null);
              setStage({ step: 'codes', codes: r.backupCodes, fresh: false });
            } catch (err) {
              const ms = err instanceof ApiError ? Number(err.body.retryAfterMs) : Number.NaN;
              if (!Number.isFinite(ms)) throw err;
              setWait(ms);
            }
          })
        }
        disable={() => setStage({ step: 'disable' })}
      />
    );
  }
  return (
    <Section title="Two-factor authentication" id="two-factor">
      {body}
      {askSessions && <SessionsPrompt done={() => setAskSessions(false)} />}
    </Section>
  );
}

/** Two-factor on: how many backup codes are left, making new ones (asked first) and turning it off. */
function TwoFactorOn(p: {
  left: number | null;
  /** Milliseconds until new backup codes may be made again, after the server refused. */
  wait: number | null;
  error: string | null;
  busy: boolean;
  regenerate: () => Promise<void>;
  disable: () => void;
}) {
  const { left, wait } = p;
  return (
    <>
      <p>
        On. Signing in asks for a code from your authenticator app.{' '}
        {left !== null && (
          <span>{left === 0 ? 'No backup codes left: make new ones.' : `${left} unused backup code${left === 1 ? '' : 's'} left.`}</span>
        )}
      </p>
      {wait !== null && (
        <p class="field-error" role="alert">
          New backup codes can be made again in {formatDuration(wait / 1000)}, at{' '}
          {new Date(Date.now() + wait).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}.
        </p>
      )}
      <FormError message={p.error} />
      <div class="form-actions">
        <ActionButton
          busy={p.busy}
          onClick={async () => {
            const ok = await confirmDialog({
              title: 'Make new backup codes?',
              message: `You get ten new codes. ${left ? `The ${left} unused code${left === 1 ? '' : 's'} you have now stop working.` : ''}`,
              confirm: 'Regenerate backup codes',
            });
            if (!ok) return;
            await p.regenerate();
          }}
        >
          Regenerate backup codes
        </ActionButton>
        <button type="button" class="button danger-ghost" onClick={p.disable}>
          Disable two-factor authentication
        </button>
      </div>
    </>
  );
}
