import type { Album, AlbumPage } from '../../contract/albums.ts';
import type { Clock } from '../../clock.ts';
import type { AlbumRow, AlbumsRepo } from '../../db/repos/albums.ts';
import type { Transactions } from '../../db/repos/index.ts';
import { badRequest, Messages, notFound, validationFailed } from '../../errors.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import { newId } from '../../lib/ids.ts';
import type { Principal } from '../accounts/principal.ts';
import type { Tree } from '../files/tree.ts';
import { isPhotoType, photoOf } from './thumbnails.ts';

export interface AlbumDeps {
  clock: Clock;
  transactions: Transactions;
  albums: AlbumsRepo;
  tree: Tree;
}

const albumOf = (r: AlbumRow): Album => ({
  id: r.id,
  name: r.name,
  itemCount: r.itemCount,
  coverItemId: r.coverItemId,
  coverId: r.coverId,
  createdAt: new Date(r.createdAt).toISOString(),
  updatedAt: new Date(r.updatedAt).toISOString(),
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

  /** The account's live photos and videos for these ids, else 404 (another account's) or 400 (not a photo). */
  private photos(caller: Principal, ids: readonly string[]): string[] {
    const rows = this.d.tree.requireLiveMany({ accountId: caller.accountId }, ids);
    if (rows.some((r) => r.type !== 'file' || !isPhotoType(r.mimeType))) throw badRequest(Messages.albumPhotosOnly);
    return rows.map((r) => r.id);
  }

  list(caller: Principal, q: { limit: number; cursor?: string }): { albums: Album[]; nextCursor: string | null } {
    const after = cursorOf(q.cursor);
    const rows = this.d.albums.page(caller.accountId, after && { createdAt: after[0], id: after[1] }, q.limit + 1);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return { albums: page.map(albumOf), nextCursor: rows.length > q.limit && last ? encodeCursor([last.createdAt, last.id]) : null };
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
    const album = this.require(caller, id);
    const after = cursorOf(q.cursor);
    const rows = this.d.albums.itemsPage(id, after && { takenAt: after[0], id: after[1] }, q.limit + 1);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return {
      album: albumOf(album),
      items: page.map(photoOf),
      nextCursor: rows.length > q.limit && last ? encodeCursor([last.takenAt, last.id]) : null,
    };
  }

  update(caller: Principal, id: string, patch: { name?: string; coverItemId?: string | null }): { album: Album } {
    this.d.transactions.immediate(() => {
      this.require(caller, id);
      if (patch.coverItemId && !this.d.albums.contains(id, patch.coverItemId)) throw badRequest(Messages.albumCoverNotInAlbum);
      this.d.albums.update(id, patch, this.d.clock.now());
    });
    return { album: albumOf(this.require(caller, id)) };
  }

  /** Deletes the album only: its files stay where they are. */
  remove(caller: Principal, id: string): { message: string } {
    const album = this.require(caller, id);
    this.d.albums.delete(id);
    return { message: `Album “${album.name}” deleted; its photos and videos stay in your files` };
  }

  addItems(caller: Principal, id: string, ids: string[]): { album: Album; added: number } {
    const added = this.d.transactions.immediate(() => {
      this.require(caller, id);
      return this.d.albums.addItems(id, this.photos(caller, ids), this.d.clock.now());
    });
    return { album: albumOf(this.require(caller, id)), added };
  }

  /** Takes files out of the album (they stay in the files); ids not in it change nothing. */
  removeItems(caller: Principal, id: string, ids: string[]): { album: Album; removed: number } {
    const removed = this.d.transactions.immediate(() => {
      this.require(caller, id);
      return this.d.albums.removeItems(id, [...new Set(ids)], this.d.clock.now());
    });
    return { album: albumOf(this.require(caller, id)), removed };
  }
}
