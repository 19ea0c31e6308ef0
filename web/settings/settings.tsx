import { useEffect } from 'preact/hooks';
import { navigate, route } from '../app/router.ts';
import { isSubUser } from '../app/session.ts';
import { NotAvailable, type Tab, TabbedPage } from '../ui/page.tsx';
import { AppPasswords } from './app-passwords.tsx';
import { Appearance } from './appearance.tsx';
import { Groups } from './groups.tsx';
import { Profile } from './profile.tsx';
import { Security } from './security.tsx';
import { Sessions } from './sessions.tsx';
import { SubUsers } from './sub-users.tsx';
import { Webhooks } from './webhooks.tsx';

/** Settings of the signed-in login: one tab per concern, each with its own URL. */
export function Settings() {
  const path = route.value.path;
  useEffect(() => {
    if (path === '/settings' || path === '/settings/') navigate('/settings/profile', { replace: true });
  }, [path]);
  const tabs: Tab[] = [
    { href: '/settings/profile', label: 'Profile', icon: 'user' },
    { href: '/settings/security', label: 'Security', icon: 'shield' },
    { href: '/settings/sessions', label: 'Sessions', icon: 'devices' },
    { href: '/settings/app-passwords', label: 'App passwords', icon: 'lock' },
    ...(isSubUser.value ? [] : [{ href: '/settings/sub-users', label: 'Sub-users', icon: 'users' } as Tab]),
    ...(isSubUser.value ? [] : [{ href: '/settings/groups', label: 'Groups', icon: 'users' } as Tab]),
    ...(isSubUser.value ? [] : [{ href: '/settings/webhooks', label: 'Webhooks', icon: 'link' } as Tab]),
    { href: '/settings/appearance', label: 'Appearance', icon: 'palette' },
  ];
  let body;
  if (path === '/settings/profile') body = <Profile />;
  else if (path === '/settings/security') body = <Security />;
  else if (path === '/settings/sessions') body = <Sessions />;
  else if (path === '/settings/app-passwords') body = <AppPasswords />;
  else if (path === '/settings/sub-users') {
    body = isSubUser.value ? (
      <NotAvailable title="Sub-users are managed by the account owner">
        Only the owner of this account can add or change sub-users.
      </NotAvailable>
    ) : (
      <SubUsers />
    );
  } else if (path === '/settings/groups') {
    body = isSubUser.value ? (
      <NotAvailable title="Groups are the account owner's">
        Only the owner of this account sees its groups and administers them.
      </NotAvailable>
    ) : (
      <Groups />
    );
  } else if (path === '/settings/webhooks') {
    body = isSubUser.value ? (
      <NotAvailable title="Webhooks are the account owner's">
        Only the owner of this account adds webhooks and sees their deliveries.
      </NotAvailable>
    ) : (
      <Webhooks scope="account" />
    );
  } else if (path === '/settings/appearance') body = <Appearance />;
  else if (path === '/settings' || path === '/settings/') return null;
  else body = <NotAvailable title="No such settings page">There is nothing at this address.</NotAvailable>;
  return (
    <TabbedPage title="Settings" label="Settings sections" tabs={tabs} current={path}>
      {body}
    </TabbedPage>
  );
}
