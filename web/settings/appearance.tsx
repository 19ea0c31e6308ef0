import { theme, viewMode } from '../app/prefs.ts';
import { openShortcuts } from '../palette/shortcuts.tsx';
import { Section } from '../ui/page.tsx';

/** This browser's preferences (kept in this browser only). */
export function Appearance() {
  return (
    <Section title="Appearance" intro="Kept in this browser only; other browsers and devices keep their own.">
      <fieldset class="radio-row">
        <legend>Theme</legend>
        {(['system', 'light', 'dark'] as const).map((t) => (
          <label key={t} class="radio">
            <input type="radio" name="theme" checked={theme.value === t} onChange={() => (theme.value = t)} />
            <span>{t === 'system' ? 'Same as the system' : t === 'light' ? 'Light' : 'Dark'}</span>
          </label>
        ))}
      </fieldset>
      <fieldset class="radio-row">
        <legend>Show files as</legend>
        {(['list', 'grid'] as const).map((m) => (
          <label key={m} class="radio">
            <input type="radio" name="view" checked={viewMode.value === m} onChange={() => (viewMode.value = m)} />
            <span>{m === 'list' ? 'List' : 'Grid'}</span>
          </label>
        ))}
      </fieldset>
      <p>
        <button type="button" class="button" onClick={openShortcuts}>
          Keyboard shortcuts
        </button>
      </p>
    </Section>
  );
}
