import type { LinkOptions, ShareLinkView, ShareMode } from '../../src/contract/sharing.ts';
import { Field } from '../ui/form.tsx';

const MODES: { value: ShareMode; label: string; hint: string }[] = [
  { value: 'view', label: 'View and download', hint: 'Visitors browse and download.' },
  { value: 'upload', label: 'Upload only', hint: 'A drop box: visitors send files and see nothing else.' },
  { value: 'view_upload', label: 'View and upload', hint: 'Visitors browse, download and add files.' },
];

/** A password people can read out: four groups of four from an alphabet without look-alikes. */
function generatePassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const chars = [...bytes].map((b) => alphabet[b % alphabet.length]);
  return [0, 4, 8, 12].map((i) => chars.slice(i, i + 4).join('')).join('-');
}

/** What the settings read of a link: a file link, or an album's (always view). */
export type LinkLike = Pick<ShareLinkView, 'mode' | 'hasPassword' | 'maxDownloads' | 'downloads'>;

/** One line of what a link is now: mode, password, downloads, last use. */
export function linkState(link: LinkLike): string {
  const parts = [MODES.find((m) => m.value === link.mode)!.label];
  parts.push(link.hasPassword ? 'Password protected' : 'No password');
  parts.push(
    link.maxDownloads === null
      ? `${link.downloads} download${link.downloads === 1 ? '' : 's'}`
      : `${link.downloads} of ${link.maxDownloads} downloads used`,
  );
  return parts.join(' · ');
}

/** Password, mode and download limit, as a form section; `onChange` gets the options the owner set. */
export function LinkSettings(props: {
  folders: boolean;
  link: LinkLike | null;
  value: SettingsState;
  onChange: (next: SettingsState) => void;
}) {
  const { value: v, onChange } = props;
  const set = (patch: Partial<SettingsState>) => onChange({ ...v, ...patch });
  const hasPassword = props.link?.hasPassword ?? false;
  // A password is set and stays unless the owner types a new one or removes it.
  const keeping = hasPassword && !v.removePassword;
  return (
    <div class="link-settings">
      {props.folders && (
        <fieldset class="radio-column">
          <legend>Visitors can</legend>
          {MODES.map((m) => (
            <div key={m.value} class="radio-choice">
              <label class="radio">
                <input
                  type="radio"
                  name="mode"
                  value={m.value}
                  checked={v.mode === m.value}
                  aria-describedby={`share-mode-${m.value}`}
                  onChange={() => set({ mode: m.value })}
                />
                <span>{m.label}</span>
              </label>
              <small id={`share-mode-${m.value}`} class="muted">
                {m.hint}
              </small>
            </div>
          ))}
        </fieldset>
      )}
      <Field
        label={keeping ? 'New password' : 'Password'}
        hint={keeping && 'Leave it empty to keep the current password.'}
        beside={
          <>
            <button type="button" class="button" aria-pressed={v.showPassword} onClick={() => set({ showPassword: !v.showPassword })}>
              {v.showPassword ? 'Hide password' : 'Show password'}
            </button>
            <button
              type="button"
              class="button"
              onClick={() => set({ password: generatePassword(), showPassword: true, removePassword: false })}
            >
              Generate password
            </button>
          </>
        }
        after={
          hasPassword && (
            <label class="checkbox">
              <input
                type="checkbox"
                checked={v.removePassword}
                onChange={(e) => set({ removePassword: e.currentTarget.checked, password: '' })}
              />
              <span>Remove password</span>
            </label>
          )
        }
      >
        <input
          id="share-password"
          // Preact's types tie a text input's other attributes to type text; the attributes here suit both.
          type={(v.showPassword ? 'text' : 'password') as 'text'}
          value={v.password}
          maxLength={128}
          autocomplete="new-password"
          placeholder={keeping ? 'Password set' : 'No password'}
          onInput={(e) => set({ password: e.currentTarget.value, removePassword: false })}
        />
      </Field>
      <div class="field limit-row">
        <label class="checkbox">
          <input type="checkbox" checked={v.limitDownloads} onChange={(e) => set({ limitDownloads: e.currentTarget.checked })} />
          <span>Limit downloads</span>
        </label>
        {v.limitDownloads && (
          <input
            type="number"
            aria-label="Maximum downloads"
            min={1}
            max={100000}
            step={1}
            value={v.maxDownloads}
            onInput={(e) => set({ maxDownloads: e.currentTarget.value })}
          />
        )}
      </div>
    </div>
  );
}

export interface SettingsState {
  mode: ShareMode;
  password: string;
  showPassword: boolean;
  removePassword: boolean;
  limitDownloads: boolean;
  maxDownloads: string;
}

export const settingsOf = (link: LinkLike | null): SettingsState => ({
  mode: link?.mode ?? 'view',
  password: '',
  showPassword: false,
  removePassword: false,
  limitDownloads: link?.maxDownloads != null,
  maxDownloads: String(link?.maxDownloads ?? 10),
});

/** The options to send: only what the owner changed from the link (everything, for a new link). */
export function optionsFrom(v: SettingsState, link: LinkLike | null, folders: boolean): LinkOptions | string {
  const out: LinkOptions = {};
  if (v.password) {
    if (v.password.length < 6 || v.password.length > 128) return 'The password must be 6 to 128 characters.';
    out.password = v.password;
  } else if (v.removePassword) out.password = null;
  if (folders && v.mode !== (link?.mode ?? 'view')) out.mode = v.mode;
  const max = v.limitDownloads ? Number(v.maxDownloads) : null;
  if (max !== null && (!Number.isInteger(max) || max < 1 || max > 100_000))
    return 'The download limit must be a whole number from 1 to 100000.';
  if (max !== (link?.maxDownloads ?? null)) out.maxDownloads = max;
  return out;
}
