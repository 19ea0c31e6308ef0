import { badRequest, Messages, validationFailed } from '../../errors.ts';

import { BIDI_CONTROL, MAX_NAME_LENGTH, nameProblem, normalizeName, RELATIVE_PATH_FOLDERS } from '../../contract/names.ts';

const BIDI_CONTROLS = new RegExp(BIDI_CONTROL.source, 'g');

/** A name a person typed (new folder, rename): normalized, or 422 naming `field` with what is wrong. */
export function typedName(name: string, field = 'name'): string {
  const normalized = normalizeName(name);
  const problem = nameProblem(normalized);
  if (problem) throw validationFailed([{ field, message: problem }]);
  return normalized;
}

/** A name a client sent with an upload: bidirectional controls dropped (they disguise file types), then normalized. */
function uploadedName(name: string): string {
  return normalizeName(stripBidiControls(name));
}

/** Whether an uploaded (already cleaned) name or path segment may be stored. */
export function isValidUploadedName(name: string): boolean {
  return nameProblem(name) === null;
}

/** The last path segment of an uploaded file name (old browsers send full paths), cleaned; else the upload's 400. */
export function uploadedFileName(filename: string): string {
  const name = uploadedBaseName(filename);
  if (!isValidUploadedName(name)) throw badRequest(Messages.invalidFileName);
  return name;
}

/** The folders of an uploaded relative path (`a/b/file.txt` → a, b), cleaned; an invalid one is the upload's 400. */
export function relativeFolders(relativePath: string | null | undefined): string[] {
  const folders = (relativePath ?? '').split(/[/\\]/).map(uploadedName).filter(Boolean).slice(0, -1);
  if (!folders.every(isValidUploadedName)) throw badRequest(Messages.invalidFileName);
  // Each folder created marks all those above it: 4,000 levels in one path cost 25 s of CPU.
  if (folders.length > RELATIVE_PATH_FOLDERS) throw badRequest(Messages.relativePathTooDeep);
  return folders;
}

export function uploadedBaseName(filename: string): string {
  const parts = filename.split(/[/\\]/);
  return uploadedName(parts[parts.length - 1] ?? '');
}

/** The name without bidirectional control characters: for names shown outside HTML (headers, ZIP entries, titles). */
export function stripBidiControls(name: string): string {
  return name.replace(BIDI_CONTROLS, '');
}

/**
 * A person's name from outside (a visitor's, a sign-on provider's): trimmed, without control or bidirectional characters
 * (screens show it beside other words, which a U+202E would turn around), at most `max` characters, cut between whole ones;
 * empty when nothing visible is left.
 */
export function personName(text: string, max: number): string {
  const name = cutAt(stripBidiControls(text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '')).trim(), max).trim();
  // Only zero-width or filler characters (U+200B, U+3164…) would show as a blank where a name belongs: none.
  return VISIBLE.test(name) ? name : '';
}

const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/** Splits at the last dot, except a leading one (`.bashrc` has no extension). */
export function splitExtension(name: string): { base: string; ext: string } {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? { base: name.slice(0, dot), ext: name.slice(dot) } : { base: name, ext: '' };
}

let segmenter: Intl.Segmenter | null = null;
/** Made at the first name that needs cutting, not at start: most servers never cut one. */
const graphemes = (): Intl.Segmenter => (segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' }));

/** `text`'s longest start of at most `room` UTF-16 units that ends between two characters as a person sees them (never inside an emoji or before an accent). */
function cutAt(text: string, room: number): string {
  if (text.length <= room) return text;
  let end = 0;
  for (const { index } of graphemes().segment(text)) {
    if (index > room) break;
    end = index;
  }
  return text.slice(0, end);
}

/** `base (n)ext`, shortening the base so the result stays within the length limit. */
export function numberedName(name: string, n: number): string {
  const { base, ext } = splitExtension(name);
  const suffix = ` (${n})`;
  const room = MAX_NAME_LENGTH - suffix.length - ext.length;
  // An extension too long to leave room keeps the base's first character, whole.
  const trimmedBase = cutAt(base, room) || (graphemes().segment(base).containing(0)?.segment ?? '');
  return cutAt(`${trimmedBase}${suffix}${ext}`, MAX_NAME_LENGTH);
}
