import fs from 'node:fs';
import path from 'node:path';
import { StartupError } from './errors.ts';
import { isAlive } from './lib/pid.ts';

export interface DataPaths {
  root: string;
  database: string;
  secrets: string;
  blobs: string;
  lock: string;
  /** Space the server holds for opening its database on a disk something else filled (see releaseReserveIfFull). */
  reserve: string;
  /** One file per process that holds object deletions back (a full backup reading objects). */
  holds: string;
  /** Database and secrets.json as they were before each upgrade (`coffer rollback`). */
  snapshots: string;
}

export function dataPaths(dataDir: string): DataPaths {
  return {
    root: dataDir,
    database: path.join(dataDir, 'coffer.db'),
    secrets: path.join(dataDir, 'secrets.json'),
    blobs: path.join(dataDir, 'blobs'),
    lock: path.join(dataDir, 'coffer.lock'),
    reserve: path.join(dataDir, 'coffer.reserve'),
    holds: path.join(dataDir, 'holds'),
    snapshots: path.join(dataDir, 'snapshots'),
  };
}

/** Whether `file` is one the instance keeps in its data directory (the database and its journals, secrets.json, the lock, the disk reserve, or anything under blobs/, holds/, snapshots/): replacing it loses data. */
export function isDataDirOwnFile(paths: DataPaths, file: string): boolean {
  const target = path.resolve(file);
  const db = path.resolve(paths.database);
  const own = [db, `${db}-wal`, `${db}-shm`, `${db}-journal`, paths.secrets, paths.lock, paths.reserve].map((f) => path.resolve(f));
  if (own.includes(target)) return true;
  return [paths.blobs, paths.holds, paths.snapshots].some((dir) => isBelow(dir, target));
}

/**
 * Whether `target` is the data directory itself or anywhere inside it, through symbolic links too: a tree written
 * there (an export) would grow the directory it is read from and go into its backups.
 */
export function isInDataDir(paths: DataPaths, target: string): boolean {
  const root = realPath(paths.root);
  const file = realPath(target);
  return file === root || isBelow(root, file);
}

function isBelow(dir: string, target: string): boolean {
  return path.resolve(target).startsWith(path.resolve(dir) + path.sep);
}

/** `p` resolved, with its longest existing part's symbolic links followed (the rest may not exist yet). */
function realPath(p: string): string {
  const rest: string[] = [];
  for (let at = path.resolve(p); ; at = path.dirname(at)) {
    try {
      return path.join(fs.realpathSync(at), ...rest);
    } catch {
      if (path.dirname(at) === at) return path.resolve(p);
      rest.unshift(path.basename(at));
    }
  }
}

/** What a Coffer data directory of any version holds once started: either one makes a directory Coffer's. */
const COFFER_FILES = ['coffer.db', 'secrets.json'];
/** What a new disk's file system puts at its mount point: a directory holding only it is empty to Coffer, and it stays. */
export const FILE_SYSTEM_OWN = 'lost+found';
/** Written first by `coffer restore` and removed last: a data directory holding it is a restore cut off part-way. */
export const RESTORE_MARKER = '.restore-unfinished';

/** A restore cut off part-way (kill -9, a power cut) left files that look like an instance but lack objects: not started on. */
function requireNoUnfinishedRestore(root: string): void {
  if (fs.existsSync(path.join(root, RESTORE_MARKER)))
    throw new StartupError(
      `${root} holds a restore that did not finish (it was cut off part-way): run the same coffer restore again, which starts it over, or remove the directory`,
    );
}
/** What a directory may hold and still be new: the file system's own, and what a first start that stopped early left. */
const isNewDirName = (name: string) => name === FILE_SYSTEM_OWN || /^(blobs|coffer\.lock|coffer\.reserve|\.write-test-\d+)$/.test(name);

/**
 * `serve` and `init` start a new instance only in a directory that is missing, empty or Coffer's: pointed at a home
 * directory or a folder of files, they would write the database, secrets and blobs among someone's own files.
 */
function requireOwnDataDir(root: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    // Missing (created next), or not a directory or unreadable (the next step says so).
    return;
  }
  if (COFFER_FILES.some((name) => names.includes(name))) return;
  const foreign = names.filter((name) => !isNewDirName(name)).sort();
  if (foreign.length === 0) return;
  const shown = foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? ` and ${foreign.length - 3} more` : '');
  throw new StartupError(
    `data directory ${root} is not empty and holds no Coffer data (${shown}): Coffer keeps its database, secrets and files in a directory of its own; point --data-dir (COFFER_DATA_DIR) at a new or empty one, such as ${path.join(root, 'coffer-data')}`,
  );
}

/** Refuses a directory that is someone else's (requireOwnDataDir), creates the data dir (0700) and blobs dir, and proves they are writable. */
export function prepareDataDir(paths: DataPaths): void {
  requireNoUnfinishedRestore(paths.root);
  requireOwnDataDir(paths.root);
  try {
    fs.mkdirSync(paths.root, { recursive: true, mode: 0o700 });
    fs.mkdirSync(paths.blobs, { recursive: true, mode: 0o700 });
    const probe = path.join(paths.root, `.write-test-${process.pid}`);
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (err) {
    const { code, path: where } = err as NodeJS.ErrnoException;
    // A file where blobs/ belongs is not a permissions problem: name what is in the way.
    if (code === 'EEXIST' && where === paths.blobs) {
      throw new StartupError(`${where} is in the way: the data directory needs a directory there; move that file aside, then start again`);
    }
    throw new StartupError(`data directory ${paths.root} is not writable (${code ?? err})`);
  }
}

const RESERVE_BYTES = 1024 * 1024;

/**
 * Before the server opens its database: on a disk something else filled to the last block, the reserve file is
 * removed, so SQLite has the room its shared-memory index (`coffer.db-shm`, made anew by the first process to open
 * the database) needs; without it the open fails (SQLITE_IOERR_SHMSIZE) and the server cannot start. True when removed.
 */
export function releaseReserveIfFull(paths: DataPaths): boolean {
  const s = fs.statfsSync(paths.root);
  if (s.bavail * s.bsize >= RESERVE_BYTES || !fs.existsSync(paths.reserve)) return false;
  fs.rmSync(paths.reserve, { force: true });
  return true;
}

/** Once the database is open: the reserve made (again) while there is room for it and more; a full disk waits for the next start. */
export function keepReserve(paths: DataPaths): void {
  if (fs.existsSync(paths.reserve)) return;
  const s = fs.statfsSync(paths.root);
  if (s.bavail * s.bsize < 4 * RESERVE_BYTES) return;
  const partial = `${paths.reserve}.${process.pid}`;
  try {
    // Zeros written, not a hole: the blocks are the file's, and removing it gives them back.
    fs.writeFileSync(partial, Buffer.alloc(RESERVE_BYTES), { mode: 0o600 });
    fs.renameSync(partial, paths.reserve);
  } catch {
    fs.rmSync(partial, { force: true });
  }
}

/** A user's name from /etc/passwd, or `#uid` (which sudo -u also takes) when it has none. */
function userName(uid: number): string {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && Number(id) === uid && id !== '') return name;
    }
  } catch {
    /* no passwd file: fall through */
  }
  return `#${uid}`;
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * Files written into a data dir by another user (a root-owned secrets.json or database journal) cannot be
 * read by the service that owns it, so every command that opens one refuses to run as anyone but its owner.
 */
export function requireDataDirOwner(root: string): void {
  if (typeof process.getuid !== 'function') return;
  let owner: number;
  try {
    owner = fs.statSync(root).uid;
  } catch {
    return;
  }
  const uid = process.getuid();
  if (owner === uid) return;
  const name = userName(owner);
  const command = ['coffer', ...process.argv.slice(2)].map(shellQuote).join(' ');
  throw new StartupError(
    `${root} belongs to user ${name} but this command runs as ${userName(uid)}, and files it wrote would be unreadable to the service: run it as the owner instead: sudo -u ${shellQuote(name)} ${command}`,
  );
}

/**
 * Every command but `serve` and `init` works on an existing instance only: one pointed at a wrong or
 * missing directory must not quietly start a new instance with a new master key.
 */
export function requireExistingDataDir(paths: DataPaths): void {
  const fix = 'pass --data-dir (or set COFFER_DATA_DIR, or COFFER_CONFIG for a coffer.env), or create a new instance with `coffer init`';
  if (!fs.existsSync(paths.root)) throw new StartupError(`data directory ${paths.root} does not exist: ${fix}`);
  if (!fs.existsSync(paths.database)) throw new StartupError(`${paths.root} holds no Coffer database: ${fix}`);
  requireNoUnfinishedRestore(paths.root);
}

/** The pid the data dir's lock names: a symbolic link's target, or (written by an older version) a file's text; null without one. */
function lockPid(paths: DataPaths): number | null {
  try {
    return Number(fs.readlinkSync(paths.lock));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EINVAL') return null;
  }
  try {
    return Number(fs.readFileSync(paths.lock, 'utf8'));
  } catch {
    return null;
  }
}

/** The pid of another live process that holds the data dir's lock (a running `serve`), or null. */
export function otherLockHolder(paths: DataPaths): number | null {
  const pid = lockPid(paths);
  return pid && pid !== process.pid && isAlive(pid) ? pid : null;
}

/**
 * Only one `serve` may own a data dir; a stale lock from a dead process is taken over. The lock is a symbolic link
 * whose target is the pid: made whole in one step, and kept in the file system's own records, so it needs no free
 * block (a file holding the pid did, and a server restarted on a disk another program filled did not start).
 */
export function acquireLock(paths: DataPaths): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.symlinkSync(String(process.pid), paths.lock);
      return () => {
        if (lockPid(paths) === process.pid) fs.rmSync(paths.lock, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new StartupError(`cannot create lock file ${paths.lock} (${(err as NodeJS.ErrnoException).code ?? err})`);
      }
      const pid = otherLockHolder(paths);
      if (pid !== null) throw new StartupError(`another Coffer server (pid ${pid}) is already using ${paths.root}`);
      fs.rmSync(paths.lock, { force: true });
    }
  }
  throw new StartupError(`cannot lock ${paths.root}`);
}
