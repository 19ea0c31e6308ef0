import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api/index.ts';
import type { AppPassword } from '../../src/contract/accounts.ts';
import { exactDate, formatDate } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { isSubUser, profile } from '../app/session.ts';
import { copyText } from '../ui/copy.ts';
import { ConfirmIdentityField, type ConfirmKind, confirmAsked, proofOf } from '../ui/confirm-identity.tsx';
import { Field, FormError, SubmitButton } from '../ui/form.tsx';
import { Section } from '../ui/page.tsx';
import { CredentialList, removeEntry, When } from './credential-list.tsx';
import { DavLocks } from './dav-locks.tsx';

const NAME_MAX = 100;

/** The password just made: shown once, with a way to copy it. */
function NewPassword({ created, done }: { created: AppPassword & { password: string }; done: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  // The form that made it is gone: the focus goes to the password (selected, ready to copy), not to the page's start.
  useEffect(() => field.current?.focus(), []);
  return (
    <div class="new-app-password" role="status">
      <p>
        <strong>App password for “{created.name}”.</strong> Enter it in the device with your email as the user name. It is shown only now:
        Coffer keeps only a hash of it.
      </p>
      <Field label="New app password">
        <input ref={field} class="secret" type="text" readOnly value={created.password} onFocus={(e) => e.currentTarget.select()} />
      </Field>
      <div class="form-actions">
        <button type="button" class="button" onClick={() => copyText(created.password, 'App password copied', field.current)}>
          Copy
        </button>
        <button type="button" class="button primary" onClick={done}>
          Done
        </button>
      </div>
    </div>
  );
}

function MountInstructions() {
  const url = `${location.origin}/dav/`;
  const host = location.host;
  const secure = location.protocol === 'https:';
  const email = profile.value?.email ?? 'you@example.com';
  const field = useRef<HTMLInputElement>(null);
  return (
    <Section
      title="Mount as a drive"
      intro="Your files as a network drive in the file manager, or a remote for rclone. Sign in with your email and an app password."
    >
      <Field label="WebDAV address">
        <input ref={field} type="text" readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
      </Field>
      <div class="form-actions">
        <button type="button" class="button" onClick={() => copyText(url, 'Address copied', field.current)}>
          Copy address
        </button>
      </div>
      <dl class="mount-steps">
        <dt>macOS</dt>
        <dd>
          Finder → Go → Connect to Server (⌘K), enter <code>{url}</code>, then your email and the app password.
        </dd>
        <dt>Windows</dt>
        <dd>
          File Explorer → This PC → Map network drive → “Connect to a Web site…”, enter <code>{url}</code>.
          {!secure &&
            ' Windows sends passwords over plain http only after an administrator sets BasicAuthLevel to 2 for the WebClient service; prefer HTTPS.'}
        </dd>
        <dt>Linux</dt>
        <dd>
          GNOME Files → Other Locations → Connect to Server: <code>{`${secure ? 'davs' : 'dav'}://${host}/dav/`}</code>; KDE Dolphin:{' '}
          <code>{`${secure ? 'webdavs' : 'webdav'}://${host}/dav/`}</code>.
        </dd>
        <dt>rclone</dt>
        <dd>
          <code>{`rclone config create coffer webdav url=${url} vendor=owncloud user=${email} pass=$(rclone obscure 'APP-PASSWORD')`}</code>
        </dd>
      </dl>
      <p class="muted small">Deleting a file through the drive moves it to the trash here, where you can restore it.</p>
    </Section>
  );
}

/** App passwords: one per device that mounts Coffer over WebDAV, made here, shown once, revoked here; for the owner, the account's locks. */
export function AppPasswords() {
  const list = useLoad(api.devices.appPasswords);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<(AppPassword & { password: string }) | null>(null);
  const [confirm, setConfirm] = useState<ConfirmKind | null>(null);
  const [secret, setSecret] = useState('');
  const nameField = useRef<HTMLInputElement>(null);
  const backToName = useRef(false);
  // Done removes the new password and its buttons: the focus goes back to the form, on the device name.
  useEffect(() => {
    if (created || !backToName.current) return;
    backToName.current = false;
    nameField.current?.focus();
  }, [created]);

  const revoke = (p: AppPassword) =>
    removeEntry({
      confirm: {
        title: `Revoke “${p.name}”?`,
        message: 'The device using it is signed out at its next request and must be given a new app password.',
        confirm: 'Revoke',
        danger: true,
      },
      call: async () => {
        await api.devices.revokeAppPassword(p.id);
        if (created?.id === p.id) setCreated(null);
      },
      done: `Revoked “${p.name}”`,
      reload: list.reload,
    });

  const passwords = list.data?.appPasswords ?? [];
  return (
    <>
      <Section
        title="App passwords"
        intro="File managers, rclone and phone apps sign in to WebDAV with an app password, never your own password (which two-step verification would stop anyway). Give each device its own, so you can revoke one without the others."
      >
        {created ? (
          <NewPassword
            created={created}
            done={() => {
              backToName.current = true;
              setCreated(null);
            }}
          />
        ) : (
          <form
            noValidate
            class="form"
            onSubmit={async (e) => {
              e.preventDefault();
              if (!name.trim()) return setError('Name the device, such as “MacBook Finder”.');
              setBusy(true);
              setError(null);
              try {
                setCreated(await api.devices.createAppPassword({ name, ...proofOf(confirm, secret) }));
                setName('');
                setConfirm(null);
                setSecret('');
                await list.reload();
              } catch (err) {
                setConfirm(confirmAsked(err) ?? confirm);
                setError((err as Error).message);
              }
              setBusy(false);
            }}
          >
            <Field label="Device name" hint="Where the password goes, so you know which to revoke later.">
              <input ref={nameField} type="text" maxLength={NAME_MAX} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </Field>
            {confirm && <ConfirmIdentityField kind={confirm} value={secret} onValue={setSecret} />}
            <FormError message={error} />
            <div class="form-actions">
              <SubmitButton busy={busy}>Create app password</SubmitButton>
            </div>
          </form>
        )}
        <CredentialList
          label="App passwords"
          list={list}
          entries={passwords}
          keyOf={(p) => p.id}
          empty="No app passwords yet."
          title={(p) => p.name}
          facts={(p) => (
            <>
              <When words="created" at={p.createdAt} /> ·{' '}
              {p.lastUsedAt ? (
                <span title={exactDate(p.lastUsedAt)}>
                  last used {formatDate(p.lastUsedAt).toLowerCase()} from {p.lastIp}
                </span>
              ) : (
                'never used'
              )}
            </>
          )}
          action={(p) => ({ label: 'Revoke', name: `Revoke ${p.name}`, run: () => void revoke(p) })}
        />
      </Section>
      <MountInstructions />
      {!isSubUser.value && <DavLocks />}
    </>
  );
}
