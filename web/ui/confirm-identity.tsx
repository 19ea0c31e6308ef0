import { useEffect, useId, useState } from 'preact/hooks';
import { ApiError } from '../app/api.ts';
import { Dialog, FormButtons, openDialog } from './dialog.tsx';
import { Field, PasswordInput } from './form.tsx';

/** What the server asked for before making a lasting credential (an app password, an account): the password or a code. */
export type ConfirmKind = 'password' | 'code';

/** The kind the server asks for in a 400 (`confirm`), or null when the error is something else. */
export function confirmAsked(err: unknown): ConfirmKind | null {
  const asked = err instanceof ApiError && err.status === 400 ? err.body.confirm : null;
  return asked === 'password' || asked === 'code' ? asked : null;
}

/** The body field that answers it. */
export const proofOf = (kind: ConfirmKind | null, value: string) =>
  kind === null ? {} : kind === 'password' ? { password: value } : { code: value };

/** The field for it, shown once the server has asked (a session signed in more than a few minutes ago). */
export function ConfirmIdentityField({
  kind,
  value,
  onValue,
  why = 'An app password signs in to your files for as long as it exists',
}: {
  kind: ConfirmKind;
  value: string;
  onValue: (v: string) => void;
  /** What the credential made does, said before “so Coffer checks it is you first”. */
  why?: string;
}) {
  const id = useId();
  // It appears because the server asked: the focus goes to it, not left on the page's start or a button now busy.
  useEffect(() => document.getElementById(id)?.focus(), [kind]);
  return kind === 'password' ? (
    <Field label="Your password" hint={`${why}, so Coffer checks it is you first.`}>
      <PasswordInput purpose="current" id={id} value={value} onValue={onValue} />
    </Field>
  ) : (
    <Field label="Authenticator or backup code" hint="A code from your authenticator app or a backup code: Coffer checks it is you first.">
      <input id={id} autoComplete="one-time-code" required maxLength={9} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
    </Field>
  );
}

/** The admin's own proof, as the account routes name it (`password` there is the new account's). */
export type AdminProof = { currentPassword: string } | { code: string };

/**
 * Asks for the password or code the server asked for, in a dialog of its own over the one that asked (deleting an
 * account): resolves with the body fields that answer it, or undefined when cancelled.
 */
export function confirmIdentityDialog(kind: ConfirmKind, why: string, submit: string): Promise<AdminProof | undefined> {
  return openDialog<AdminProof>((close) => (
    <Dialog title="Confirm it is you" onClose={() => close()}>
      <ConfirmIdentityForm kind={kind} why={why} submit={submit} close={close} />
    </Dialog>
  ));
}

function ConfirmIdentityForm(props: { kind: ConfirmKind; why: string; submit: string; close: (proof?: AdminProof) => void }) {
  const [value, setValue] = useState('');
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        props.close(props.kind === 'password' ? { currentPassword: value } : { code: value });
      }}
    >
      <div class="dialog-body form">
        <ConfirmIdentityField kind={props.kind} value={value} onValue={setValue} why={props.why} />
      </div>
      <FormButtons submit={props.submit} busy={false} cancel={() => props.close()} />
    </form>
  );
}
