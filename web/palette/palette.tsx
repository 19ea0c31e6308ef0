import { signal } from '@preact/signals';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../api/index.ts';
import type { Item } from '../../src/contract/files.ts';
import { displayName, familyOf } from '../app/format.ts';
import { theme } from '../app/prefs.ts';
import { folderPath, navigate } from '../app/router.ts';
import { hideExtensions, isAdmin, isSubUser, sessionState, signOut } from '../app/session.ts';
import { searchSource } from '../app/listings.ts';
import { viewFileFrom } from '../files/actions.tsx';
import { Dialog } from '../ui/dialog.tsx';
import { FileIcon, Icon } from '../ui/icons.tsx';
import { type Command, screenCommands } from './commands.ts';
import { openShortcuts } from './shortcuts.tsx';
import { Name } from '../ui/name.tsx';

const isOpen = signal(false);
export const openPalette = () => {
  if (sessionState.value === 'signed-in') isOpen.value = true;
};

const PLACES: Command[] = [
  { label: 'Go to Home', run: () => navigate('/') },
  { label: 'Go to My files', run: () => navigate('/files') },
  { label: 'Go to Recent', run: () => navigate('/recent') },
  { label: 'Go to Starred', run: () => navigate('/starred') },
  { label: 'Go to Shared', run: () => navigate('/shared') },
  { label: 'Go to Trash', run: () => navigate('/trash') },
  { label: 'Go to Settings', run: () => navigate('/settings/profile') },
  { label: 'Go to Security: password and two-factor authentication', run: () => navigate('/settings/security') },
  { label: 'Go to Sessions', run: () => navigate('/settings/sessions') },
  { label: 'Go to Appearance', run: () => navigate('/settings/appearance') },
];

const OWNER_PLACES: Command[] = [{ label: 'Go to Sub-users', run: () => navigate('/settings/sub-users') }];

const ADMIN_PLACES: Command[] = [
  { label: 'Go to Admin: Users', run: () => navigate('/admin/users') },
  { label: 'Go to Admin: Instance settings', run: () => navigate('/admin/instance') },
  { label: 'Go to Admin: Orphan review', run: () => navigate('/admin/orphans') },
  { label: 'Go to Admin: Desktop clients', run: () => navigate('/admin/clients') },
  { label: 'Go to Admin: About and updates', run: () => navigate('/admin/about') },
];

function Palette({ close }: { close: () => void }) {
  const [q, setQ] = useState('');
  const [active, setActive] = useState(0);
  const [found, setFound] = useState<Item[]>([]);
  const listRef = useRef<HTMLUListElement>(null);
  useEffect(() => {
    if (q.trim().length < 2) return setFound([]);
    const ctl = new AbortController();
    const t = setTimeout(() => {
      api.files.search(q.trim(), 8, { signal: ctl.signal }).then(setFound, () => {});
    }, 150);
    return () => {
      clearTimeout(t);
      ctl.abort();
    };
  }, [q]);
  const commands = useMemo(() => {
    const general: Command[] = [
      ...screenCommands.value,
      ...PLACES,
      ...(isSubUser.value ? [] : OWNER_PLACES),
      ...(isAdmin.value ? ADMIN_PLACES : []),
      {
        label: theme.value === 'dark' ? 'Switch to light theme' : 'Switch to dark theme',
        run: () => (theme.value = theme.value === 'dark' ? 'light' : 'dark'),
      },
      { label: 'Keyboard shortcuts', keys: '?', run: openShortcuts },
      { label: 'Sign out', run: () => void signOut() },
    ];
    const needle = q.trim().toLowerCase();
    return needle ? general.filter((c) => c.label.toLowerCase().includes(needle)) : general;
  }, [q, screenCommands.value]);
  const entries: { id: string; label: string; keys?: string; item?: Item; run: () => void }[] = [
    ...commands.map((c, n) => ({ id: `c${n}`, ...c })),
    ...found.map((item) => ({
      id: `i${item.id}`,
      label: displayName(item.name, item.type, hideExtensions.value),
      item,
      run: () => (item.type === 'folder' ? navigate(folderPath(item.id)) : viewFileFrom('search', searchSource(q.trim()), [item], item)),
    })),
  ];
  const pick = (n: number) => {
    const e = entries[n];
    if (!e) return;
    close();
    e.run();
  };
  useEffect(() => {
    listRef.current?.querySelector(`[data-n="${active}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [active]);
  return (
    <Dialog title="Command palette" onClose={close} class="palette">
      <input
        class="palette-input"
        role="combobox"
        aria-label="Command or file name"
        aria-expanded="true"
        aria-controls="palette-list"
        aria-activedescendant={entries[active] ? `pal-${entries[active]!.id}` : undefined}
        placeholder="Type a command, a place or a file name"
        value={q}
        autofocus
        onInput={(e) => {
          setQ(e.currentTarget.value);
          setActive(0);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') setActive((a) => Math.min(entries.length - 1, a + 1));
          else if (e.key === 'ArrowUp') setActive((a) => Math.max(0, a - 1));
          else if (e.key === 'Enter') pick(active);
          else return;
          e.preventDefault();
        }}
      />
      <ul id="palette-list" ref={listRef} role="listbox" aria-label="Commands and files" class="palette-list">
        {entries.map((e, n) => (
          <li
            key={e.id}
            id={`pal-${e.id}`}
            data-n={n}
            role="option"
            // A name in two parts would read split in two; the option says it whole.
            aria-label={e.item ? e.label : undefined}
            aria-selected={n === active}
            class={n === active ? 'active' : ''}
            onMouseMove={() => setActive(n)}
            onClick={() => pick(n)}
          >
            {e.item ? <FileIcon family={familyOf(e.item)} size={20} /> : <Icon name="chevronRight" size={16} />}
            {e.item ? <Name text={e.label} /> : <span>{e.label}</span>}
            {e.keys && <kbd>{e.keys}</kbd>}
          </li>
        ))}
      </ul>
      {/* Outside the list: a listbox holds options only. */}
      {entries.length === 0 && (
        <p class="muted palette-empty" role="status">
          Nothing matches.
        </p>
      )}
    </Dialog>
  );
}

/** Ctrl/Cmd+K: every action of the screen, every place, and files and folders by name. */
export function CommandPalette() {
  if (!isOpen.value) return null;
  return <Palette close={() => (isOpen.value = false)} />;
}
