import { useEffect } from 'preact/hooks';
import { navigate, route } from '../app/router.ts';
import { isAdmin } from '../app/session.ts';
import { NotAvailable, type Tab, TabbedPage } from '../ui/page.tsx';
import { About } from './about.tsx';
import { AuditLog } from './audit.tsx';
import { Backups } from './backups.tsx';
import { Clients } from './clients.tsx';
import { Groups } from './groups.tsx';
import { Instance } from './instance.tsx';
import { Libraries } from './libraries.tsx';
import { Orphans } from './orphans.tsx';
import { TeamFolders } from './team-folders.tsx';
import { Users } from './users.tsx';
import { Webhooks } from '../settings/webhooks.tsx';

const TABS: Tab[] = [
  { href: '/admin/users', label: 'Users', icon: 'users' },
  { href: '/admin/groups', label: 'Groups', icon: 'users' },
  { href: '/admin/team-folders', label: 'Team folders', icon: 'folder' },
  { href: '/admin/libraries', label: 'Libraries', icon: 'server' },
  { href: '/admin/instance', label: 'Instance', icon: 'sliders' },
  { href: '/admin/orphans', label: 'Orphans', icon: 'scan' },
  { href: '/admin/backups', label: 'Backups', icon: 'server' },
  { href: '/admin/clients', label: 'Clients', icon: 'devices' },
  { href: '/admin/webhooks', label: 'Webhooks', icon: 'link' },
  { href: '/admin/audit', label: 'Audit log', icon: 'shield' },
  { href: '/admin/about', label: 'About', icon: 'info' },
];

const SCREENS: Record<string, () => preact.JSX.Element | null> = {
  '/admin/users': Users,
  '/admin/groups': Groups,
  '/admin/team-folders': TeamFolders,
  '/admin/libraries': Libraries,
  '/admin/instance': Instance,
  '/admin/orphans': Orphans,
  '/admin/backups': Backups,
  '/admin/clients': Clients,
  '/admin/webhooks': () => <Webhooks scope="instance" />,
  '/admin/audit': AuditLog,
  '/admin/about': About,
};

/** The admin console: only the first account sees it; everyone else gets a plain "not available". */
export function Admin() {
  const path = route.value.path.replace(/\/$/, '');
  useEffect(() => {
    if (path === '/admin' && isAdmin.value) navigate('/admin/users', { replace: true });
  }, [path]);
  if (!isAdmin.value) {
    return (
      <NotAvailable title="The admin console is not available to you">
        Only the administrator of this Coffer (the first account created on it) manages users, instance settings and storage.
      </NotAvailable>
    );
  }
  const Screen = SCREENS[path];
  if (!Screen) return path === '/admin' ? null : <NotAvailable title="No such admin page">There is nothing at this address.</NotAvailable>;
  return (
    <TabbedPage title="Admin" label="Admin sections" tabs={TABS} current={path}>
      <Screen />
    </TabbedPage>
  );
}
