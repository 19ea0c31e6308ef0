import { EMAIL_MAX } from '../../src/contract/limits.ts';
import type { UserEntry } from '../../src/contract/admin.ts';
import { api } from '../api/index.ts';
import { formatSize } from '../app/format.ts';
import { toast, toastError } from '../app/toasts.ts';
import { confirmAsked, confirmIdentityDialog } from '../ui/confirm-identity.tsx';
import { confirmDialog, promptDialog } from '../ui/dialog.tsx';

/** Admin → Users' actions that ask first: each says what it did and answers whether the account changed. */

/** Disables (after asking) or enables `u` and its sub-users. */
export async function setAccountDisabled(u: UserEntry, disabled: boolean): Promise<boolean> {
  if (
    disabled &&
    !(await confirmDialog({
      title: `Disable ${u.email}?`,
      message: 'The account and its sub-users are signed out at once and cannot sign in until you enable it again. Their files are kept.',
      confirm: 'Disable',
      danger: true,
    }))
  )
    return false;
  try {
    await api.admin.setDisabled(u.id, disabled);
    toast(`${u.email} ${disabled ? 'disabled' : 'enabled'}`);
    return true;
  } catch (err) {
    toastError(err);
    return false;
  }
}

/** Vouches for `u`'s address, after saying what that lets single sign-on do. */
export async function confirmAccountEmail(u: UserEntry): Promise<boolean> {
  if (
    !(await confirmDialog({
      title: `Confirm the email of ${u.email}?`,
      message:
        'Confirm it only if you know this address belongs to the person using this login: single sign-on will then let whoever the identity provider says owns the address into it.',
      confirm: 'Confirm email',
    }))
  )
    return false;
  try {
    await api.admin.confirmEmail(u.id);
    toast(`Email of ${u.email} confirmed`);
    return true;
  } catch (err) {
    toastError(err);
    return false;
  }
}

/** Deletes `u` once its email is typed (and the admin's own password given, when the server asks for it). */
export async function deleteAccount(u: UserEntry): Promise<boolean> {
  const typed = await promptDialog({
    title: `Delete ${u.email}?`,
    label: `Type ${u.email} to delete the account, its sub-users and all of its files (${formatSize(u.storageUsed)}). This cannot be undone.`,
    confirm: 'Delete account',
    maxLength: EMAIL_MAX,
    validate: (v) => (v.trim().toLowerCase() === u.email.toLowerCase() ? null : 'The email typed does not match the account.'),
    submit: async () => {
      try {
        await api.admin.deleteUser(u.id);
        return null;
      } catch (err) {
        // Signed in a while ago: the server asks for the admin's own password (or a code) first.
        const kind = confirmAsked(err);
        if (kind === null) return (err as Error).message;
        const proof = await confirmIdentityDialog(kind, 'Deleting an account cannot be undone', 'Delete account');
        if (!proof) return (err as Error).message;
        try {
          await api.admin.deleteUser(u.id, proof);
          return null;
        } catch (again) {
          return (again as Error).message;
        }
      }
    },
  });
  if (typed === undefined) return false;
  toast(`Deleting ${u.email}: its files are being removed`);
  return true;
}
