import { dismiss, toasts } from '../app/toasts.ts';
import { Icon } from './icons.tsx';

/** The toast stack: polite for results and progress, assertive for errors. */
export function Toasts() {
  return (
    <div class="toasts" aria-live="polite" role="region" aria-label="Notifications">
      {toasts.value.map((t) => (
        <div key={t.id} class={`toast ${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
          {t.kind === 'error' && <Icon name="alert" />}
          <span class="toast-text">{t.message}</span>
          {t.progress !== undefined && <progress class="toast-progress" value={t.progress} max={1} aria-label={t.message} />}
          {t.action && (
            <button
              type="button"
              class="toast-action"
              onClick={() => {
                dismiss(t.id);
                t.action!.run();
              }}
            >
              {t.action.label}
            </button>
          )}
          <button type="button" class="icon-button small" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            <Icon name="close" size={16} />
          </button>
        </div>
      ))}
    </div>
  );
}
