import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import type { FileVersion, ListedVersion, RemovedVersion, VersionAge, VersionsRepo } from '../../db/repos/versions.ts';
import { badRequest, forbidden, Messages, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { Principal } from '../identity/principal.ts';
import { ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import { FileEventType, type FileEvents } from '../files/file-events.ts';
import type { FileVersion as VersionView, Item as ItemView } from '../../contract/files.ts';
import type { ItemViews } from '../files/item-views.ts';
import type { QuotaService } from '../files/quota.ts';
import type { DownloadFile } from '../files/downloads.ts';
import type { Tree } from '../files/tree.ts';
import type { LibraryContent, SealedObject } from '../files/library-content.ts';
import type { StagedHostFile } from '../../lib/staged-host-file.ts';
import type { UploadIntentService } from '../files/upload-intents.ts';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const THIN_PAGE = 500;

export interface Retention {
  retentionDays: number;
  maxPerFile: number;
}

/**
 * Which of a file's versions (newest first) retention drops at `now`: every version of the last hour
 * stays; then the newest of each hour for a day; then the newest of each day up to `retentionDays`;
 * then none; and never more than `maxPerFile` (the oldest go).
 */
export function retentionDrops<T extends Pick<VersionAge, 'createdAt'>>(newestFirst: readonly T[], now: number, r: Retention): T[] {
  const seen = new Set<string>();
  const drop: T[] = [];
  let kept = 0;
  for (const v of newestFirst) {
    const age = now - v.createdAt;
    let bucket: string | null;
    if (age < HOUR) bucket = null;
    else if (age < DAY) bucket = `h${Math.floor(v.createdAt / HOUR)}`;
    else if (age < r.retentionDays * DAY) bucket = `d${Math.floor(v.createdAt / DAY)}`;
    else bucket = 'expired';
    const keep = bucket === null || (bucket !== 'expired' && !seen.has(bucket));
    if (bucket !== null) seen.add(bucket);
    if (keep && kept < r.maxPerFile) kept++;
    else drop.push(v);
  }
  return drop;
}

export interface VersionDeps {
  clock: Clock;
  retentionClock: Pick<Clock, 'now'>;
  queue: JobQueue;
  transactions: Transactions;
  items: ItemsRepo;
  versions: VersionsRepo;
  tree: Tree;
  views: ItemViews;
  events: FileEvents;
  changes: ChangeLog;
  quota: QuotaService;
  settings: SettingsService;
  libraryContent: LibraryContent;
  intents: UploadIntentService;
  /** Whether an account administers the team folder of a team's account (its versions are theirs to delete). */
  administersTeam: (accountId: string, teamId: string) => boolean;
}

/**
 * File versions: an overwrite keeps the replaced object as a version (no copy: objects are immutable),
 * listing, download, restore and delete of versions, and retention (when a version is made and daily).
 */
export class VersionService {
  constructor(private readonly d: VersionDeps) {}

  private retention(): Retention {
    return { retentionDays: this.d.settings.get('versionsRetentionDays'), maxPerFile: this.d.settings.get('versionsMaxPerFile') };
  }

  /**
   * Inside the transaction that gives `row` new content: keeps its current content as a version (when
   * versions are on) and thins the file's list. Answers whether it did; if not, the caller deletes the object.
   */
  keepReplaced(row: Item): boolean {
    if (!this.d.settings.get('versionsEnabled') || !row.storageKey || !row.wrappedKey || !row.keyId) return false;
    this.d.versions.insert(this.versionOf(row, this.d.clock.now()));
    this.thinItem(row.id);
    return true;
  }

  private versionOf(row: Item, at: number): FileVersion {
    return {
      id: newId(),
      itemId: row.id,
      accountId: row.accountId,
      size: row.size,
      mimeType: row.mimeType,
      storageKey: row.storageKey!,
      wrappedKey: row.wrappedKey!,
      keyId: row.keyId!,
      source: row.contentSource ?? 'upload',
      authorId: row.contentAuthorId,
      modifiedAt: row.modifiedAt,
      createdAt: at,
    };
  }

  /** The versions of `fromItemId` become `toItemId`'s (a WebDAV MOVE onto a file), then the list is thinned; inside a transaction. */
  reassign(fromItemId: string, toItemId: string): void {
    if (this.d.versions.reassign(fromItemId, toItemId) > 0) this.thinItem(toItemId);
  }

  /** GET /api/files/:id/versions: newest first, the current content not included. */
  list(principal: Principal, itemId: string): { versions: VersionView[] } {
    return { versions: this.rows(principal, itemId).map(view) };
  }

  /** A file's versions as stored, newest first, for a caller who may view the file; else 404. */
  rows(principal: Principal, itemId: string): ListedVersion[] {
    const row = this.requireFile(this.d.tree.actor(principal, { ids: [itemId] }, 'view'), itemId);
    return this.d.versions.list(row.id);
  }

  /** The file and the version to download, shaped as a file row with the version's content; else 404. */
  resolveDownload(principal: Principal, itemId: string, versionId: string): DownloadFile {
    const { row, version } = this.requireVersion(this.d.tree.actor(principal, { ids: [itemId] }, 'view'), itemId, versionId);
    const { storageKey: _s, wrappedKey: _w, keyId: _k, ...held } = row;
    return { ...held, size: version.size, mimeType: version.mimeType, modifiedAt: version.modifiedAt, versionId };
  }

  /**
   * POST /api/files/:id/versions/:versionId/restore: that content becomes current, the current one the newest
   * version. A library file's version is written to its host file (temporary name, then a rename), and its
   * current host content is kept in the store first.
   */
  async restore(caller: Principal, itemId: string, versionId: string): Promise<ItemView> {
    // Editors of a shared folder or file restore like its owner (versions count against the owner).
    const principal = this.d.tree.actor(caller, { ids: [itemId] }, 'content');
    const found = this.requireVersion(principal, itemId, versionId);
    const now = this.d.clock.now();
    const staged = await this.d.libraryContent.stage(found.row.parentId, found.version, now);
    // The replaced content stays whatever the setting says: restoring must not lose it.
    const kept = staged ? await this.d.libraryContent.keep(found.row, true) : null;
    let updated: Item;
    try {
      updated = this.d.transactions.immediate(() => this.restoreIn(principal, itemId, versionId, now, staged ? { staged, kept } : null));
    } catch (err) {
      await this.d.libraryContent.drop(staged, kept);
      throw err;
    }
    this.d.events.item(principal, FileEventType.updated, updated, { size: updated.size, mimeType: updated.mimeType });
    return this.d.views.one(principal.accountId, updated);
  }

  private restoreIn(
    principal: Principal,
    itemId: string,
    versionId: string,
    now: number,
    library: { staged: StagedHostFile; kept: SealedObject | null } | null,
  ): Item {
    const { row, version } = this.requireVersion(principal, itemId, versionId);
    this.d.versions.delete(version.id);
    const before = library ? (library.kept ? { ...row, ...library.kept } : null) : row;
    if (before) this.d.versions.insert(this.versionOf(before, now));
    const item = this.d.items.replaceContent(
      row.id,
      {
        size: version.size,
        mimeType: version.mimeType,
        ...(library
          ? { storageKey: null, wrappedKey: null, keyId: null }
          : { storageKey: version.storageKey, wrappedKey: version.wrappedKey, keyId: version.keyId }),
        modifiedAt: library?.staged.modifiedAt ?? now,
        accessedAt: now,
        contentSource: 'restore',
        contentAuthorId: principal.loginId,
      },
      library?.staged,
    );
    if (library) {
      // The version's bytes are the host file now; the content kept before takes its place among the versions.
      this.d.quota.adjust(principal.accountId, (library.kept?.size ?? 0) - version.size);
      this.d.queue.insert(Jobs.storageDelete, { keys: [version.storageKey] });
      if (library.kept) this.d.intents.committed(library.kept.storageKey);
    }
    this.thinItem(row.id);
    this.d.changes.record(principal, ChangeKinds.versionRestored, item, {
      details: { versionId, size: item.size, mimeType: item.mimeType },
    });
    return item;
  }

  /** DELETE /api/files/:id/versions/:versionId. */
  delete(caller: Principal, itemId: string, versionId: string): { message: string } {
    // A member sees the versions but deleting one is the owner's; a team folder has none, its administrators act for it.
    const principal = this.d.tree.actor(caller, { ids: [itemId] }, 'edit');
    if (principal.share && !this.d.administersTeam(caller.accountId, principal.accountId)) throw forbidden(Messages.versionDeleteOwnerOnly);
    this.d.transactions.immediate(() => {
      const { version } = this.requireVersion(principal, itemId, versionId);
      this.d.versions.delete(version.id);
      this.release([version]);
    });
    return { message: 'Version deleted' };
  }

  /** Applies retention to one file's versions; inside a transaction. */
  private thinItem(itemId: string): number {
    const drops = retentionDrops(this.d.versions.agesOf(itemId), this.d.retentionClock.now(), this.retention());
    if (drops.length) this.release(this.d.versions.deleteRows(drops.map((v) => v.seq)));
    return drops.length;
  }

  /** The daily pass: retention over every file with versions, a transaction per page of files. Answers how many went. */
  thinAll(signal?: AbortSignal): number {
    let removed = 0;
    let after = '';
    for (;;) {
      signal?.throwIfAborted();
      const ids = this.d.versions.itemsWithVersions(after, THIN_PAGE);
      if (ids.length === 0) return removed;
      after = ids.at(-1)!;
      removed += this.d.transactions.immediate(() => ids.reduce((n, id) => n + this.thinItem(id), 0));
    }
  }

  /** After versions' rows went: their bytes leave the usage and their objects are queued for deletion. */
  private release(rows: readonly RemovedVersion[]): void {
    if (rows.length === 0) return;
    const bytes = new Map<string, number>();
    for (const v of rows) bytes.set(v.accountId, (bytes.get(v.accountId) ?? 0) + v.size);
    for (const [accountId, n] of bytes) this.d.quota.adjust(accountId, -n);
    this.d.queue.insert(Jobs.storageDelete, { keys: rows.map((v) => v.storageKey) });
  }

  private requireFile(principal: Principal, itemId: string): Item {
    const row = this.d.tree.requireLive(principal, itemId);
    if (row.type !== 'file') throw badRequest(Messages.onlyFiles);
    return row;
  }

  private requireVersion(principal: Principal, itemId: string, versionId: string): { row: Item; version: FileVersion } {
    const row = this.requireFile(principal, itemId);
    const version = this.d.versions.get(row.id, versionId);
    if (!version) throw notFound('Version not found');
    return { row, version };
  }
}

function view(v: ListedVersion): VersionView {
  return {
    id: v.id,
    size: v.size,
    modified: new Date(v.modifiedAt).toISOString(),
    createdAt: new Date(v.createdAt).toISOString(),
    source: v.source,
    author: v.authorId && v.authorEmail !== null ? { id: v.authorId, name: v.authorName ?? '', email: v.authorEmail } : null,
  };
}
