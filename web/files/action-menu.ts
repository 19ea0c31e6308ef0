import type { Item } from '../../src/contract/files.ts';
import { toastError } from '../app/toasts.ts';
import { openMenu } from '../ui/menu.tsx';
import { type Action, type ActionContext, available, labelOf } from './actions.tsx';

/** An item's context menu (right click, long press, Shift+F10): the actions on `selection` that `fits` lets through. */
export function openActionMenu(
  x: number,
  y: number,
  ctx: ActionContext,
  selection: Item[],
  fits: (a: Action) => boolean = () => true,
): void {
  const menuCtx = { ...ctx, selection };
  openMenu(
    x,
    y,
    available(menuCtx)
      .filter((a) => !a.global && fits(a))
      .map((a) => ({
        label: labelOf(a, menuCtx),
        icon: a.icon,
        keys: a.keys,
        danger: a.danger,
        run: () => void Promise.resolve(a.run(menuCtx)).catch(toastError),
      })),
    selection.length === 1 ? `Actions for ${selection[0]!.name}` : `Actions for ${selection.length} items`,
  );
}
