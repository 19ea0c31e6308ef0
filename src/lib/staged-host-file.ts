/** New content of a library file, written and synced under a temporary name in its library's host folder. */
export interface StagedHostFile {
  libraryId: string;
  /** The temporary file (in the folder of the file's parent when staged), renamed into place at the commit. */
  path: string;
  /** The time the content was given (the host file's mtime), in ms. */
  modifiedAt: number;
  /** The temporary file's device and inode when written: landing checks that the entry at `path` is still it. */
  fileId: string;
}
