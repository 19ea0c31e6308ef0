import { ACTIONS } from '../files/actions.tsx';
import { Dialog, openDialog } from '../ui/dialog.tsx';

const NAVIGATION: [string, string][] = [
  ['↑ ↓ ← →', 'Move between items'],
  ['Shift + arrows', 'Extend the selection'],
  ['Ctrl + A', 'Select all'],
  ['Ctrl + Space', 'Add or remove the focused item'],
  ['Enter', 'Open the folder or preview the file'],
  ['Space', 'Preview the file'],
  ['Backspace, Alt + ↑', 'Go to the parent folder'],
  ['Esc', 'Clear the selection, close a dialog'],
  ['Shift + F10', 'Actions menu of the focused item'],
  ['/', 'Search'],
  ['Ctrl + K', 'Command palette'],
  ['?', 'This list'],
];

/** The `?` sheet: every key, taken from the same action list as the menus. */
export function openShortcuts(): void {
  const actions = ACTIONS.filter((a) => a.keys && a.id !== 'open').map(
    (a) =>
      [a.keys!.replace(/\+/g, ' + '), typeof a.label === 'string' ? a.label : a.id === 'star' ? 'Star / Unstar' : a.id] as [string, string],
  );
  void openDialog<void>((close) => (
    <Dialog title="Keyboard shortcuts" onClose={() => close()} wide>
      <div class="dialog-body shortcuts">
        {[
          ['Moving around', NAVIGATION],
          ['Actions', actions],
        ].map(([title, rows]) => (
          <section key={title as string}>
            <h3>{title as string}</h3>
            <dl>
              {(rows as [string, string][]).map(([k, what]) => (
                <div key={k} class="shortcut">
                  <dt>
                    <kbd>{k}</kbd>
                  </dt>
                  <dd>{what}</dd>
                </div>
              ))}
            </dl>
          </section>
        ))}
        <p class="muted small">On a Mac, ⌘ works wherever Ctrl is listed.</p>
      </div>
    </Dialog>
  ));
}
