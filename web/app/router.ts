import { computed, signal } from '@preact/signals';

export interface Location {
  path: string;
  query: URLSearchParams;
}

const read = (): Location => ({ path: location.pathname, query: new URLSearchParams(location.search) });

/** The current URL: every screen and folder has one, so reload, back/forward and bookmarks work. */
export const route = signal<Location>(read());
export const currentUrl = computed(() => route.value.path + (route.value.query.size ? `?${route.value.query}` : ''));

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === currentUrl.value) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  route.value = read();
}

export function startRouter(): void {
  addEventListener('popstate', () => {
    route.value = read();
  });
  // Same-origin links navigate inside the app; downloads, new tabs and modified clicks stay native.
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element).closest?.('a');
    if (!a || a.target || a.hasAttribute('download') || a.origin !== location.origin) return;
    if (/^\/(api|s)\//.test(a.pathname)) return;
    e.preventDefault();
    navigate(a.pathname + a.search);
  });
}

export const folderPath = (id: string | null) => (id ? `/files/${encodeURIComponent(id)}` : '/files');
