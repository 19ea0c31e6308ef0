import fs from 'node:fs';
import type { Clock } from '../../clock.ts';
import type { LibrariesRepo } from '../../db/repos/libraries.ts';
import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { Logger } from '../../log.ts';
import type { LibraryService } from './libraries.ts';
import { LIBRARY_TRASH } from './scanner.ts';

// Changes arrive in bursts (a copy of a folder, an editor's save): one scan after the burst settles.
const SETTLE_MS = 250;
// How often the set of watched libraries follows the registry (the CLI adds and removes them beside the server).
const REFRESH_MS = 5_000;

/**
 * Keeps libraries in step with their host folders while the server runs: a scan of each after start, then
 * every `rescanMinutes`, and, where the kernel reports changes (inotify), a scan of the library a change
 * was seen in once the burst settles. A library whose watch fails (too many folders for the inotify limit,
 * a file system without it) is left to the rescans.
 */
export class LibraryWatcher implements Lifecycle {
  readonly name = 'library watch';
  private readonly watchers = new Map<string, fs.FSWatcher>();
  private readonly pending = new Map<string, ReturnType<typeof setTimeout>>();
  // Per library: the folders changes were seen in since its last scan; null when a whole scan is needed.
  private readonly changedFolders = new Map<string, Map<string, string[]> | null>();
  private timers: Array<ReturnType<typeof setInterval>> = [];
  // Only a started server watches: the CLI builds the same services and never starts this.
  private started = false;

  constructor(
    private readonly d: {
      clock: Clock;
      log: Logger;
      libraries: LibraryService;
      repo: LibrariesRepo;
      rescanMinutes: number;
      watch: boolean;
    },
  ) {
    d.libraries.onChange(() => this.refresh());
  }

  start(): void {
    this.started = true;
    this.refresh();
    this.d.libraries.scanAll().catch((err: unknown) => this.d.log.warn('library scan after start failed', { err: String(err) }));
    if (this.d.rescanMinutes > 0) {
      this.timers.push(
        setInterval(() => {
          this.d.libraries.scanAll().catch((err: unknown) => this.d.log.warn('library rescan failed', { err: String(err) }));
        }, this.d.rescanMinutes * 60_000),
      );
    }
    this.timers.push(setInterval(() => this.refresh(), REFRESH_MS));
  }

  stop(): void {
    this.started = false;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    for (const t of this.pending.values()) clearTimeout(t);
    this.pending.clear();
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  /** Watches libraries added since the last look and drops those removed; retries roots that were away. */
  private refresh(): void {
    if (!this.started) return;
    const current = new Map(this.d.repo.all().map((l) => [l.id, l]));
    for (const [id, w] of this.watchers) {
      if (!current.has(id)) {
        w.close();
        this.watchers.delete(id);
      }
    }
    if (!this.d.watch) return;
    for (const library of current.values()) {
      if (this.watchers.has(library.id)) continue;
      try {
        const watcher = fs.watch(library.path, { recursive: true }, (_event, name) => {
          if (typeof name === 'string' && (name === LIBRARY_TRASH || name.startsWith(`${LIBRARY_TRASH}/`))) return;
          this.changed(library.id, typeof name === 'string' ? name : null);
        });
        watcher.on('error', () => {
          // The root went away (unmounted, removed): a scan marks the library unavailable; the next refresh watches it again.
          watcher.close();
          this.watchers.delete(library.id);
          this.changed(library.id, null);
        });
        this.watchers.set(library.id, watcher);
      } catch (err) {
        this.d.log.debug('library not watched', { library: library.id, err: String(err) });
      }
    }
  }

  /** A change at `name` (a path from the library root; null: anywhere): its folder is scanned once the burst settles. */
  private changed(id: string, name: string | null): void {
    if (!this.started) return;
    const folders = this.changedFolders.get(id);
    if (name === null) this.changedFolders.set(id, null);
    else if (folders !== null) {
      const names = name.split('/').slice(0, -1);
      const map = folders ?? new Map<string, string[]>();
      map.set(names.join('/'), names);
      this.changedFolders.set(id, map);
    }
    const waiting = this.pending.get(id);
    if (waiting) clearTimeout(waiting);
    this.pending.set(
      id,
      setTimeout(() => {
        this.pending.delete(id);
        const seen = this.changedFolders.get(id);
        this.changedFolders.delete(id);
        const scan = seen ? this.d.libraries.scanFolders(id, [...seen.values()]) : this.d.libraries.scan(id);
        scan.catch((err: unknown) => this.d.log.warn('library scan failed', { library: id, err: String(err) }));
      }, SETTLE_MS),
    );
  }
}
