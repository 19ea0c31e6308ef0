/** The item-name rule (docs/api.md › Limits, issue 4): the server enforces it, the web app's dialogs say it first. */
export const MAX_NAME_LENGTH = 100;
/** Folders an upload's relative path may name (the web app's folder uploads send one per file). */
export const RELATIVE_PATH_FOLDERS = 250;
/** Folders an item may sit in, counted from the root: every write marks each folder above it, so depth costs CPU. */
export const MAX_FOLDER_DEPTH = 250;

// U+FFFE and U+FFFF are no characters: XML cannot hold them, so a WebDAV listing naming one would be unreadable.
const NONCHARACTER = /[\ufffe\uffff]/;
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\ufffe\uffff/\\:*?"<>|]/;
// Bidirectional formatting characters: U+202E makes `\u202Egnp.exe` read as `exe.png`.
export const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

export const NAME_TAKEN = 'An item with this name already exists';

/** The name as stored: trimmed and in Unicode NFC, so look-alike spellings collide as they should. */
export function normalizeName(name: string): string {
  return name.normalize('NFC').trim();
}

/** Text made fit for a part of a name: what a name may not hold (slashes, control characters...) a space, spaces collapsed, normalized. */
export function asNamePart(text: string): string {
  return normalizeName(text.replace(new RegExp(`${FORBIDDEN.source}|${BIDI_CONTROL.source}`, 'g'), ' ').replace(/\s+/g, ' '));
}

/** Why a name a client sent to be kept exactly as written (NFC) is refused: blanks at its ends would be trimmed off, so it would name another item. */
export function exactNameProblem(name: string): string | null {
  return name === name.trim() ? nameProblem(name) : 'Name must not begin or end with a space or another blank character';
}

/** Why a (normalized) name is refused, or null when it is valid. */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return 'Name must not be empty';
  if (name.length > MAX_NAME_LENGTH) return `Name must be at most ${MAX_NAME_LENGTH} characters`;
  // Half a surrogate pair (JSON can carry one) would be stored as U+FFFD: another name than the one sent.
  if (!name.isWellFormed()) return 'Name must be Unicode text: it holds half of an emoji or of another surrogate pair';
  if (NONCHARACTER.test(name)) return 'Name must not contain U+FFFE or U+FFFF, which are not characters';
  if (FORBIDDEN.test(name)) return 'Name must not contain control characters or any of / \\ : * ? " < > |';
  if (BIDI_CONTROL.test(name))
    return 'Name must not contain bidirectional control characters (such as U+202E), which can disguise a file type';
  if (name === '.' || name === '..') return 'Name must not be . or ..';
  return null;
}
