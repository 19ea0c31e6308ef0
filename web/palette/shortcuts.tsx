import { actionKeys, NAVIGATION_KEYS } from '../files/key-map.ts';
import { Dialog, openDialog } from '../ui/dialog.tsx';

/** The `?` sheet: every key, taken from the same action list as the menus. */
export function openShortcuts(): void {
  void openDialog<void>((close) => (
    <Dialog title="Keyboard shortcuts" onClose={() => close()} wide>
      <div class="dialog-body shortcuts">
        {[
          ['Moving around', NAVIGATION_KEYS],
          ['Actions', actionKeys()],
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
