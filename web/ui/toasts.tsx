import { render } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { dismiss, holdToast, releaseToast, toasts } from '../app/toasts.ts';
import { Icon } from './icons.tsx';

/**
 * The stack's own element, moved into the topmost modal dialog while one is open: the page behind a modal is under
 * the browser's top layer and inert, so a toast left there could be neither seen above the dialog nor pressed, and a
 * screen reader keeps to the dialog, so it is announced only from inside it.
 */
const host = document.createElement('div');

/** Puts the toasts in the modal dialog now on top, or back on the page with none (`null`). */
export function placeToasts(modal: HTMLDialogElement | null): void {
  (modal ?? document.body).append(host);
}

/** What a part floating at the window's foot marks itself with, so toasts rise above it rather than cover it. */
export const DOCKED = { 'data-docked': 'bottom' } as const;

/** The space kept between the toasts and the window's edges, or the dialog they keep clear of. */
const GAP = 12;
/** How far above the window's foot the toasts sit when nothing is under them. */
const FOOT = 20;

/** What a press can land on that the person may press again next. */
const CONTROLS = 'button, a[href], input, select, textarea, summary, [role="button"], [tabindex]';

/**
 * The control last focused or pressed: Safari and iOS do not focus a button that is pressed, so there the press
 * stands for the focus (null: the last press was on no control).
 */
let used: Element | null = null;
addEventListener('focusin', (e) => {
  used = e.target instanceof Element ? e.target : null;
});
addEventListener(
  'pointerdown',
  (e) => {
    used = e.target instanceof Element ? e.target.closest(CONTROLS) : null;
  },
  { capture: true },
);

/**
 * The line of controls just used: the control last focused or pressed and those level with it beside it (its row
 * of buttons), which the person is about to press next; null with none, or one in the toasts.
 */
function focusedLine(): DOMRect | null {
  const el = used?.isConnected ? used : document.activeElement;
  if (!(el instanceof HTMLElement) || el === document.body || host.contains(el)) return null;
  const r = el.getBoundingClientRect();
  // Taller is a region (the page's main, focused by a press on its empty space), not a line of controls.
  if (r.height === 0 || r.height > innerHeight / 4) return null;
  let [left, right, top, bottom] = [r.left, r.right, r.top, r.bottom];
  for (const s of el.parentElement?.children ?? []) {
    const b = s.getBoundingClientRect();
    if (b.height === 0 || b.top >= r.bottom || b.bottom <= r.top) continue;
    [left, right, top, bottom] = [Math.min(left, b.left), Math.max(right, b.right), Math.min(top, b.top), Math.max(bottom, b.bottom)];
  }
  return new DOMRect(left, top, right - left, bottom - top);
}

/**
 * How far above the window's foot the toasts must sit to leave every docked part under them uncovered, and the line
 * of controls the focus is on if they would cover it: the highest top of those that share the toasts' width, at most
 * half the window (a taller panel keeps its head).
 */
function clearance(region: HTMLElement): number {
  const band = region.getBoundingClientRect();
  const across = (r: DOMRect) => r.left < band.right && r.right > band.left;
  let top = innerHeight;
  for (const el of document.querySelectorAll<HTMLElement>('[data-docked="bottom"]')) {
    const r = el.getBoundingClientRect();
    const atFoot = r.height > 0 && r.bottom > innerHeight * 0.6 && r.top < innerHeight;
    if (atFoot && across(r)) top = Math.min(top, r.top);
  }
  const line = focusedLine();
  // Where the toasts sit above the docked parts alone: the line rises them further only if they would cover it.
  const foot = innerHeight - Math.max(FOOT, innerHeight - top + GAP);
  if (line && across(line) && line.bottom > foot - region.offsetHeight - GAP && line.top < foot) top = Math.min(top, line.top);
  return Math.min(innerHeight - top, innerHeight / 2);
}

/** Sets the region this far above the window's foot. */
const lift = (region: HTMLElement, px: number) => {
  region.style.bottom = `${px}px`;
};

/**
 * Keeps the toasts clear of what they would cover while they show. On the page: above the parts docked at its foot,
 * which come and go, scroll and resize under them, and above the line of controls the focus is on. With a modal dialog open (the docked parts are behind its backdrop):
 * in the band below the dialog, else the dialog makes room at the window's foot (`--toast-room`) and keeps it until
 * the toasts are gone, so it does not jump back and forth as they come and go.
 */
function useClearance(region: { current: HTMLElement | null }, shown: readonly unknown[]): void {
  const room = useRef<HTMLElement | null>(null);
  const measure = () => {
    const el = region.current;
    if (!el?.childElementCount) return;
    const modal = el.closest('dialog');
    if (room.current && room.current !== modal) {
      room.current.style.removeProperty('--toast-room');
      room.current = null;
    }
    if (!modal) return lift(el, Math.max(FOOT, clearance(el) + GAP));
    const h = el.offsetHeight;
    if (room.current !== modal) {
      const d = modal.getBoundingClientRect();
      const below = innerHeight - d.bottom;
      if (below >= h + 2 * GAP) return lift(el, Math.min(FOOT, (below - h) / 2));
      room.current = modal;
    }
    modal.style.setProperty('--toast-room', `${h + GAP}px`);
    lift(el, GAP);
  };
  // Each toast that comes or goes changes the stack's height: placed again before it is painted.
  useLayoutEffect(measure, [shown]);
  const showing = shown.length > 0;
  useLayoutEffect(() => {
    if (!showing) return;
    let frame = 0;
    const soon = () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(measure);
    };
    const changes = new MutationObserver(soon);
    changes.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['class', 'open'] });
    addEventListener('resize', soon);
    addEventListener('focusin', soon);
    addEventListener('scroll', soon, { capture: true, passive: true });
    return () => {
      cancelAnimationFrame(frame);
      changes.disconnect();
      removeEventListener('resize', soon);
      removeEventListener('focusin', soon);
      removeEventListener('scroll', soon, { capture: true });
      room.current?.style.removeProperty('--toast-room');
      room.current = null;
    };
  }, [showing]);
}

/**
 * Where the pointer was at its last move. A pointer resting where a toast appears gets an enter with no move (the
 * browser's hover update), at these same coordinates; one that comes onto a toast enters before its move is seen here.
 */
let pointerAt = '';
const notePointer = (e: PointerEvent) => {
  pointerAt = `${e.clientX},${e.clientY}`;
};

// A press on a toast's button keeps the focus where the person was (a dialog's field, a row of the list).
const keepFocus = (e: MouseEvent) => e.preventDefault();

/** The toast stack: polite for results and progress, assertive for errors. */
function ToastStack() {
  const region = useRef<HTMLDivElement>(null);
  const shown = toasts.value;
  useClearance(region, shown);
  return (
    <div ref={region} class="toasts" aria-live="polite" role="region" aria-label="Notifications">
      {shown.map((t) => (
        <div
          key={t.id}
          class={`toast ${t.kind}`}
          role={t.kind === 'error' ? 'alert' : 'status'}
          onPointerEnter={(e) => {
            if (`${e.clientX},${e.clientY}` !== pointerAt) holdToast(t.id, 'pointer');
          }}
          onPointerLeave={() => releaseToast(t.id, 'pointer')}
          onFocusIn={() => holdToast(t.id, 'focus')}
          onFocusOut={(e) => {
            if (!e.currentTarget.contains(e.relatedTarget as Node | null)) releaseToast(t.id, 'focus');
          }}
        >
          {t.kind === 'error' && <Icon name="alert" />}
          <span class="toast-text">{t.message}</span>
          {t.progress !== undefined && <progress class="toast-progress" value={t.progress} max={1} aria-label={t.message} />}
          {t.action && (
            <button
              type="button"
              class="toast-action"
              onMouseDown={keepFocus}
              onClick={() => {
                dismiss(t.id);
                t.action!.run();
              }}
            >
              {t.action.label}
            </button>
          )}
          <button type="button" class="icon-button small" aria-label="Dismiss" onMouseDown={keepFocus} onClick={() => dismiss(t.id)}>
            <Icon name="close" size={16} />
          </button>
        </div>
      ))}
    </div>
  );
}

/** Mounts the stack in its own element (see `host`), on the page until a modal dialog takes it. */
export function Toasts() {
  useLayoutEffect(() => {
    render(<ToastStack />, host);
    if (!host.isConnected) placeToasts(null);
    addEventListener('pointermove', notePointer, { capture: true, passive: true });
    return () => {
      removeEventListener('pointermove', notePointer, { capture: true });
      render(null, host);
      host.remove();
    };
  }, []);
  return null;
}
