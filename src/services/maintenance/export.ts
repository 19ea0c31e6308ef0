import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type DataPaths, isInDataDir } from '../../data-dir.ts';
import type { ExportFile, ExportFolder, ItemsRepo } from '../../db/repos/items.ts';
import type { User, UsersRepo } from '../../db/repos/users.ts';
import type { VersionsRepo } from '../../db/repos/versions.ts';
import { AppError, badRequest } from '../../errors.ts';
import { writeFully } from '../../lib/file-writes.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import { emailKey } from '../accounts/email.ts';

const PAGE = 500;
const TRASH = '.trash';
const PARTIAL = '.coffer-partial';
// The most bytes one name may hold on Linux, macOS and Windows file systems alike.
const NAME_MAX_BYTES = 255;

export interface ExportProgress {
  /** Bytes of file contents done (written or found finished), of `total`. */
  done: number;
  total: number;
}

export interface ExportResult {
  dir: string;
  accounts: string[];
  /** Files written by this run. */
  written: number;
  /** Files a previous run had finished: left untouched. */
  unchanged: number;
  /** Earlier versions written (with --include-versions), beside their file. */
  versions: number;
  bytesWritten: number;
  folders: number;
  /** Files that could not be exported: a stored object that could not be read (`coffer doctor` explains), a name the target refuses. */
  failed: Array<{ path: string; reason: string }>;
}

// Write errors that no other file would escape either: the export stops at the first, saying what to fix.
const TARGET_FATAL = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'ENOTDIR', 'EIO']);

/** Runs a write into the export's folder; an error every later write would meet too becomes one that stops the export. */
async function onTarget<T>(dir: string, write: () => T | Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!code || !TARGET_FATAL.has(code)) throw err;
    const why = code === 'ENOSPC' || code === 'EDQUOT' ? 'it is full' : (err as Error).message;
    throw badRequest(`could not write into ${dir}: ${why}; fix that, then run the same export again to finish it`);
  }
}

/** 20260131T101500Z: sortable, and safe in a file name everywhere. */
function timeStamp(at: number): string {
  return new Date(at)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/**
 * A name that fits in NAME_MAX_BYTES of UTF-8: a longer one (a Coffer name of 100 characters may take 300 bytes or more)
 * is cut at a character and tagged with a hash of the whole, its extension kept, so it stays the same on every run.
 */
function fitted(name: string): string {
  if (Buffer.byteLength(name) <= NAME_MAX_BYTES) return name;
  const tag = `~${createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && Buffer.byteLength(name.slice(dot)) <= 32 ? name.slice(dot) : '';
  const room = NAME_MAX_BYTES - Buffer.byteLength(tag + ext);
  let base = '';
  let bytes = 0;
  for (const char of name.slice(0, name.length - ext.length)) {
    bytes += Buffer.byteLength(char);
    if (bytes > room) break;
    base += char;
  }
  return `${base}${tag}${ext}`;
}

/** A name as one path component: no separators, never `.` or `..`, and no longer than a file system takes. */
function component(name: string): string {
  const safe = name.replace(/[/\0]/g, '_');
  return fitted(safe === '.' || safe === '..' || safe === '' ? `_${safe}` : safe);
}

/** `name (tag).ext`: a second trashed item with the same path. */
function tagged(name: string, tag: string): string {
  const dot = name.lastIndexOf('.');
  return fitted(dot > 0 ? `${name.slice(0, dot)} (${tag})${name.slice(dot)}` : `${name} (${tag})`);
}

/**
 * `coffer export`: every account's files as an ordinary folder tree, DIR/<email>/<path as in Coffer>,
 * decrypted, with Coffer's modification times; trashed items under DIR/<email>/.trash/, earlier versions
 * beside their file as <name>.versions/<time>-<name>. Resumable: a file
 * already there with its size and time is left untouched; anything else is written to a temporary name
 * and renamed, so a cut-short file is redone on the next run.
 */
export class ExportService {
  constructor(private readonly d: { users: UsersRepo; items: ItemsRepo; versions: VersionsRepo; storage: SealedStore; paths: DataPaths }) {}

  private accounts(user: string | undefined): User[] {
    if (user !== undefined) {
      const login = this.d.users.byEmailKey(emailKey(user));
      if (!login) throw badRequest(`no account has the email ${user}`);
      const owner = login.parentUserId ? this.d.users.byId(login.parentUserId) : login;
      if (!owner) throw badRequest(`no account has the email ${user}`);
      return [owner];
    }
    const owners: User[] = [];
    // Team folders too, each under its account's name (team:<id>).
    const page = (after: User | null) =>
      this.d.users.ownersPage({ sort: 'created', after: after && [after.createdAt, after.id], teams: true }, 100);
    for (let rows = page(null); rows.length; rows = page(rows.at(-1)!)) owners.push(...rows);
    return owners;
  }

  async run(opts: {
    to: string;
    user?: string;
    includeTrash?: boolean;
    includeVersions?: boolean;
    signal?: AbortSignal;
    onProgress?: (p: ExportProgress) => void;
  }): Promise<ExportResult> {
    const dir = path.resolve(opts.to);
    if (isInDataDir(this.d.paths, dir))
      throw badRequest(`${dir} is inside the data directory ${this.d.paths.root}: export to a folder outside it`);
    if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) throw badRequest(`${dir} is not a directory`);
    const includeTrash = Boolean(opts.includeTrash);
    const accounts = this.accounts(opts.user);
    const progress: ExportProgress = {
      done: 0,
      total: accounts.reduce((sum, a) => sum + this.d.items.exportTotals(a.id, includeTrash).bytes, 0),
    };
    const result: ExportResult = { dir, accounts: [], written: 0, unchanged: 0, versions: 0, bytesWritten: 0, folders: 0, failed: [] };
    await onTarget(dir, () => fs.mkdirSync(dir, { recursive: true, mode: 0o700 }));
    for (const account of accounts) {
      result.accounts.push(account.email);
      await this.exportAccount(
        account,
        path.join(dir, component(account.email)),
        { dir, includeTrash, includeVersions: Boolean(opts.includeVersions), signal: opts.signal },
        result,
        progress,
        opts.onProgress,
      );
    }
    return result;
  }

  private async exportAccount(
    account: User,
    root: string,
    { dir, includeTrash, includeVersions, signal }: { dir: string; includeTrash: boolean; includeVersions: boolean; signal?: AbortSignal },
    result: ExportResult,
    progress: ExportProgress,
    onProgress: ((p: ExportProgress) => void) | undefined,
  ): Promise<void> {
    // The trash's folder takes a name no live item at the top has: theirs and the trash's files never meet.
    let trash = TRASH;
    if (includeTrash) for (let n = 2; this.d.items.liveByName(account.id, null, trash); n++) trash = `${TRASH} (${n})`;
    const folders = new Map<string, ExportFolder>(this.d.items.exportFolders(account.id).map((f) => [f.id, f]));
    // Live names are unique within a folder; only trashed items can meet an earlier one at the same path.
    const claimed = new Set<string>();
    const claim = (parts: string[], id: string): string[] => {
      if (parts[0] !== trash) return parts;
      let key = parts.join('/').toLowerCase();
      if (claimed.has(key)) {
        parts = [...parts.slice(0, -1), tagged(parts.at(-1)!, id.slice(0, 8))];
        key = parts.join('/').toLowerCase();
      }
      claimed.add(key);
      return parts;
    };
    const folderPaths = new Map<string, string[]>();
    const pathOf = (parentId: string | null, name: string, trashed: boolean): string[] => {
      const chain: string[] = [component(name)];
      for (let id = parentId, hops = 0; id && hops < 10_000; hops++) {
        const folder = folders.get(id);
        if (!folder) break;
        chain.unshift(component(folder.name));
        id = folder.parentId;
      }
      return trashed ? [trash, ...chain] : chain;
    };
    const sorted = [...folders.values()]
      .filter((f) => includeTrash || f.deletedAt === null)
      .sort((a, b) => (a.deletedAt ?? 0) - (b.deletedAt ?? 0) || a.id.localeCompare(b.id));
    for (const folder of sorted)
      folderPaths.set(folder.id, claim(pathOf(folder.parentId, folder.name, folder.deletedAt !== null), folder.id));
    await onTarget(dir, () => fs.mkdirSync(root, { recursive: true, mode: 0o700 }));
    const made = new Set<string>();
    for (const [id, parts] of folderPaths) {
      try {
        await onTarget(dir, () => fs.mkdirSync(path.join(root, ...parts), { recursive: true }));
        made.add(id);
      } catch (err) {
        // A folder this file system refuses the name of: its files are refused alike, each reported.
        if (err instanceof AppError) throw err;
      }
    }

    for (let page = this.d.items.exportFiles(account.id, 0, PAGE, includeTrash); page.length; ) {
      for (const file of page) {
        signal?.throwIfAborted();
        const trashed = file.deletedAt !== null;
        const parent = file.parentId ? folderPaths.get(file.parentId) : undefined;
        const parts = claim(
          parent && (!trashed || parent[0] === trash) ? [...parent, component(file.name)] : pathOf(file.parentId, file.name, trashed),
          file.id,
        );
        const target = path.join(root, ...parts);
        const failed = (where: string[], err: unknown) => {
          // Stopped, not failed: the export ends here.
          if (signal?.aborted) throw signal.reason;
          if (err instanceof AppError) throw err;
          result.failed.push({
            path: path.join(component(account.email), ...where),
            reason: err instanceof Error ? err.message : String(err),
          });
        };
        try {
          if (await this.writeFile(dir, file, target, signal)) {
            result.written++;
            result.bytesWritten += file.size;
          } else result.unchanged++;
        } catch (err) {
          failed(parts, err);
        }
        if (includeVersions) {
          // <name>.versions/<time>-<name>: each earlier content beside its file, with the time it was written.
          for (const version of this.d.versions.list(file.id)) {
            const where = [
              ...parts.slice(0, -1),
              component(`${parts.at(-1)!}.versions`),
              component(`${timeStamp(version.modifiedAt)}-${file.name}`),
            ];
            try {
              if (await this.writeFile(dir, version, path.join(root, ...where), signal)) {
                result.versions++;
                result.bytesWritten += version.size;
              }
            } catch (err) {
              failed(where, err);
            }
          }
        }
        progress.done += file.size;
        onProgress?.(progress);
      }
      page = this.d.items.exportFiles(account.id, page.at(-1)!.seq, PAGE, includeTrash);
    }
    // Last, so writing the files inside does not move them: folders carry Coffer's times too.
    for (const [id, parts] of folderPaths) {
      if (!made.has(id)) continue;
      const at = folders.get(id)!.modifiedAt / 1000;
      fs.utimesSync(path.join(root, ...parts), at, at);
    }
    result.folders += folderPaths.size;
  }

  /** Writes one file unless a finished copy is there; true when it wrote. */
  private async writeFile(
    dir: string,
    file: Pick<ExportFile, 'size' | 'modifiedAt' | 'storageKey' | 'wrappedKey'>,
    target: string,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const existing = fs.statSync(target, { throwIfNoEntry: false });
    if (existing?.isFile() && existing.size === file.size && Math.abs(existing.mtimeMs - file.modifiedAt) < 1000) return false;
    if (!file.storageKey || !file.wrappedKey) throw new Error('the file has no stored contents');
    const partial = path.join(path.dirname(target), fitted(`${path.basename(target)}${PARTIAL}`));
    const handle = await onTarget(dir, () => {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      return fsp.open(partial, 'w', 0o600);
    });
    try {
      const stream = await this.d.storage.get(file.storageKey, { size: file.size, wrappedKey: file.wrappedKey });
      for await (const chunk of stream) {
        signal?.throwIfAborted();
        await onTarget(dir, () => writeFully(handle, chunk));
      }
    } catch (err) {
      await handle.close();
      fs.rmSync(partial, { force: true });
      throw err;
    }
    await onTarget(dir, async () => {
      await handle.close();
      fs.renameSync(partial, target);
      const at = file.modifiedAt / 1000;
      fs.utimesSync(target, at, at);
    });
    return true;
  }
}
