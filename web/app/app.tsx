import { useSignal } from '@preact/signals';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { Admin } from '../admin/admin.tsx';
import { ConnectClient } from '../connect/connect.tsx';
import { FileBrowser } from '../files/file-browser.tsx';
import { Home } from '../home/home.tsx';
import { NotificationBell } from '../notifications/bell.tsx';
import { AlbumScreen, AlbumsScreen } from '../photos/albums.tsx';
import { PhotosScreen } from '../photos/photos.tsx';
import { CommandPalette, openPalette } from '../palette/palette.tsx';
import { openShortcuts } from '../palette/shortcuts.tsx';
import { SearchBox } from '../search/search-box.tsx';
import { Settings } from '../settings/settings.tsx';
import { AcceptInvitation, INVITATION_PATH } from '../signin/invitation.tsx';
import { DesktopOnly, SignIn, SignUp, Unreachable } from '../signin/signin.tsx';
import { ActivityScreen } from '../activity/activity-screen.tsx';
import { TrashScreen } from '../trash/trash.tsx';
import { DialogHost } from '../ui/dialog.tsx';
import { Icon, type IconName } from '../ui/icons.tsx';
import { MenuHost, openMenu } from '../ui/menu.tsx';
import { StorageMeter } from '../ui/storage-meter.tsx';
import { Toasts } from '../ui/toasts.tsx';
import { UploadPanel } from '../uploads/upload-panel.tsx';
import { api } from '../api/index.ts';
import { online } from './api.ts';
import { startEvents, stopEvents, streamState } from './events.ts';
import { loadSharedFolders } from './folders.ts';
import { followLiveUpdates } from './live.ts';
import { useLoad } from './load.ts';
import { theme } from './prefs.ts';
import { viewingShared } from './people.ts';
import { navigate, route } from './router.ts';
import { isAdmin, profile, refreshSession, SIGN_IN_PATHS, sessionError, sessionState, signOut, toSignIn, wantedPage } from './session.ts';
import { loadStorage } from './storage.ts';
import { activeUploads } from './uploads.ts';

const NAV: { href: string; label: string; icon: IconName; match: (p: string) => boolean }[] = [
  { href: '/', label: 'Home', icon: 'home', match: (p) => p === '/' },
  { href: '/files', label: 'My files', icon: 'folder', match: (p) => p.startsWith('/files') && !viewingShared.value },
  { href: '/recent', label: 'Recent', icon: 'clock', match: (p) => p === '/recent' },
  { href: '/starred', label: 'Starred', icon: 'star', match: (p) => p === '/starred' },
  { href: '/photos', label: 'Photos', icon: 'photo', match: (p) => p === '/photos' || p.startsWith('/photos/') },
  { href: '/shared', label: 'Shared', icon: 'link', match: (p) => p === '/shared' },
  {
    href: '/shared-with-me',
    label: 'Shared with me',
    icon: 'users',
    match: (p) => p === '/shared-with-me' || (p.startsWith('/files/') && viewingShared.value),
  },
  { href: '/activity', label: 'Activity', icon: 'activity', match: (p) => p === '/activity' },
  { href: '/trash', label: 'Trash', icon: 'trash', match: (p) => p === '/trash' },
];

function NavLink(p: { href: string; icon: IconName; label: string; active: boolean; onClick: () => void }) {
  return (
    <a href={p.href} class={`nav-link ${p.active ? 'active' : ''}`} aria-current={p.active ? 'page' : undefined} onClick={p.onClick}>
      <Icon name={p.icon} />
      {p.label}
    </a>
  );
}

/** Below this width (shell.css) the sidebar is a drawer opened from the top bar's menu button. */
const DRAWER = '(max-width: 760px)';

function Sidebar({ open, close }: { open: boolean; close: () => void }) {
  const path = route.value.path;
  const ref = useRef<HTMLElement>(null);
  // An opened drawer takes the focus (it comes first in the page, behind the button that opened it), on its current page's link.
  useEffect(() => {
    if (open) (ref.current?.querySelector<HTMLElement>('[aria-current=page]') ?? ref.current?.querySelector<HTMLElement>('a'))?.focus();
  }, [open]);
  return (
    <aside ref={ref} class={`sidebar ${open ? 'open' : ''}`} aria-label="Sidebar">
      <a href="/" class="brand" onClick={close}>
        <span class="brand-mark" aria-hidden="true">
          <Icon name="folder" size={18} />
        </span>
        Coffer
      </a>
      <nav aria-label="Main">
        <ul>
          {NAV.map((n) => (
            <li key={n.href}>
              <NavLink href={n.href} icon={n.icon} label={n.label} active={n.match(path)} onClick={close} />
            </li>
          ))}
        </ul>
      </nav>
      <div class="sidebar-foot">
        <StorageMeter compact />
        {isAdmin.value && <NavLink href="/admin" icon="shield" label="Admin" active={path.startsWith('/admin')} onClick={close} />}
        <NavLink href="/settings" icon="settings" label="Settings" active={path.startsWith('/settings')} onClick={close} />
      </div>
    </aside>
  );
}

function StatusBanner() {
  if (!online.value) {
    return (
      <div class="banner offline-banner" role="status">
        <Icon name="offline" size={18} />
        <span>
          You are offline or Coffer cannot be reached. What you see may be out of date; changes will fail until the connection is back.
        </span>
      </div>
    );
  }
  if (streamState.value === 'reconnecting') {
    return (
      <div class="banner reconnect-banner" role="status">
        <Icon name="restore" size={18} />
        <span>Reconnecting to live updates…</span>
      </div>
    );
  }
  return null;
}

/** For the admin only: the last scheduled backup failed, the last good one is too old, or the replica is behind (GET /api/user/backups says which). */
function BackupWarning() {
  const status = useLoad(api.admin.backups, { everyMs: 60_000 });
  const warning = status.data?.warning ?? status.data?.replication?.warning;
  if (!warning || route.value.path === '/admin/backups') return null;
  return (
    <div class="banner error-banner" role="alert">
      <Icon name="alert" size={18} />
      <span>{warning}</span>
      <button type="button" class="button small" onClick={() => navigate('/admin/backups')}>
        Open Backups
      </button>
    </div>
  );
}

function AccountButton() {
  const p = profile.value;
  if (!p) return null;
  const initials = (p.name || p.email).trim().slice(0, 1).toUpperCase();
  return (
    <button
      type="button"
      class="avatar"
      aria-label={`Account: ${p.name || p.email}`}
      onClick={(e) => {
        const r = (e.currentTarget as HTMLElement).getBoundingClientRect();
        openMenu(
          r.right - 220,
          r.bottom + 4,
          [
            { label: 'Settings', icon: 'settings', run: () => navigate('/settings') },
            { label: 'Keyboard shortcuts', icon: 'keyboard', keys: '?', run: openShortcuts },
            {
              label: theme.value === 'dark' ? 'Light theme' : 'Dark theme',
              icon: theme.value === 'dark' ? 'sun' : 'moon',
              run: () => (theme.value = theme.value === 'dark' ? 'light' : 'dark'),
            },
            { label: 'Sign out', icon: 'logout', run: () => void signOut() },
          ],
          'Account',
        );
      }}
    >
      {initials}
    </button>
  );
}

function NotFound() {
  return (
    <div class="empty page">
      <h1>Page not found</h1>
      <p>There is nothing at this address.</p>
      <a class="button primary" href="/files">
        Go to My files
      </a>
    </div>
  );
}

function Screen() {
  const { path, query } = route.value;
  if (path === '/') return <Home />;
  // Keyed by view, so a new folder starts with its own selection and focus before the first key press.
  if (path === '/files') return <FileBrowser key="folder:" kind="folder" folderId={null} />;
  const folder = /^\/files\/([^/]+)$/.exec(path);
  if (folder) return <FileBrowser key={`folder:${folder[1]}`} kind="folder" folderId={decodeURIComponent(folder[1]!)} />;
  if (path === '/recent' || path === '/starred' || path === '/shared')
    return <FileBrowser key={path} kind={path.slice(1) as 'recent' | 'starred' | 'shared'} />;
  if (path === '/shared-with-me') return <FileBrowser key={path} kind="sharedWithMe" />;
  if (path === '/photos') return <PhotosScreen />;
  if (path === '/photos/albums') return <AlbumsScreen />;
  const album = /^\/photos\/albums\/([^/]+)$/.exec(path);
  if (album) return <AlbumScreen key={album[1]} id={decodeURIComponent(album[1]!)} />;
  if (path === '/trash') return <TrashScreen />;
  if (path === '/activity') return <ActivityScreen />;
  if (path === '/search') {
    const q = query.get('q')?.trim() ?? '';
    return q ? (
      <FileBrowser key={`search:${q}`} kind="search" query={q} />
    ) : (
      <div class="empty page">Type in the search box to find files and folders by name.</div>
    );
  }
  if (path === '/settings' || path.startsWith('/settings/')) return <Settings />;
  if (path === '/admin' || path.startsWith('/admin/')) return <Admin />;
  return <NotFound />;
}

function Shell() {
  const menuOpen = useSignal(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const focusBack = useRef(false);
  // Once the page behind is no longer inert, the drawer's button takes the focus back, in the same frame (not after a paint that left it on the body).
  useLayoutEffect(() => {
    if (!menuOpen.value && focusBack.current) {
      focusBack.current = false;
      menuButton.current?.focus();
    }
  }, [menuOpen.value]);
  // A window widened past the drawer's width shows the sidebar in place: nothing is left open (and the page inert).
  useEffect(() => {
    const drawer = matchMedia(DRAWER);
    const changed = () => {
      if (!drawer.matches) menuOpen.value = false;
    };
    drawer.addEventListener('change', changed);
    return () => drawer.removeEventListener('change', changed);
  }, []);
  const path = route.value.path;
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else void refreshSession();
  }, [path]);
  useEffect(() => {
    startEvents();
    void loadStorage();
    void loadSharedFolders().catch(() => {});
    const off = followLiveUpdates();
    const keys = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      const typing = t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName);
      // Escape closes the drawer wherever focus went (Tab may have left its links), with focus back on its button.
      if (e.key === 'Escape' && menuOpen.value) {
        e.preventDefault();
        focusBack.current = true;
        menuOpen.value = false;
      } else if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        openPalette();
      } else if (!typing && !document.querySelector('dialog[open]') && e.key === '/' && !e.ctrlKey && !e.metaKey) {
        e.preventDefault();
        document.querySelector<HTMLInputElement>('.search input')?.focus();
      } else if (!typing && !document.querySelector('dialog[open]') && e.key === '?') {
        e.preventDefault();
        openShortcuts();
      }
    };
    addEventListener('keydown', keys);
    // Back to the tab after a while: what this login may do may have changed meanwhile.
    const back = () => document.visibilityState === 'visible' && void refreshSession();
    document.addEventListener('visibilitychange', back);
    // Leaving with uploads running would lose them: the browser asks first.
    const leave = (e: BeforeUnloadEvent) => {
      if (activeUploads.value.length) e.preventDefault();
    };
    addEventListener('beforeunload', leave);
    return () => {
      off();
      stopEvents();
      removeEventListener('keydown', keys);
      document.removeEventListener('visibilitychange', back);
      removeEventListener('beforeunload', leave);
    };
  }, []);
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <Sidebar open={menuOpen.value} close={() => (menuOpen.value = false)} />
      {menuOpen.value && <div class="scrim" aria-hidden="true" onClick={() => (menuOpen.value = false)} />}
      {/* While the drawer is open the page behind it is out of reach, as behind a dialog: Tab stays in the drawer. */}
      <div class="main-column" inert={menuOpen.value}>
        <header class="topbar">
          <button
            ref={menuButton}
            type="button"
            class="icon-button menu-button"
            aria-label="Open navigation"
            aria-expanded={menuOpen.value}
            onClick={() => (menuOpen.value = !menuOpen.value)}
          >
            <Icon name="menu" />
          </button>
          <SearchBox />
          <button type="button" class="icon-button hide-narrow" aria-label="Command palette (Ctrl+K)" onClick={openPalette}>
            <Icon name="keyboard" />
          </button>
          <NotificationBell />
          <AccountButton />
        </header>
        <StatusBanner />
        {isAdmin.value && <BackupWarning />}
        <main id="main" class="content" tabIndex={-1}>
          <Screen />
        </main>
      </div>
      <UploadPanel />
    </div>
  );
}

/** The whole app: sign-in pages, or the shell around the current screen. */
export function App() {
  const state = sessionState.value;
  const path = route.value.path;
  // A Nextcloud client's browser sign-in ends here, on its own page outside the file manager.
  const connect = /^\/connect\/([^/]+)$/.exec(path);
  useEffect(() => {
    if (state === 'signed-out' && !SIGN_IN_PATHS.includes(path)) toSignIn();
    // An invitation opened while signed in stays open: accepting it is what signs in as the new account.
    if (state === 'signed-in' && SIGN_IN_PATHS.includes(path) && path !== INVITATION_PATH) navigate(wantedPage(), { replace: true });
  }, [state, path]);
  let body;
  if (state === 'loading' && sessionError.value) body = <Unreachable />;
  else if (state === 'loading') body = <div class="splash" role="progressbar" aria-busy="true" aria-label="Loading Coffer" />;
  else if (state === 'desktop-only') body = <DesktopOnly />;
  else if (state === 'signed-in' && connect) body = <ConnectClient token={decodeURIComponent(connect[1]!)} />;
  else if (path === INVITATION_PATH) body = <AcceptInvitation />;
  else if (state === 'signed-in' && !SIGN_IN_PATHS.includes(path)) body = <Shell />;
  else if (path === '/signup') body = <SignUp />;
  else body = <SignIn />;
  return (
    <>
      {body}
      <CommandPalette />
      <DialogHost />
      <MenuHost />
      <Toasts />
    </>
  );
}
