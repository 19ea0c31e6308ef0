import { FileBrowser } from '../files/file-browser.tsx';

/** Trash: newest deletions first; Restore, Delete permanently and Empty trash act on it. */
export function TrashScreen() {
  return <FileBrowser kind="trash" />;
}
