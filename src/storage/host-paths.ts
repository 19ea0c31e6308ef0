import fs from 'node:fs';
import path from 'node:path';

/**
 * The one way to a library's host files: every path is a library root plus names checked one by one
 * (no `..`, no `/`, no NUL, nothing absolute), every file opened is checked, after opening, to be inside
 * the root, and every folder written in is held open, checked, and named through its descriptor, so a
 * symlink (at any depth, swapped in at any time) cannot lead out of it.
 */

/** A name or path that would leave the library, or that the host filesystem cannot hold. */
export class HostPathError extends Error {}

// Linux file systems take at most 255 bytes in one name.
const NAME_MAX_BYTES = 255;
// And a path of at most 4095 bytes (PATH_MAX with its NUL): a longer one cannot be opened by its name.
export const PATH_MAX_BYTES = 4095;

/** Why the host cannot open `names` under `root` by its path (too long), or null when it can. */
export function hostPathProblem(root: string, names: readonly string[]): string | null {
  const bytes = Buffer.byteLength(hostPath(root, names));
  if (bytes <= PATH_MAX_BYTES) return null;
  return `The path in the library folder would be ${bytes} bytes long; the server's file system opens at most ${PATH_MAX_BYTES}: choose a shorter name, or a folder nearer the top.`;
}

/** Why the host filesystem cannot hold `name` as one entry of a folder, or null when it can. */
export function hostNameProblem(name: string): string | null {
  if (name.length === 0) return 'A name cannot be empty.';
  if (name === '.' || name === '..') return `"${name}" cannot be the name of a file or folder on the host.`;
  if (name.includes('/')) return 'A name in a library cannot contain "/": the host folder cannot hold it.';
  if (name.includes('\0')) return 'A name cannot contain a NUL character.';
  const bytes = Buffer.byteLength(name);
  if (bytes > NAME_MAX_BYTES) return `The name is ${bytes} bytes long in UTF-8; the host folder holds at most ${NAME_MAX_BYTES}.`;
  return null;
}

/** The names of a path relative to a library root ('a/b/c'); anything absolute, `..`, `.` or NUL refused. */
export function relativeNames(relative: string): string[] {
  if (relative.includes('\0')) throw new HostPathError('A path cannot contain a NUL character.');
  if (relative.startsWith('/')) throw new HostPathError('A path inside a library cannot be absolute.');
  if (relative === '') return [];
  const names = relative.split('/');
  for (const name of names) {
    const problem = hostNameProblem(name);
    if (problem) throw new HostPathError(problem);
  }
  return names;
}

/** `root` joined with `names`, each checked; `root` must be absolute. Never leaves the root by its text. */
export function hostPath(root: string, names: readonly string[]): string {
  if (!path.isAbsolute(root) || root.includes('\0')) throw new HostPathError('A library root must be an absolute path.');
  for (const name of names) {
    const problem = hostNameProblem(name);
    if (problem) throw new HostPathError(problem);
  }
  return names.length === 0 ? root : `${root === '/' ? '' : root}/${names.join('/')}`;
}

/** Whether `child` is `parent` or below it (both absolute and normalised). */
export function isInside(parent: string, child: string): boolean {
  if (child === parent) return true;
  return child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);
}

/** Where an open descriptor really is (Linux's /proc names the file itself, whatever led to it). */
function realPathOf(fd: number): string {
  return fs.readlinkSync(`/proc/self/fd/${fd}`);
}

/**
 * Opens `names` under `root` for reading and returns the descriptor, once it is shown to be a regular file
 * inside the root; a symlink leading out, a folder or a special file is refused (a special file is never opened,
 * and one swapped in between the look and the open is refused after it).
 */
export function openInside(root: string, names: readonly string[]): number {
  const file = hostPath(root, names);
  let fd: number;
  try {
    // Looked at before it is opened: opening a special file acts on it (a pipe's waiting writer goes on, a device can rewind or arm).
    if (!fs.statSync(file).isFile()) throw new HostPathError('Not a regular file.');
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
  } catch (err) {
    // A socket (or a device with no driver behind it) cannot be opened at all: not a regular file either.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENXIO' || code === 'ENODEV') throw new HostPathError('Not a regular file.');
    if (code === 'ENAMETOOLONG') throw new HostPathError('The path is too long for the file system to open.');
    throw err;
  }
  try {
    if (!isInside(root, realPathOf(fd))) throw new HostPathError('The file leads outside its library.');
    if (!fs.fstatSync(fd).isFile()) throw new HostPathError('Not a regular file.');
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/**
 * Runs `use` with a folder under `root` held open and named through its descriptor (`/proc/self/fd/N`), once
 * the descriptor itself is shown to be a folder inside the root: a folder swapped for a symlink after the
 * check cannot send what `use` makes, renames or removes in it anywhere else.
 */
export function inFolderInside<T>(root: string, names: readonly string[], use: (folder: string) => T): T {
  let fd: number;
  try {
    fd = fs.openSync(hostPath(root, names), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') throw new HostPathError('Not a folder.');
    throw err;
  }
  let async = false;
  try {
    const real = realPathOf(fd);
    if (!isInside(root, real)) throw new HostPathError('The folder leads outside its library.');
    // A symlink to a folder is listed unavailable and never followed: one leading inside would take the write where the index does not look.
    if (real !== hostPath(root, names))
      throw new HostPathError('The folder is a link on the server, not a folder of the library: Coffer does not follow it.');
    const result = use(`/proc/self/fd/${fd}`);
    if (!(result instanceof Promise)) return result;
    async = true;
    return result.finally(() => fs.closeSync(fd)) as T;
  } finally {
    if (!async) fs.closeSync(fd);
  }
}

/** A file or folder of Coffer's own outside its data directory (its backups, a key file): no library may show it. */
export interface ProtectedPath {
  path: string;
  /** What it is, as the refusal names it ("scheduled backups"). */
  what: string;
}

/** Why `candidate` cannot be a library root, or null; `candidate` is what the admin typed. */
export function libraryRootProblem(
  candidate: string,
  opts: { dataDir: string; otherRoots: readonly string[]; protectedPaths?: readonly ProtectedPath[] },
): { problem: string } | { root: string } {
  if (candidate.includes('\0')) return { problem: 'The path contains a NUL character.' };
  if (!path.isAbsolute(candidate)) return { problem: `${candidate} is not an absolute path: give the full path, starting with /.` };
  let root: string;
  try {
    root = fs.realpathSync(candidate);
  } catch {
    return { problem: `${candidate} does not exist (or the service user cannot reach it).` };
  }
  if (!fs.statSync(root).isDirectory()) return { problem: `${candidate} is not a folder.` };
  if (root === '/') return { problem: 'The root of the file system cannot be a library.' };
  const dataDir = realOrSelf(opts.dataDir);
  if (isInside(dataDir, root)) return { problem: `${candidate} is inside Coffer's data directory (${dataDir}).` };
  if (isInside(root, dataDir)) return { problem: `${candidate} holds Coffer's data directory (${dataDir}).` };
  for (const own of opts.protectedPaths ?? []) {
    const at = realOrSelf(own.path);
    if (isInside(at, root)) return { problem: `${candidate} is inside Coffer's ${own.what} (${at}).` };
    if (isInside(root, at)) return { problem: `${candidate} holds Coffer's ${own.what} (${at}).` };
  }
  for (const other of opts.otherRoots) {
    if (isInside(other, root)) return { problem: `${candidate} is inside the library at ${other}.` };
    if (isInside(root, other)) return { problem: `${candidate} holds the library at ${other}.` };
  }
  return { root };
}

function realOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** The prefix of a file Coffer is writing in a library folder: scans and listings never show it. */
export const STAGING_PREFIX = '.coffer-upload-';
