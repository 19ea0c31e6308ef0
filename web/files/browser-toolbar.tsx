import type { Listing } from '../app/listings.ts';
import { sortBy, sortOrder, viewMode } from '../app/prefs.ts';
import { can } from '../app/session.ts';
import { toastError } from '../app/toasts.ts';
import { Icon } from '../ui/icons.tsx';
import { openMenu } from '../ui/menu.tsx';
import { SelectionToolbar, type Tool, ToolButton, useWindowWidth } from '../ui/selection-toolbar.tsx';
import { type Action, type ActionContext, labelOf } from './actions.tsx';
import { emptyTrash } from './item-operations.ts';
import { DOCKED } from '../ui/toasts.tsx';

/** Below this width (styles.css) the selection's actions sit in a bar along the bottom of the screen. */
const BOTTOM_BAR_MAX = 760;

/**
 * How many action buttons the bottom bar holds beside Clear, the count and More (about 210 px together),
 * each 44 px wide and 6 apart; above the phone width every action has room.
 */
function selectionBarRoom(width: number): number {
  return width > BOTTOM_BAR_MAX ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor((width - 210) / 50));
}

/**
 * The selection's buttons that fit the bar (a danger one always; on a phone as many as fit) and those handed to
 * More (the rest, then the less used), so no action hides past the bar's edge.
 */
export function useSelectionBar<T extends { danger?: boolean; secondary?: boolean }>(items: T[]): { shown: T[]; more: T[] } {
  const primary = items.filter((a) => !a.secondary);
  const room = selectionBarRoom(useWindowWidth()) - primary.filter((a) => a.danger).length;
  let kept = 0;
  const shown = primary.filter((a) => a.danger || kept++ < room);
  return { shown, more: [...primary.filter((a) => !shown.includes(a)), ...items.filter((a) => a.secondary)] };
}

/** An action as a toolbar or menu button in this context. */
const toolOf = (a: Action, ctx: ActionContext, run: (a: Action) => unknown): Tool => ({
  id: a.id,
  label: labelOf(a, ctx),
  icon: a.icon,
  keys: a.keys,
  danger: a.danger,
  run: () => void run(a),
});

/** List view, grid view and the details panel's switch. */
export function ViewSwitch({ infoOpen, setInfoOpen }: { infoOpen: boolean; setInfoOpen: (open: boolean) => void }) {
  return (
    <div class="view-switch" role="group" aria-label="View">
      <button
        type="button"
        class="icon-button"
        aria-label="List view"
        aria-pressed={viewMode.value === 'list'}
        onClick={() => (viewMode.value = 'list')}
      >
        <Icon name="list" />
      </button>
      <button
        type="button"
        class="icon-button"
        aria-label="Grid view"
        aria-pressed={viewMode.value === 'grid'}
        onClick={() => (viewMode.value = 'grid')}
      >
        <Icon name="grid" />
      </button>
      <button type="button" class="icon-button" aria-label="Details" aria-pressed={infoOpen} onClick={() => setInfoOpen(!infoOpen)}>
        <Icon name="info" />
      </button>
    </div>
  );
}

/** The file browser's toolbar: the selection's actions, or with nothing selected the view's own (upload, new folder, sort…). */
export function BrowserToolbar(p: {
  ctx: ActionContext;
  actions: Action[];
  run: (a: Action) => unknown;
  onClear: () => void;
  sortable: boolean;
  count: number;
}) {
  const { ctx, actions, run } = p;
  const globals = actions.filter((a) => a.global);
  const { shown: onSelection, more } = useSelectionBar(actions.filter((a) => !a.global && a.id !== 'open'));
  return (
    <SelectionToolbar
      count={ctx.selection.length}
      onClear={p.onClear}
      tools={onSelection.map((a) => toolOf(a, ctx, run))}
      more={more.map((a) => toolOf(a, ctx, run))}
      idleLabel="Folder actions"
      idle={
        <>
          {globals.map((a) => (
            <ToolButton key={a.id} tool={toolOf(a, ctx, run)} class={`tool global ${a.id === 'upload-files' ? 'primary' : ''}`} />
          ))}
          {ctx.kind === 'trash' && can('files.trash') && p.count > 0 && <EmptyTrash listing={ctx.listing} />}
          {viewMode.value === 'grid' && p.sortable && <SortSelect />}
        </>
      }
    />
  );
}

function EmptyTrash({ listing }: { listing: Listing }) {
  return (
    <button type="button" class="tool danger" onClick={() => emptyTrash(listing).catch(toastError)}>
      <Icon name="trash" size={18} />
      <span class="tool-label">Empty trash</span>
    </button>
  );
}

/** The grid has no column headers to sort by: a menu instead. */
function SortSelect() {
  return (
    <label class="sort-select">
      <span class="sr-only">Sort by</span>
      <select
        value={`${sortBy.value}:${sortOrder.value}`}
        onChange={(e) => {
          const [b, o] = e.currentTarget.value.split(':') as [typeof sortBy.value, typeof sortOrder.value];
          sortBy.value = b;
          sortOrder.value = o;
        }}
      >
        <option value="name:asc">Name A–Z</option>
        <option value="name:desc">Name Z–A</option>
        <option value="modified:desc">Newest first</option>
        <option value="modified:asc">Oldest first</option>
        <option value="size:desc">Largest first</option>
        <option value="size:asc">Smallest first</option>
      </select>
    </label>
  );
}

/** On a phone the toolbar's upload and new-folder buttons give way to one floating button. */
export function NewButton({ globals, ctx, run }: { globals: Action[]; ctx: ActionContext; run: (a: Action) => unknown }) {
  return (
    <button
      type="button"
      class="fab"
      {...DOCKED}
      aria-label="New"
      aria-haspopup="menu"
      onClick={(e) => {
        const r = e.currentTarget.getBoundingClientRect();
        openMenu(
          r.right,
          r.top,
          globals.map((a) => ({ label: labelOf(a, ctx), icon: a.icon, run: () => run(a) })),
          'New',
        );
      }}
    >
      <Icon name="plus" size={26} />
    </button>
  );
}
