import { useEffect } from 'preact/hooks';
import { PERMISSION_CATALOG } from '../../src/contract/permissions.ts';
import { exactDate } from '../app/format.ts';
import { isAdmin, isSubUser, passwordSignIn, profile, providerName, signOut } from '../app/session.ts';
import { loadStorage } from '../app/storage.ts';
import { Section } from '../ui/page.tsx';
import { StorageMeter } from '../ui/storage-meter.tsx';

const labelOf = (key: string) => PERMISSION_CATALOG.find((p) => p.key === key)?.label ?? key;

/** Who is signed in, how they sign in, what kind of login it is, and the account's storage. */
export function Profile() {
  useEffect(() => void loadStorage(), []);
  const p = profile.value;
  if (!p) return null;
  const ways = [
    p.signInMethods.includes('password') && passwordSignIn.value && 'Email and password',
    p.signInMethods.includes('idp') && `${providerName.value ?? 'An identity provider'} (single sign-on)`,
  ].filter(Boolean);
  const kind = isSubUser.value
    ? `Sub-user: works on the account owner's files. Allowed: ${p.permissions!.length ? p.permissions!.map(labelOf).join(', ') : 'viewing only'}.`
    : isAdmin.value
      ? 'Account owner and administrator of this Coffer (the first account)'
      : 'Account owner';
  return (
    <>
      <Section title="Profile">
        <dl class="info-list wide">
          <dt>Name</dt>
          <dd>{p.name || '—'}</dd>
          <dt>Email</dt>
          <dd>{p.email}</dd>
          <dt>Signs in with</dt>
          <dd>
            {ways.join(', or ') || '—'}
            {p.mfaEnabled && ', then a code from an authenticator app (two-factor authentication)'}
            {!p.mfaEnabled && (
              <div class="muted small">
                Two-factor authentication is off. <a href="/settings/security">Turn it on</a>
              </div>
            )}
          </dd>
          <dt>Account</dt>
          <dd>{kind}</dd>
          <dt>Member since</dt>
          <dd>{exactDate(p.createdAt)}</dd>
        </dl>
      </Section>
      <Section
        title="Storage"
        intro={
          isSubUser.value
            ? "You share the account owner's storage and limit."
            : 'Everything the account stores counts, the trash included, until it is emptied.'
        }
      >
        <StorageMeter />
      </Section>
      <Section title="Sign out" intro="Signs this browser out. Other devices stay signed in; see Sessions to sign them out.">
        <button type="button" class="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </Section>
    </>
  );
}
