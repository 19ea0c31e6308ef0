import type { AlbumLinkView, PublicPhoto } from '../../contract/albums.ts';
import type { ThumbnailSize } from '../../contract/files.ts';
import type { Clock } from '../../clock.ts';
import type { AlbumLinkRow, AlbumRow, AlbumsRepo } from '../../db/repos/albums.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { AppError, conflict, Messages, notFound, validationFailed } from '../../errors.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import { newToken } from '../../lib/ids.ts';
import { qrCodeOf } from '../../lib/qr-code.ts';
import { hashPassword } from '../identity/passwords.ts';
import type { CurrentFile, DownloadService, ZipDownload } from '../files/downloads.ts';
import type { Principal } from '../identity/principal.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { HeldItem, Tree } from '../files/tree.ts';
import { checkLinkPassword, isUnlocked, recordUnlockRefused, unlockCookie } from '../sharing/link-unlock.ts';
import {
  countedZip,
  type DownloadCap,
  downloadCap,
  LinkLockedError,
  type LinkVisit,
  LinkVisits,
  UnlockAttempts,
} from '../sharing/link-access.ts';
import { expiryTime, type LinkExpiry, type ShareFacts } from '../sharing/shares.ts';
import type { AlbumService } from './albums.ts';
import type { ServedThumbnail, UnchangedThumbnail, ThumbnailService } from './thumbnails.ts';

export interface AlbumLinkDeps {
  clock: Clock;
  transactions: Transactions;
  albums: AlbumsRepo;
  users: UsersRepo;
  tree: Tree;
  thumbnails: ThumbnailService;
  albumService: AlbumService;
  items: ItemsRepo;
  downloads: DownloadService;
  settings: SettingsService;
  audit: AuditService;
  /** Key of the unlock cookies' signatures (derived from the instance's token secret). */
  unlockKey: Uint8Array;
}

/** Options of an album's link; absent fields keep their value, null removes it. */
export interface AlbumLinkOptions {
  expiry?: LinkExpiry;
  password?: string | null;
  maxDownloads?: number | null;
}

/** An album's link as its public door sees it: whether it has a password, never its hash (passwords are checked here). */
interface PublicAlbumLink {
  albumId: string;
  token: string;
  expiresAt: number | null;
  maxDownloads: number | null;
  downloads: number;
  hasPassword: boolean;
}

/** A resolved album link as its public door uses it. */
export interface OpenAlbumLink {
  link: PublicAlbumLink;
  album: AlbumRow;
  unlocked: boolean;
}

const publicLink = (l: AlbumLinkRow): PublicAlbumLink => ({
  albumId: l.albumId,
  token: l.token,
  expiresAt: l.expiresAt,
  maxDownloads: l.maxDownloads,
  downloads: l.downloads,
  hasPassword: l.passwordHash !== null,
});

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
// Files read from the database at a time while an album's ZIP is written.
const ZIP_PAGE = 200;

/**
 * An album's public link: a gallery of the album's live photos for anyone with the token, with the options a
 * file link has (expiry, password, download cap). Only the album's owner makes, changes or removes it; what it
 * shows is the album as it is now, so a file taken out of the album is gone from it and a deleted album's link 404s.
 */
export class AlbumLinkService {
  private readonly unlockAttempts: UnlockAttempts;
  private readonly visits: LinkVisits;

  constructor(private readonly d: AlbumLinkDeps) {
    this.unlockAttempts = new UnlockAttempts(d.clock);
    this.visits = new LinkVisits(d.audit, d.clock);
  }

  private url(requestOrigin: string, token: string): string {
    const base = this.d.settings.get('shareBaseUrl');
    return `${base ? new URL(base).origin : requestOrigin}/s/album/${token}`;
  }

  private view(l: AlbumLinkRow, requestOrigin: string): AlbumLinkView {
    return {
      token: l.token,
      url: this.url(requestOrigin, l.token),
      createdAt: iso(l.createdAt)!,
      expiresAt: iso(l.expiresAt),
      hasPassword: l.passwordHash !== null,
      maxDownloads: l.maxDownloads,
      downloads: l.downloads,
      lastUsedAt: iso(l.lastUsedAt),
    };
  }

  /** GET /api/albums/:id/link: the owner's view of the album's link, or null. */
  get(caller: Principal, albumId: string, requestOrigin: string): { link: AlbumLinkView | null } {
    this.d.albumService.owned(caller, albumId);
    const link = this.d.albums.linkOf(albumId);
    return { link: link && this.view(link, requestOrigin) };
  }

  /** POST /api/albums/:id/link: makes the album's link (409 when it has one); 7 days unless an expiry is given. */
  async create(caller: Principal, albumId: string, options: AlbumLinkOptions, requestOrigin: string): Promise<{ link: AlbumLinkView }> {
    const now = this.d.clock.now();
    const expiresAt = expiryTime(options.expiry ?? '7d', now);
    const passwordHash = options.password ? await hashPassword(options.password) : null;
    const link = this.d.transactions.immediate(() => {
      this.d.albumService.owned(caller, albumId);
      if (this.d.albums.linkOf(albumId)) throw conflict('This album already has a link: change its options or remove it.');
      this.d.albums.insertLink({
        albumId,
        token: newToken(),
        createdBy: caller.loginId,
        createdAt: now,
        expiresAt,
        passwordHash,
        maxDownloads: options.maxDownloads ?? null,
      });
      return this.d.albums.linkOf(albumId)!;
    });
    this.d.audit.record({ action: AuditActions.shareCreate, principal: caller, targetType: 'album', targetId: albumId });
    return { link: this.view(link, requestOrigin) };
  }

  /** PATCH /api/albums/:id/link: changes the options the request names; 404 when the album has no link. */
  async update(caller: Principal, albumId: string, options: AlbumLinkOptions, requestOrigin: string): Promise<{ link: AlbumLinkView }> {
    const now = this.d.clock.now();
    const patch: { expiresAt?: number | null; passwordHash?: string | null; maxDownloads?: number | null } = {};
    if (options.expiry !== undefined) patch.expiresAt = expiryTime(options.expiry, now);
    if (options.password !== undefined) patch.passwordHash = options.password === null ? null : await hashPassword(options.password);
    if (options.maxDownloads !== undefined) patch.maxDownloads = options.maxDownloads;
    const link = this.d.transactions.immediate(() => {
      this.d.albumService.owned(caller, albumId);
      if (!this.d.albums.linkOf(albumId)) throw notFound('This album has no link.');
      this.d.albums.updateLink(albumId, patch);
      return this.d.albums.linkOf(albumId)!;
    });
    this.d.audit.record({ action: AuditActions.shareUpdate, principal: caller, targetType: 'album', targetId: albumId });
    return { link: this.view(link, requestOrigin) };
  }

  /** GET /api/albums/:id/link/qr: the link's URL as a QR code, as a file link's; 404 when the album has no link. */
  async qrCode(caller: Principal, albumId: string, requestOrigin: string): Promise<{ qrCode: string }> {
    this.d.albumService.owned(caller, albumId);
    const link = this.d.albums.linkOf(albumId);
    if (!link) throw notFound('This album has no link.');
    return { qrCode: await qrCodeOf(this.url(requestOrigin, link.token)) };
  }

  /** DELETE /api/albums/:id/link: the link stops working at once (404). */
  remove(caller: Principal, albumId: string): { message: string } {
    this.d.albumService.owned(caller, albumId);
    if (!this.d.albums.removeLink(albumId)) throw notFound('This album has no link.');
    this.d.audit.record({ action: AuditActions.shareRemove, principal: caller, targetType: 'album', targetId: albumId });
    return { message: 'The album’s link no longer works' };
  }

  // ---- the public side (no session) ----

  /**
   * The link of a token and its album: 404 when missing (the album deleted, the owner disabled), 410 when
   * expired or (unless `pastCap`) its downloads are used up. `unlocked`: no password, or a valid unlock cookie.
   */
  private resolve(token: string, opts: { pastCap?: boolean; unlockCookie?: string | null } = {}): OpenAlbumLink {
    const link = this.d.albums.linkByToken(token);
    if (!link) throw notFound(Messages.shareNotFound);
    if (link.expiresAt !== null && link.expiresAt <= this.d.clock.now()) throw new AppError(410, Messages.shareExpired);
    if (!opts.pastCap && link.maxDownloads !== null && link.downloads >= link.maxDownloads)
      throw new AppError(410, Messages.shareDownloadsUsed);
    const album = this.d.albums.byIdAnyAccount(link.albumId);
    if (!album || this.d.users.authUser(album.accountId)?.disabledAt != null) throw notFound(Messages.shareNotFound);
    return { link: publicLink(link), album, unlocked: this.isUnlocked(link, opts.unlockCookie ?? null) };
  }

  /** The link of `token` checked as a file link's is: live, unlocked, then its download cap (`cap`). */
  open(token: string, visit: LinkVisit, cap: DownloadCap): OpenAlbumLink {
    const opened = this.resolve(token, { pastCap: true, unlockCookie: visit.unlockCookie });
    if (!opened.unlocked) throw new LinkLockedError(token, 'album');
    if (cap === 'count') this.countDownload(opened.link);
    else if (cap === 'page') this.resolve(token);
    return opened;
  }

  /** The gallery's page: its visit is recorded. */
  openGallery(token: string, visit: LinkVisit): OpenAlbumLink {
    const opened = this.open(token, visit, 'page');
    this.recordVisit(opened, visit.ip, 'access');
    return opened;
  }

  /** A file's bytes: the download is counted and recorded when what is served covers byte 0. */
  openDownload(token: string, visit: LinkVisit, itemId: string): CurrentFile {
    const opened = this.open(token, visit, 'none');
    const item = this.item(opened, itemId);
    const cap = downloadCap(visit, item);
    if (cap !== 'none') this.open(token, visit, cap);
    if (cap === 'count') this.recordVisit(opened, visit.ip, 'download', item);
    return item;
  }

  /** A file's thumbnail through the link (no download counted). */
  thumbnail(
    token: string,
    visit: LinkVisit,
    itemId: string,
    size: ThumbnailSize,
    etag: string | null,
  ): Promise<ServedThumbnail | UnchangedThumbnail> {
    return this.d.thumbnails.serve(this.item(this.open(token, visit, 'page'), itemId), size, etag);
  }

  /**
   * A visitor's password for the link, one attempt of the album and address's limit (429 past it), as a
   * file link's: the unlock cookie's value, null without a password, 401 when wrong (audited).
   */
  async attemptUnlock(token: string, password: string, ip: string): Promise<{ token: string; cookie: string | null }> {
    const opened = this.resolve(token, { pastCap: true });
    const { album } = opened;
    const refused = () => recordUnlockRefused(this.d.audit, { ip, accountId: album.accountId, targetType: 'album', targetId: album.id });
    const cookie = await this.unlockAttempts.spend(`album:${album.id}`, ip, () => this.unlock(opened, password, ip), refused);
    return { token: opened.link.token, cookie };
  }

  /** One page of the album's live photos and videos, newest taken first, as a visitor sees them. */
  page(album: AlbumRow, q: { limit: number; cursor?: string | undefined }): { items: PublicPhoto[]; nextCursor: string | null } {
    let after: { takenAt: number; id: string } | null = null;
    if (q.cursor) {
      const values = decodeCursor(q.cursor, ['number', 'string']);
      if (!values) throw validationFailed([{ field: 'cursor', message: Messages.invalidCursor }]);
      after = { takenAt: values[0] as number, id: values[1] as string };
    }
    const rows = this.d.albums.itemsPage(album.id, after, q.limit + 1);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return {
      items: page.map((r) => ({
        id: r.id,
        name: r.name,
        takenAt: new Date(r.takenAt).toISOString(),
        width: r.width,
        height: r.height,
        mimeType: r.mimeType,
        size: r.size,
        ...(r.duration != null ? { duration: r.duration } : {}),
      })),
      nextCursor: rows.length > q.limit && last ? encodeCursor([last.takenAt, last.id]) : null,
    };
  }

  /** Of a page's photos and videos, those with a thumbnail (or one that can be made when asked): the others show their name. */
  pictured(items: ReadonlyArray<{ id: string }>): Set<string> {
    return this.d.thumbnails.previewable(items.map((p) => p.id));
  }

  /** A live file of the link's album, whoever added it; a file not (or no longer) in it is 404. */
  private item(open: OpenAlbumLink, itemId: string): CurrentFile {
    const accountId = this.d.albums.liveItemAccount(open.album.id, itemId);
    if (!accountId) throw notFound(Messages.itemNotInShare);
    return this.d.tree.requireLive({ accountId }, itemId);
  }

  /** "Download all": the album's live files as `<album>.zip`, whoever added them; one ZIP is one download (HEAD counts none). */
  openZip(token: string, visit: LinkVisit): ZipDownload {
    const opened = this.open(token, visit, 'page');
    const albumId = opened.album.id;
    const zip = this.d.downloads.zipFiles(opened.album.accountId, `${opened.album.name}.zip`, (after) =>
      this.d.items.liveFilesOfAlbum(albumId, after, ZIP_PAGE),
    );
    if (visit.headOnly) return zip;
    countedZip(zip, () => this.countDownload(opened.link));
    this.recordVisit(opened, visit.ip, 'download');
    return zip;
  }

  /** Counts one download against the link's cap (atomically): 410 once the cap is reached. */
  private countDownload(link: PublicAlbumLink): void {
    if (!this.d.albums.countLinkDownload(link.albumId, this.d.clock.now())) throw new AppError(410, Messages.shareDownloadsUsed);
  }

  facts(open: OpenAlbumLink): ShareFacts {
    const { link, album } = open;
    return {
      sharedBy: this.d.users.byId(album.accountId)?.name.trim() || null,
      expiresAt: link.expiresAt,
      downloadsLeft: link.maxDownloads === null ? null : Math.max(0, link.maxDownloads - link.downloads),
    };
  }

  /** Visits and downloads go to the audit log as a file link's do (the visitor is known only by address). */
  private recordVisit(open: OpenAlbumLink, ip: string, kind: 'access' | 'download', item?: HeldItem): void {
    const details = item ? { itemId: item.id, name: item.name } : { name: open.album.name };
    const visit = { ip, accountId: open.album.accountId, targetType: 'album', targetId: open.album.id, details } as const;
    if (this.visits.record(kind, visit) && kind === 'access') this.d.albums.touchLink(open.link.albumId, this.d.clock.now());
  }

  /** Checks a link's password (one attempt already spent): the unlock cookie's value, null without a password, else 401. */
  private async unlock(open: OpenAlbumLink, password: string, ip: string): Promise<string | null> {
    const { album } = open;
    const link = this.d.albums.linkByToken(open.link.token);
    if (!link) throw notFound(Messages.shareNotFound);
    if (link.passwordHash === null) return null;
    await checkLinkPassword(this.d.audit, link.passwordHash, password, {
      ip,
      accountId: album.accountId,
      targetType: 'album',
      targetId: album.id,
    });
    return unlockCookie(this.d.unlockKey, link, this.d.clock.now());
  }

  private isUnlocked(link: AlbumLinkRow, cookie: string | null): boolean {
    return isUnlocked(this.d.unlockKey, link, cookie, this.d.clock.now());
  }
}
