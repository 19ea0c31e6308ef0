/** New content of a library file, written and synced under a temporary name in its library's host folder. */
export interface StagedHostFile {
  libraryId: string;
  /** The temporary file (in the folder of the file's parent when staged), renamed into place at the commit. */
  path: string;
  /** The time the content was given (the host file's mtime), in ms. */
  modifiedAt: number;
}
