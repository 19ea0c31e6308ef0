import { effect, signal } from '@preact/signals';

// Preferences are the only thing kept in localStorage; the session lives in the httpOnly cookie.
function stored<T extends string>(key: string, allowed: readonly T[], fallback: T) {
  let initial = fallback;
  try {
    const v = localStorage.getItem(`coffer.${key}`);
    if (v && (allowed as readonly string[]).includes(v)) initial = v as T;
  } catch {
    // Storage disabled: preferences last for this page only.
  }
  const s = signal<T>(initial);
  effect(() => {
    try {
      localStorage.setItem(`coffer.${key}`, s.value);
    } catch {
      // Same as above.
    }
  });
  return s;
}

export const theme = stored('theme', ['system', 'light', 'dark'] as const, 'system');
export const viewMode = stored('view', ['list', 'grid'] as const, 'list');
export const sortBy = stored('sortBy', ['name', 'size', 'modified'] as const, 'name');
export const sortOrder = stored('sortOrder', ['asc', 'desc'] as const, 'asc');
export const photoSize = stored('photoSize', ['small', 'medium', 'large'] as const, 'medium');
export type PhotoSize = typeof photoSize.value;
/** Whose photos Photos shows: the account's own, what others share with it, or both. */
export const photosWhose = stored('photosWhose', ['all', 'mine', 'shared'] as const, 'all');

export function applyTheme(): void {
  effect(() => {
    const t = theme.value;
    if (t === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = t;
  });
}
