import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Icon, type IconName } from './icons.tsx';
import { openMenu } from './menu.tsx';
import { DOCKED } from './toasts.tsx';

/** One button of a list's toolbar: a selection action, or a tool the view adds. */
export interface Tool {
  id: string;
  label: string;
  icon: IconName;
  /** The key that runs it, shown in its tooltip (only where the list listens for it). */
  keys?: string;
  danger?: boolean;
  /** The server is answering its last press: pressed again, it sends nothing. */
  busy?: boolean;
  run: () => void;
}

export function useWindowWidth(): number {
  const [width, setWidth] = useState(window.innerWidth);
  useEffect(() => {
    const resized = () => setWidth(window.innerWidth);
    window.addEventListener('resize', resized);
    return () => window.removeEventListener('resize', resized);
  }, []);
  return width;
}

/**
 * The tools that fit the bar's width, the others handed to More from the end (a danger one stays): a label
 * longer than the view planned for, or a narrow window, must not push an action past the bar's hidden edge.
 */
function useFit(all: Tool[], extra: Tool[], active: boolean) {
  const ref = useRef<HTMLDivElement>(null);
  const width = useWindowWidth();
  // Another set of tools or another width starts again from all of them.
  const key = `${all.map((t) => t.id).join()}|${width}`;
  const [fit, setFit] = useState({ key, cut: 0 });
  const cut = fit.key === key ? fit.cut : 0;
  const movable = all.filter((t) => !t.danger);
  const moved = new Set(movable.slice(movable.length - cut).map((t) => t.id));
  useLayoutEffect(() => {
    const el = ref.current;
    if (active && el && el.scrollWidth > el.clientWidth + 1 && cut < movable.length) setFit({ key, cut: cut + 1 });
  });
  return {
    ref,
    tools: cut ? all.filter((t) => !moved.has(t.id)) : all,
    more: cut ? [...all.filter((t) => moved.has(t.id)), ...extra] : extra,
  };
}

/**
 * A list's toolbar: while items are selected, Clear, the count and the actions on them (those that do not fit
 * under More); otherwise what the view offers with nothing selected (`idle`).
 */
export function SelectionToolbar(p: {
  count: number;
  onClear: () => void;
  tools: Tool[];
  more?: Tool[];
  /** The toolbar's name with nothing selected. */
  idleLabel: string;
  idle: ComponentChildren;
}) {
  const { tools, more, ref } = useFit(p.tools, p.more ?? [], p.count > 0);
  return (
    <div
      ref={ref}
      class={`toolbar ${p.count ? 'has-selection' : ''}`}
      {...DOCKED}
      role="toolbar"
      aria-label={p.count ? 'Selection actions' : p.idleLabel}
    >
      {p.count > 0 ? (
        <>
          <button type="button" class="icon-button" aria-label="Clear selection" onClick={p.onClear}>
            <Icon name="close" size={18} />
          </button>
          <span class="selection-count" aria-live="polite">
            {p.count} selected
          </span>
          {tools.map((a) => (
            <ToolButton key={a.id} tool={a} class={`tool ${a.danger ? 'danger' : ''}`} />
          ))}
          {more.length > 0 && (
            <button
              type="button"
              class="tool"
              aria-label="More actions"
              aria-haspopup="menu"
              onClick={(e) => {
                const r = (e.currentTarget as HTMLElement).getBoundingClientRect();
                openMenu(
                  r.left,
                  r.bottom + 4,
                  more.map((a) => ({ label: a.label, icon: a.icon, keys: a.keys, run: a.run })),
                  'More actions',
                );
              }}
            >
              <Icon name="more" size={18} />
            </button>
          )}
        </>
      ) : (
        p.idle
      )}
    </div>
  );
}

/** A toolbar button: its icon and label, its key in the tooltip. */
export function ToolButton({ tool, class: cls }: { tool: Tool; class: string }) {
  return (
    <button
      type="button"
      class={cls}
      title={tool.keys ? `${tool.label} (${tool.keys})` : undefined}
      aria-keyshortcuts={tool.keys}
      aria-disabled={tool.busy || undefined}
      onClick={tool.run}
    >
      <Icon name={tool.icon} size={18} />
      <span class="tool-label">{tool.label}</span>
    </button>
  );
}
