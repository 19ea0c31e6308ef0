import { useRef, useState } from 'preact/hooks';
import { DISPLAY_NAME_MAX, PASSWORD } from '../../src/contract/limits.ts';
import type { InvitationEntry } from '../../src/contract/admin.ts';
import { parseSize } from '../../src/contract/size.ts';
import { api } from '../api/index.ts';
import { exactDate } from '../app/format.ts';
import { copyText } from '../ui/copy.ts';
import { Dialog, FormButtons, openDialog } from '../ui/dialog.tsx';
import { ConfirmIdentityField, type ConfirmKind, confirmAsked } from '../ui/confirm-identity.tsx';
import { EmailInput, Field, FormError, PasswordInput } from '../ui/form.tsx';

/** What the dialog made: an invitation (its link shown once) or an account. */
type Added = { kind: 'invitation'; email: string } | { kind: 'account'; email: string };

/** The invitation link, shown once (only its hash is kept), with a way to copy it. */
function InvitationLink({ invitation, url, done }: { invitation: InvitationEntry; url: string; done: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  return (
    <div class="dialog-body form" role="status">
      <p>
        Send this link to <strong>{invitation.email}</strong>. On it they choose their password. It works once, until{' '}
        {exactDate(invitation.expiresAt)}. It is shown only now: Coffer keeps only a hash of it.
      </p>
      <Field label="Invitation link">
        <input ref={field} class="secret" type="text" readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
      </Field>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={() => copyText(url, 'Invitation link copied', field.current)}>
          Copy link
        </button>
        <button type="button" class="button primary" onClick={done} autofocus>
          Done
        </button>
      </div>
    </div>
  );
}

function AddUserForm({ close }: { close: (added?: Added) => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [limit, setLimit] = useState('');
  const [how, setHow] = useState<'invite' | 'password'>('invite');
  const [password, setPassword] = useState('');
  // The admin's own password or code, once the server asks (a session signed in more than a few minutes ago).
  const [confirm, setConfirm] = useState<ConfirmKind | null>(null);
  const [proof, setProof] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [made, setMade] = useState<{ invitation: InvitationEntry; url: string } | null>(null);

  if (made) return <InvitationLink {...made} done={() => close({ kind: 'invitation', email: made.invitation.email })} />;
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const storageLimit = limit.trim() === '' ? null : parseSize(limit);
        if (limit.trim() !== '' && (storageLimit === null || storageLimit <= 0))
          return setError(`“${limit}” is not a size. Type one such as 50G or 500M, or leave it empty.`);
        setBusy(true);
        setError(null);
        try {
          const confirmed = confirm === null ? {} : confirm === 'password' ? { currentPassword: proof } : { code: proof };
          const body = { email: email.trim(), ...(name.trim() ? { name: name.trim() } : {}), storageLimit, ...confirmed };
          if (how === 'invite') setMade(await api.admin.invite(body));
          else {
            await api.admin.addAccount({ ...body, password });
            close({ kind: 'account', email: body.email });
          }
        } catch (err) {
          setConfirm(confirmAsked(err) ?? confirm);
          setError((err as Error).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      <div class="dialog-body form">
        <Field label="Email">
          <EmailInput name="email" autoComplete="off" value={email} onValue={setEmail} autofocus />
        </Field>
        <Field label="Name" hint="Optional: they can change it.">
          <input name="name" autoComplete="off" maxLength={DISPLAY_NAME_MAX} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="Storage limit" hint="Empty for the instance default, or a size such as 50G or 500M.">
          <input
            name="storageLimit"
            autoComplete="off"
            placeholder="Instance default"
            value={limit}
            onInput={(e) => setLimit(e.currentTarget.value)}
          />
        </Field>
        <fieldset class="radio-column">
          <legend>How they get in</legend>
          <label class="radio">
            <input type="radio" name="how" checked={how === 'invite'} onChange={() => setHow('invite')} />
            <span>Send an invitation link (valid 7 days; they choose their password)</span>
          </label>
          <label class="radio">
            <input type="radio" name="how" checked={how === 'password'} onChange={() => setHow('password')} />
            <span>Set a password now and tell it to them</span>
          </label>
        </fieldset>
        {how === 'password' && (
          <Field label="Password" hint={`${PASSWORD.min} to ${PASSWORD.max} characters.`}>
            <PasswordInput purpose="new" name="password" value={password} onValue={setPassword} />
          </Field>
        )}
        {confirm && (
          <ConfirmIdentityField kind={confirm} value={proof} onValue={setProof} why="A new account signs in for as long as it exists" />
        )}
        <FormError message={error} />
      </div>
      <FormButtons submit={how === 'invite' ? 'Create invitation' : 'Add user'} busy={busy} cancel={() => close()} />
    </form>
  );
}

/** Admin → Users → Add user: an invitation link, or an account with a password. Resolves with what was made. */
export function addUser(): Promise<Added | undefined> {
  return openDialog<Added>((close) => (
    <Dialog title="Add user" onClose={() => close()}>
      <AddUserForm close={close} />
    </Dialog>
  ));
}
