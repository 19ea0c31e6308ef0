import type { NewUpload } from '../app/uploads.ts';

// FileSystemEntry types are not in every TypeScript DOM library version: the few members used here.
interface Entry {
  isFile: boolean;
  isDirectory: boolean;
  name: string;
  file?(ok: (f: File) => void, fail: (e: unknown) => void): void;
  createReader?(): { readEntries(ok: (entries: Entry[]) => void, fail: (e: unknown) => void): void };
}

/** What a drop holds: files (those of folders with their relative paths), and folders with nothing in them. */
export interface Dropped {
  files: NewUpload[];
  emptyFolders: string[];
}

async function walk(entry: Entry, prefix: string, out: Dropped): Promise<void> {
  if (entry.isFile && entry.file) {
    const file = await new Promise<File>((ok, fail) => entry.file!(ok, fail));
    out.files.push({ file, relativePath: prefix ? `${prefix}/${file.name}` : undefined });
    return;
  }
  if (!entry.isDirectory || !entry.createReader) return;
  const reader = entry.createReader();
  const path = prefix ? `${prefix}/${entry.name}` : entry.name;
  let empty = true;
  // readEntries answers in batches; an empty batch means the directory is done.
  for (;;) {
    const batch = await new Promise<Entry[]>((ok, fail) => reader.readEntries(ok, fail));
    if (!batch.length) break;
    empty = false;
    for (const child of batch) await walk(child, path, out);
  }
  if (empty) out.emptyFolders.push(path);
}

/** Files dropped from the desktop, whole folder trees included (each file with its relative path). */
export async function filesFromDrop(data: DataTransfer): Promise<Dropped> {
  const entries = [...data.items]
    .filter((i) => i.kind === 'file')
    .map((i) => (i as DataTransferItem & { webkitGetAsEntry?: () => Entry | null }).webkitGetAsEntry?.() ?? null);
  if (!entries.length || entries.some((e) => e === null)) return { files: [...data.files].map((file) => ({ file })), emptyFolders: [] };
  const out: Dropped = { files: [], emptyFolders: [] };
  for (const e of entries) await walk(e!, '', out);
  return out;
}

/** Files from a picker; a folder picker gives each its path under the chosen folder. */
export function filesFromInput(list: FileList): NewUpload[] {
  return [...list].map((file) => ({ file, relativePath: file.webkitRelativePath || undefined }));
}
