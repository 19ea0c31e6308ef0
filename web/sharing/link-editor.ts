import { useEffect, useRef, useState } from 'preact/hooks';
import type { LinkOptions } from '../../src/contract/sharing.ts';
import type { ExpiryChoice } from './expiry-field.tsx';
import type { SaveStatus } from './save-status.ts';
import { type LinkLike, optionsFrom, type SettingsState, settingsOf } from './link-settings.tsx';

/**
 * A Link part's link and its settings as they are edited (a file's, an album's): every change saves as it is made,
 * one save after another against the link as the last one left it, so answers never cross; a typed password waits
 * for "Set password". `saveOnClose`: what is still to save when the part closes (a debounced change, a typed
 * password) is saved then, else dropped.
 */
export function useLinkEditor<L>(o: {
  say: (status: SaveStatus) => void;
  /** What the settings read of the link. */
  view: (link: L) => LinkLike;
  folders: boolean;
  /** Sends the options changed: to the link there is (`now`), or with a new one. */
  apply: (now: L | null, changes: LinkOptions) => Promise<void>;
  saveOnClose: boolean;
}) {
  const { say } = o;
  const [link, setLink] = useState<L | null | undefined>(undefined);
  const [settings, setSettings] = useState<SettingsState>(settingsOf(null));
  const choice = useRef<ExpiryChoice>('7d');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const queue = useRef<Promise<void>>(Promise.resolve());
  const latest = useRef<L | null>(null);
  const keep = (l: L | null) => setLink((latest.current = l));
  const pending = useRef<(() => void) | null>(null);
  const unsaved = useRef<(() => void) | null>(null);
  const seen = () => latest.current && o.view(latest.current);
  useEffect(
    () => () => {
      clearTimeout(timer.current);
      if (!o.saveOnClose) return;
      pending.current?.();
      unsaved.current?.();
    },
    [],
  );

  const save = (what: string, run: () => Promise<void>) => {
    say({ kind: 'saving', text: 'Saving…' });
    queue.current = queue.current.then(() =>
      run().then(
        () => say({ kind: 'saved', text: what }),
        (err: Error) => say({ kind: 'error', text: err.message }),
      ),
    );
    return queue.current;
  };

  const saveOptions = (v: SettingsState, withPassword: boolean) => {
    const wanted = withPassword ? v : { ...v, password: '' };
    const options = optionsFrom(wanted, seen(), o.folders);
    if (typeof options === 'string') return say({ kind: 'error', text: options });
    if (Object.keys(options).length === 0) return;
    const what = options.password ? 'Password set' : options.password === null ? 'Password removed' : 'Link settings saved';
    if (withPassword) {
      unsaved.current = null;
      setSettings((now) => ({ ...now, password: '', removePassword: false }));
    }
    void save(what, async () => {
      const now = latest.current;
      const changes = optionsFrom(wanted, seen(), o.folders) as LinkOptions;
      if (Object.keys(changes).length > 0) await o.apply(now, changes);
    });
  };

  const change = (next: SettingsState) => {
    const before = settings;
    setSettings(next);
    // Typing or generating a password waits for "Set password"; showing it changes nothing.
    if ((next.password !== before.password && !next.removePassword) || next.showPassword !== before.showPassword) return;
    clearTimeout(timer.current);
    pending.current = () => saveOptions(next, false);
    timer.current = setTimeout(
      () => {
        pending.current = null;
        saveOptions(next, false);
      },
      next.maxDownloads !== before.maxDownloads ? 600 : 0,
    );
  };
  unsaved.current = settings.password ? () => saveOptions(settings, true) : null;

  /** Nothing left to save: the link is going. */
  const drop = () => {
    clearTimeout(timer.current);
    pending.current = null;
    unsaved.current = null;
  };

  return { link, keep, settings, setSettings, choice, save, saveOptions, change, drop };
}

/** What a Link part's controls use of its editor. */
export type LinkEdits = Pick<ReturnType<typeof useLinkEditor>, 'settings' | 'change' | 'saveOptions'>;
