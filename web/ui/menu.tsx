import { signal } from '@preact/signals';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { Icon, type IconName } from './icons.tsx';

export interface MenuEntry {
  label: string;
  icon?: IconName;
  keys?: string;
  danger?: boolean;
  run: () => void;
}

interface OpenMenu {
  x: number;
  y: number;
  entries: MenuEntry[];
  label: string;
  /** What had focus when the menu opened: it gets it back when the menu closes from the keyboard or an entry runs. */
  opener: HTMLElement | null;
}

const current = signal<OpenMenu | null>(null);

/** Opens a context menu at a point (right click, long press, the ⋯ button). */
export function openMenu(x: number, y: number, entries: MenuEntry[], label = 'Actions'): void {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  if (entries.length) current.value = { x, y, entries, label, opener };
}

const closeMenu = () => (current.value = null);

/** Closes the menu with focus back on its opener (not on the page's body), so a dialog an entry opens returns there too. */
function closeBack(): void {
  const opener = current.value?.opener;
  closeMenu();
  if (opener?.isConnected) opener.focus({ preventScroll: true });
}

export function MenuHost() {
  const m = current.value;
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || !m) return;
    const r = el.getBoundingClientRect();
    el.style.left = `${Math.max(4, Math.min(m.x, innerWidth - r.width - 4))}px`;
    el.style.top = `${Math.max(4, Math.min(m.y, innerHeight - r.height - 4))}px`;
    el.querySelector<HTMLElement>('[role=menuitem]')?.focus();
    const away = (e: Event) => {
      if (!el.contains(e.target as Node)) closeMenu();
    };
    addEventListener('pointerdown', away, true);
    addEventListener('resize', closeMenu);
    return () => {
      removeEventListener('pointerdown', away, true);
      removeEventListener('resize', closeMenu);
    };
  }, [m]);
  if (!m) return null;
  const items = () => [...(ref.current?.querySelectorAll<HTMLElement>('[role=menuitem]') ?? [])];
  return (
    <div
      ref={ref}
      class="menu"
      role="menu"
      aria-label={m.label}
      onKeyDown={(e) => {
        const list = items();
        const at = list.indexOf(document.activeElement as HTMLElement);
        if (e.key === 'ArrowDown') list[(at + 1) % list.length]?.focus();
        else if (e.key === 'ArrowUp') list[(at - 1 + list.length) % list.length]?.focus();
        else if (e.key === 'Home') list[0]?.focus();
        else if (e.key === 'End') list[list.length - 1]?.focus();
        else if (e.key === 'Escape' || e.key === 'Tab') closeBack();
        else return;
        e.preventDefault();
        e.stopPropagation();
      }}
    >
      {m.entries.map((entry) => (
        <button
          key={entry.label}
          type="button"
          role="menuitem"
          tabIndex={-1}
          aria-label={entry.label}
          aria-keyshortcuts={entry.keys}
          class={`menu-item ${entry.danger ? 'danger' : ''}`}
          onClick={() => {
            closeBack();
            entry.run();
          }}
        >
          {entry.icon ? <Icon name={entry.icon} size={18} /> : <span class="icon-space" />}
          <span class="menu-label">{entry.label}</span>
          {entry.keys && <kbd>{entry.keys}</kbd>}
        </button>
      ))}
    </div>
  );
}
