import { ACTIONS, type Action } from './actions.tsx';

/** The keys a list answers besides its actions' (the `?` sheet lists them first). */
export const NAVIGATION_KEYS: [string, string][] = [
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

/** Every action's key and name, from the ACTIONS table (Enter opens through the list itself). */
export function actionKeys(): [string, string][] {
  return ACTIONS.filter((a) => a.keys && a.id !== 'open').map((a) => [
    a.keys!.replace(/\+/g, ' + '),
    typeof a.label === 'string' ? a.label : a.id === 'star' ? 'Star / Unstar' : a.id,
  ]);
}

/** `Ctrl` stands for Ctrl or ⌘; a plain letter means no modifier at all. */
function matches(e: KeyboardEvent, keys: string): boolean {
  const parts = keys.split('+');
  const key = parts.pop()!;
  const ctrl = parts.includes('Ctrl');
  const shift = parts.includes('Shift');
  if (ctrl !== (e.ctrlKey || e.metaKey) || shift !== e.shiftKey || e.altKey) return false;
  return key.length === 1 ? e.key.toLowerCase() === key.toLowerCase() : e.key === key;
}

/** The action available here whose key was pressed. Enter and Paste have their own paths (open the focused item; the paste event). */
export function actionForKey(actions: Action[], e: KeyboardEvent): Action | undefined {
  return actions.find((x) => x.keys && x.id !== 'paste' && x.id !== 'open' && matches(e, x.keys));
}

/** Keys typed into a field are the field's. */
export const isTyping = (t: EventTarget | null) =>
  t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
