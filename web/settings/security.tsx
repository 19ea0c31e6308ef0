import { Passkeys } from './passkeys.tsx';
import { ChangePassword } from './password.tsx';
import { TwoFactor } from './two-factor.tsx';

/** Password, passkeys and two-factor authentication. */
export function Security() {
  return (
    <>
      <ChangePassword />
      <Passkeys />
      <TwoFactor />
    </>
  );
}
