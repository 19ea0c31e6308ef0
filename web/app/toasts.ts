import { signal } from '@preact/signals';

export interface Toast {
  id: number;
  message: string;
  kind: 'info' | 'error' | 'progress';
  action?: { label: string; run: () => void };
  /** 0..1 for work with known progress; undefined for none. */
  progress?: number;
}

/** Messages at the bottom of the screen: results with Undo, errors, background work until done. */
export const toasts = signal<Toast[]>([]);
let next = 1;
const timers = new Map<number, ReturnType<typeof setTimeout>>();
/** Why a toast is held on screen now: the pointer came onto it, the focus is inside it (WCAG 2.2.1). */
type Hold = 'pointer' | 'focus';
const holds = new Map<number, Set<Hold>>();

function forget(id: number): void {
  clearTimeout(timers.get(id));
  timers.delete(id);
  holds.delete(id);
}

export function dismiss(id: number): void {
  toasts.value = toasts.value.filter((t) => t.id !== id);
  forget(id);
}

/** Keeps a toast on screen, its time stopped, until every hold on it is released. */
export function holdToast(id: number, why: Hold): void {
  if (!toasts.value.some((t) => t.id === id)) return;
  holds.set(id, (holds.get(id) ?? new Set()).add(why));
  clearTimeout(timers.get(id));
  timers.delete(id);
}

/** Ends one hold; with none left the toast has its whole time again, counted from now. */
export function releaseToast(id: number, why: Hold): void {
  const held = holds.get(id);
  if (!held?.delete(why) || held.size > 0) return;
  holds.delete(id);
  const t = toasts.value.find((t) => t.id === id);
  if (t) schedule(t);
}

function schedule(t: Toast): void {
  clearTimeout(timers.get(t.id));
  if (t.kind === 'progress' || holds.has(t.id)) return;
  // Errors and undo offers stay long enough to read and act on.
  const ms = t.kind === 'error' ? 10_000 : t.action ? 8000 : 4000;
  timers.set(
    t.id,
    setTimeout(() => dismiss(t.id), ms),
  );
}

export function toast(message: string, opts: Partial<Omit<Toast, 'id' | 'message'>> = {}): number {
  const t: Toast = { id: next++, message, kind: opts.kind ?? 'info', action: opts.action, progress: opts.progress };
  const shown = toasts.value;
  // The oldest gives way to keep four at most; its timer and holds go with it.
  for (const old of shown.slice(0, -3)) forget(old.id);
  toasts.value = [...shown.slice(-3), t];
  schedule(t);
  return t.id;
}

function updateToast(id: number, patch: Partial<Omit<Toast, 'id'>>): void {
  let found: Toast | undefined;
  toasts.value = toasts.value.map((t) => (t.id === id ? (found = { ...t, ...patch }) : t));
  if (found) schedule(found);
  else toast(patch.message ?? '', patch);
}

export const toastError = (err: unknown): void => {
  toast(err instanceof Error ? err.message : String(err), { kind: 'error' });
};

/** Shows background work until it ends: its result (with an optional Undo) or its error. */
export async function track<T>(
  label: string,
  work: (progress: (fraction: number) => void) => Promise<T>,
  done: (result: T) => { message: string; action?: Toast['action'] },
  failed: (err: Error) => string = (err) => err.message,
): Promise<T | undefined> {
  let id: number | null = null;
  // Quick work shows only its result; anything slower shows it is running.
  const show = setTimeout(() => (id = toast(label, { kind: 'progress' })), 300);
  const progress = (p: number) => {
    if (id !== null) updateToast(id, { kind: 'progress', message: `${label} ${Math.round(p * 100)}%`, progress: p });
  };
  try {
    const result = await work(progress);
    clearTimeout(show);
    const d = done(result);
    if (id !== null) updateToast(id, { kind: 'info', message: d.message, action: d.action, progress: undefined });
    else toast(d.message, { action: d.action });
    return result;
  } catch (err) {
    clearTimeout(show);
    const message = failed(err instanceof Error ? err : new Error(String(err)));
    if (id !== null) updateToast(id, { kind: 'error', message, progress: undefined });
    else toast(message, { kind: 'error' });
    return undefined;
  }
}
