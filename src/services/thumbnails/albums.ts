import type { Album, AlbumMember, AlbumPage, AlbumRole } from '../../contract/albums.ts';
import type { ThumbnailSize } from '../../contract/files.ts';
import type { Clock } from '../../clock.ts';
import type { AlbumMemberRow, AlbumRow, AlbumsRepo, SharedAlbumRow } from '../../db/repos/albums.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { badRequest, conflict, forbidden, Messages, notFound, validationFailed } from '../../errors.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import { newId } from '../../lib/ids.ts';
import { permissionFor } from '../identity/permissions.ts';
import { type Principal, requirePermission } from '../identity/principal.ts';
import type { Tree } from '../files/tree.ts';
import type { CurrentFile } from '../files/downloads.ts';
import { isPhotoType, photoOf, type ServedThumbnail, type UnchangedThumbnail, type ThumbnailService } from './thumbnails.ts';

export interface AlbumDeps {
  clock: Clock;
  transactions: Transactions;
  albums: AlbumsRepo;
  users: UsersRepo;
  tree: Tree;
  thumbnails: ThumbnailService;
}

/** An album as the caller reaches it, and the caller's part in it. */
type Reached = { row: AlbumRow; role: AlbumRole };

const OWNER_ONLY = "Only the album's owner can do that.";
const VIEWER_ONLY = 'You can view this album: ask its owner to make you an editor to add or remove photos.';

const toMember = (m: AlbumMemberRow): AlbumMember => ({
  accountId: m.accountId,
  email: m.email,
  name: m.name,
  role: m.role,
  addedAt: new Date(m.addedAt).toISOString(),
});

const sharedOf = (r: SharedAlbumRow): Album => ({ ...albumOf(r, r.role), owner: { id: r.accountId, name: r.ownerName || r.ownerEmail } });

const albumOf = (r: AlbumRow, role: AlbumRole = 'owner'): Album => ({
  id: r.id,
  name: r.name,
  itemCount: r.itemCount,
  coverItemId: r.coverItemId,
  coverId: r.coverId,
  createdAt: new Date(r.createdAt).toISOString(),
  updatedAt: new Date(r.updatedAt).toISOString(),
  role,
});

function cursorOf(cursor: string | undefined): [number, string] | null {
  if (!cursor) return null;
  const values = decodeCursor(cursor, ['number', 'string']);
  if (!values) throw validationFailed([{ field: 'cursor', message: Messages.invalidCursor }]);
  return [values[0] as number, values[1] as string];
}

/**
 * An account's albums. An album holds references to the account's own live photos and videos, never their
 * bytes: a file in the trash is left out of it, and a purged one leaves it. Another account's album is 404.
 */
export class AlbumService {
  constructor(private readonly d: AlbumDeps) {}

  private require(caller: Principal, id: string): AlbumRow {
    const row = this.d.albums.byId(caller.accountId, id);
    if (!row) throw notFound(Messages.albumNotFound);
    return row;
  }

  /** The caller's own album, or one shared with its account; anyone else 404 (a removed member too). */
  private reach(caller: Principal, id: string): Reached {
    const own = this.d.albums.byId(caller.accountId, id);
    if (own) return { row: own, role: 'owner' };
    const shared = this.d.albums.sharedById(caller.accountId, id);
    if (!shared) throw notFound(Messages.albumNotFound);
    // The admin's switch closes albums shared with people as it closes every share with people.
    if (!this.d.tree.peopleSharingEnabled()) throw forbidden(Messages.peopleSharingOff);
    return { row: shared, role: shared.role };
  }

  /** The owner's album to manage: a member gets 403, anyone else 404. */
  owned(caller: Principal, id: string): AlbumRow {
    const reached = this.reach(caller, id);
    if (reached.role !== 'owner') throw forbidden(OWNER_ONLY);
    return reached.row;
  }

  /** An album whose files the caller may change: its owner or an editor; a viewer 403. */
  private editable(caller: Principal, id: string): Reached {
    const reached = this.reach(caller, id);
    if (reached.role === 'viewer') throw forbidden(VIEWER_ONLY);
    return reached;
  }

  private view(caller: Principal, id: string): Album {
    const reached = this.reach(caller, id);
    return reached.role === 'owner' ? albumOf(reached.row) : sharedOf(reached.row as SharedAlbumRow);
  }

  /** The account's live photos and videos for these ids, else 404 (another account's) or 400 (not a photo). */
  private photos(caller: Principal, ids: readonly string[]): string[] {
    const rows = this.d.tree.requireLiveMany({ accountId: caller.accountId }, ids);
    if (rows.some((r) => r.type !== 'file' || !isPhotoType(r.mimeType))) throw badRequest(Messages.albumPhotosOnly);
    return rows.map((r) => r.id);
  }

  list(
    caller: Principal,
    q: { limit: number; cursor?: string; whose?: 'mine' | 'shared' },
  ): { albums: Album[]; nextCursor: string | null } {
    const after = cursorOf(q.cursor);
    if (q.whose === 'shared') {
      if (!this.d.tree.peopleSharingEnabled()) return { albums: [], nextCursor: null };
      const rows = this.d.albums.sharedPage(caller.accountId, after && { addedAt: after[0], id: after[1] }, q.limit + 1);
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      return { albums: page.map(sharedOf), nextCursor: rows.length > q.limit && last ? encodeCursor([last.addedAt, last.id]) : null };
    }
    const rows = this.d.albums.page(caller.accountId, after && { createdAt: after[0], id: after[1] }, q.limit + 1);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return {
      albums: page.map((r) => albumOf(r)),
      nextCursor: rows.length > q.limit && last ? encodeCursor([last.createdAt, last.id]) : null,
    };
  }

  create(caller: Principal, input: { name: string; ids?: string[] }): { album: Album } {
    const id = newId();
    const now = this.d.clock.now();
    this.d.transactions.immediate(() => {
      const itemIds = input.ids ? this.photos(caller, input.ids) : [];
      this.d.albums.insert({ id, accountId: caller.accountId, name: input.name, at: now });
      this.d.albums.addItems(id, itemIds, now);
    });
    return { album: albumOf(this.require(caller, id)) };
  }

  get(caller: Principal, id: string, q: { limit: number; cursor?: string }): AlbumPage {
    const album = this.view(caller, id);
    const after = cursorOf(q.cursor);
    const rows = this.d.albums.itemsPage(id, after && { takenAt: after[0], id: after[1] }, q.limit + 1);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    const pictured = this.d.thumbnails.previewable(page.map((r) => r.id));
    return {
      album,
      // A file of another account (the owner's in a shared album, an editor's in one's own) is marked as theirs.
      items: page.map(({ accountId, addedBy, ...r }) =>
        accountId === caller.accountId ? photoOf(r, pictured) : { ...photoOf(r, pictured), owner: { id: accountId, name: addedBy } },
      ),
      nextCursor: rows.length > q.limit && last ? encodeCursor([last.takenAt, last.id]) : null,
    };
  }

  update(caller: Principal, id: string, patch: { name?: string; coverItemId?: string | null }): { album: Album } {
    this.d.transactions.immediate(() => {
      this.owned(caller, id);
      if (patch.coverItemId && !this.d.albums.contains(id, patch.coverItemId)) throw badRequest(Messages.albumCoverNotInAlbum);
      this.d.albums.update(id, patch, this.d.clock.now());
    });
    return { album: albumOf(this.require(caller, id)) };
  }

  /** Deletes the album only: its files stay where they are. */
  remove(caller: Principal, id: string): { message: string } {
    const album = this.owned(caller, id);
    this.d.albums.delete(id);
    return { message: `Album “${album.name}” deleted; its photos and videos stay in your files` };
  }

  addItems(caller: Principal, id: string, ids: string[]): { album: Album; added: number } {
    const added = this.d.transactions.immediate(() => {
      this.editable(caller, id);
      return this.d.albums.addItems(id, this.photos(caller, ids), this.d.clock.now());
    });
    return { album: this.view(caller, id), added };
  }

  /**
   * Takes files out of the album (they stay in the files); ids not in it change nothing. A viewer may take out
   * only its own files (added while it was an editor): they stay its to withdraw.
   */
  removeItems(caller: Principal, id: string, ids: string[]): { album: Album; removed: number } {
    const removed = this.d.transactions.immediate(() => {
      if (this.reach(caller, id).role === 'viewer') {
        const own = new Set(this.d.albums.itemsOf(id, caller.accountId));
        if (ids.length === 0 || !ids.every((i) => own.has(i))) throw forbidden(VIEWER_ONLY);
      }
      return this.d.albums.removeItems(id, [...new Set(ids)], this.d.clock.now());
    });
    return { album: this.view(caller, id), removed };
  }

  /** GET /api/albums/:id/members: the owner and the members alike see who has the album. */
  members(caller: Principal, id: string): { members: AlbumMember[] } {
    this.reach(caller, id);
    return { members: this.d.albums.members(id).map(toMember) };
  }

  /** POST /api/albums/:id/members: shares the album with an owner account of this instance, or changes its role. */
  addMember(
    caller: Principal,
    id: string,
    input: { email?: string | undefined; accountId?: string | undefined; role: 'viewer' | 'editor' },
  ): { member: AlbumMember } {
    const album = this.owned(caller, id);
    if (!this.d.tree.peopleSharingEnabled()) throw forbidden(Messages.peopleSharingOff);
    const account =
      input.accountId !== undefined
        ? this.d.users.personById(input.accountId)
        : this.d.users.byEmailKey((input.email ?? '').trim().toLowerCase());
    if (!account || account.parentUserId !== null || account.disabledAt !== null || account.deletionRequestedAt !== null)
      throw notFound(input.accountId !== undefined ? 'No account with this id on this Coffer.' : Messages.noAccountWithEmail);
    if (account.id === album.accountId) throw conflict('This is your album: share it with someone else.');
    // An editor changes the album: a sub-user makes one only if it may change albums itself.
    if (input.role === 'editor') requirePermission(caller, permissionFor('albums.edit'));
    this.d.albums.putMember({ albumId: id, accountId: account.id, role: input.role, addedBy: caller.loginId, at: this.d.clock.now() });
    return { member: toMember(this.d.albums.members(id).find((m) => m.accountId === account.id)!) };
  }

  /** DELETE /api/albums/:id/members/:accountId: the owner stops sharing; the account then gets 404 for it. */
  removeMember(caller: Principal, id: string, accountId: string): { message: string } {
    this.owned(caller, id);
    const member = this.d.albums.members(id).find((m) => m.accountId === accountId);
    const notMember = () => notFound('This person is not a member of this album.');
    if (!member) throw notMember();
    this.d.transactions.immediate(() => {
      if (!this.d.albums.removeMember(id, accountId)) throw notMember();
      // Its own files leave with it: it could no longer take them out, and the album (and its link) would keep showing them.
      this.d.albums.removeItems(id, this.d.albums.itemsOf(id, accountId), this.d.clock.now());
    });
    return { message: `Stopped sharing the album with ${member.name || member.email}` };
  }

  /** A live file of an album the caller reaches (its own, or shared with it), whoever's it is; else 404. */
  item(caller: Principal, id: string, itemId: string): CurrentFile {
    this.reach(caller, id);
    const accountId = this.d.albums.liveItemAccount(id, itemId);
    if (!accountId) throw notFound(Messages.itemNotFound);
    return this.d.tree.requireLive({ accountId }, itemId);
  }

  /**
   * GET /api/albums/:id/items/:itemId/thumbnail: a file of the album through the album's door, so a member
   * sees the owner's photos it could not otherwise read; a file not (or no longer) in it is 404.
   */
  thumbnail(
    caller: Principal,
    id: string,
    itemId: string,
    size: ThumbnailSize,
    etag: string | null,
  ): Promise<ServedThumbnail | UnchangedThumbnail> {
    this.reach(caller, id);
    const accountId = this.d.albums.liveItemAccount(id, itemId);
    if (!accountId) throw notFound(Messages.noThumbnail);
    return this.d.thumbnails.serve(this.d.tree.requireLive({ accountId }, itemId), size, etag);
  }
}
