import { ChangePassword } from './password.tsx';
import { TwoFactor } from './two-factor.tsx';

/** Password and two-factor authentication. */
export function Security() {
  return (
    <>
      <ChangePassword />
      <TwoFactor />
    </>
  );
}
