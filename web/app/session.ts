import { computed, signal } from '@preact/signals';
import { localPath } from '../../src/contract/local-path.ts';
import { ApiError, onApiError } from './api.ts';
import type { Profile } from '../../src/contract/accounts.ts';
import type { InstanceStatus } from '../../src/contract/admin.ts';
import type { Permission } from '../../src/contract/permissions.ts';
import { currentUrl, navigate, route } from './router.ts';
import { api } from '../api/index.ts';
import { eventsStartAfter } from './events.ts';

export type SessionState = 'loading' | 'signed-in' | 'signed-out' | 'desktop-only';

export const profile = signal<Profile | null>(null);
export const sessionState = signal<SessionState>('loading');
/** The instance's switches as this login sees them (the admin also gets the account counts). */
export const instance = signal<InstanceStatus | null>(null);
/** Instance settings the file manager obeys. */
export const hideExtensions = computed(() => instance.value?.hideFileExtensions ?? false);
export const maxUploadBytes = signal<number | null>(null);
/** Extensions the document server opens (lower case, no dot); empty when no document server is connected. */
export const editorExtensions = signal<ReadonlySet<string>>(new Set());
/** The admin (the first account): docs/api.md › Permissions gives the admin, and only the admin, every `canToggle`. */
export const isAdmin = computed(() => instance.value?.canToggle === true);
/** The single sign-on provider's name while the instance offers it (it changes only with a restart). */
export const providerName = signal<string | null>(null);
/** False when only the provider signs people in (OIDC_DISABLE_PASSWORD_LOGIN). */
export const passwordSignIn = signal(true);
/** Why the first session check failed (a 5xx, a proxy's page, no network): the app says so instead of loading forever. */
export const sessionError = signal<string | null>(null);
/** Said on the sign-in page after a session ended under the user. */
export const signInNotice = signal<string | null>(null);

/** Owners hold every permission; a sub-user only those granted (read from the profile). */
export const can = (permission: Permission) => {
  const p = profile.value;
  return p !== null && (p.permissions === null || p.permissions.includes(permission));
};
export const isSubUser = computed(() => profile.value?.permissions != null);

export const SIGN_IN_PATHS = ['/login', '/signup', '/invite'];

/** Sends the user to sign in, remembering where they were so they come back there. */
export function toSignIn(notice?: string): void {
  const here = currentUrl.value;
  profile.value = null;
  sessionState.value = 'signed-out';
  if (notice) signInNotice.value = notice;
  if (SIGN_IN_PATHS.includes(route.value.path)) return;
  navigate(here === '/' ? '/login' : `/login?next=${encodeURIComponent(here)}`, { replace: true });
}

onApiError({
  unauthorized: (err) => {
    if (sessionState.value === 'signed-in') toSignIn(`${err.message} Sign in to continue where you were.`);
  },
  desktopOnly: () => {
    sessionState.value = 'desktop-only';
  },
  // A refusal may mean the owner changed this login's permissions: show what it may do now.
  forbidden: () => void refreshSession(),
});

let refreshing: Promise<void> | null = null;
let refreshAgain = false;
/**
 * Reads the profile and the instance settings again (permissions and settings change without a new
 * sign-in): on every navigation, when the tab is shown again and after a refusal. One refresh at a
 * time; a call during one runs once after it.
 */
export function refreshSession(): Promise<void> {
  if (sessionState.value !== 'signed-in') return Promise.resolve();
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = Promise.all([api.accounts.profile(), loadInstanceSettings()])
    .then(([p]) => {
      if (!same(p, profile.value)) profile.value = p;
    })
    .catch(() => {})
    .finally(() => {
      refreshing = null;
      if (refreshAgain) {
        refreshAgain = false;
        void refreshSession();
      }
    });
  return refreshing;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

async function loadInstanceSettings(): Promise<void> {
  const [status, max, editor] = await Promise.all([
    api.settings.status(),
    api.settings.maxUploadSize(),
    api.settings.docserverConfigured(),
  ]);
  if (!same(status, instance.value)) instance.value = status;
  maxUploadBytes.value = max.maxBytes;
  const extensions = editor.configured ? editor.extensions : [];
  if (!same(extensions, [...editorExtensions.value])) editorExtensions.value = new Set(extensions);
}

async function loadSignInOptions(): Promise<void> {
  const { idp, passwordLogin } = await api.accounts.signupStatus();
  providerName.value = idp.enabled ? idp.name : null;
  passwordSignIn.value = passwordLogin;
}

/** Asks the server who is signed in; a 401 means nobody (no redirect loop: the caller decides). */
export async function loadSession(): Promise<void> {
  try {
    const { profile: p, eventId } = await api.accounts.profileAt({ anonymous: true });
    // Read before any screen's data: the first stream starts after it, so a change made in between is not lost.
    eventsStartAfter(eventId);
    await Promise.all([loadInstanceSettings(), loadSignInOptions()]);
    profile.value = p;
    sessionState.value = 'signed-in';
    startPresence();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) sessionState.value = 'signed-out';
    else if (sessionState.value !== 'desktop-only') {
      if (sessionState.value === 'loading') sessionError.value = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }
}

/** Asks again after the first check failed: by the user's Try again, or when the browser is back online. */
export function retrySession(): Promise<void> {
  sessionError.value = null;
  return loadSession().catch(() => {});
}
addEventListener('online', () => {
  if (sessionError.value) void retrySession();
});

/** After sign-in the shell takes over and returns to the page that was wanted (see `wantedPage`). */
export async function signedIn(): Promise<void> {
  signInNotice.value = null;
  await loadSession();
}

/** The page a sign-in page was asked to return to: a local path only, else home. */
export function wantedPage(): string {
  return localPath(route.value.query.get('next'));
}

export async function signOut(): Promise<void> {
  stopPresence();
  try {
    await api.accounts.logout();
  } finally {
    profile.value = null;
    sessionState.value = 'signed-out';
    navigate('/login', { replace: true });
  }
}

// Presence (docs/api.md › Sessions and presence): a heartbeat every two minutes while visible; hidden or gone = offline.
let heartbeat: ReturnType<typeof setInterval> | null = null;
const beat = () => {
  if (document.visibilityState === 'visible') api.sessions.heartbeat().catch(() => {});
};
const onVisibility = () => {
  if (document.visibilityState === 'visible') beat();
  else navigator.sendBeacon(api.sessions.offlineUrl);
};
const onExit = () => navigator.sendBeacon(api.sessions.offlineUrl);

function startPresence(): void {
  if (heartbeat) return;
  beat();
  heartbeat = setInterval(beat, 120_000);
  document.addEventListener('visibilitychange', onVisibility);
  addEventListener('pagehide', onExit);
}

function stopPresence(): void {
  if (heartbeat) clearInterval(heartbeat);
  heartbeat = null;
  document.removeEventListener('visibilitychange', onVisibility);
  removeEventListener('pagehide', onExit);
}
