import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { TusUpload, TusUploadsRepo } from '../../db/repos/tus-uploads.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import {
  AppError,
  badRequest,
  conflict,
  fileTooLarge,
  forbidden,
  Messages,
  notFound,
  tusOffsetMismatch,
  tusPastLength,
} from '../../errors.ts';
import { newToken } from '../../lib/ids.ts';
import type { Logger } from '../../log.ts';
import { StorageUnavailableError } from '../../storage/driver.ts';
import { wrappedKeyId } from '../../storage/keyring.ts';
import { newStorageKey } from '../../storage/keys.ts';
import { type AppendProgress, ResealMismatchError, type ResumableObject, type ResumableStore } from '../../storage/resumable.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import type { AuditPrincipal } from '../admin/audit.ts';
import type { DiskSpaceService } from '../files/disk-space.ts';
import type { Item as ItemView } from '../../contract/files.ts';
import type { ItemViews } from '../files/item-views.ts';
import { uploaderName } from '../sharing/shares.ts';
import { relativeFolders, uploadedFileName } from '../files/names.ts';
import { type Principal, requirePermission } from '../identity/principal.ts';
import { permissionFor } from '../identity/permissions.ts';
import type { Item } from '../../db/repos/items.ts';
import { type QuotaService, roomRuleOf } from '../files/quota.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { Tree } from '../files/tree.ts';
import { parseModifiedTime, type UploadService } from '../files/uploads.ts';
import { noBytes } from '../../lib/buffers.ts';
import { limitAddress } from '../../lib/ip.ts';

/** Where an upload stands, as HEAD and PATCH report it. */
export interface TusState {
  id: string;
  offset: number;
  length: number;
  /** When it expires if nothing more arrives; null once completed. */
  expiresAt: number | null;
  /** The file it created, once completed. */
  itemId: string | null;
}

/**
 * Who sends the bytes: a login, or (`drop`) a visitor of a drop folder's link, whose uploads only that link
 * reaches and whose file records who sent it (metadata `uploader`, the name they give).
 */
export type TusSender = Principal & { drop?: { linkId: string; visitId: string } };

/** Upload-Metadata, decoded: `filename` is required, the rest optional. */
export type TusMetadata = Partial<
  Record<'filename' | 'parentId' | 'relativePath' | 'lastModified' | 'clientId' | 'filetype' | 'replaceId' | 'uploader', string>
>;

/** Bytes of one request: the body, and the length it declared (null when sent chunked). */
export interface TusBody {
  chunks: AsyncIterable<Uint8Array>;
  declared: number | null;
}

export interface TusSweep {
  /** Uploads whose bytes were all stored and whose file a crash kept from being created: created now. */
  finished: number;
  /** Unfinished uploads past their expiry, deleted with their bytes; their reservations end. */
  expired: number;
  /** Records of completed uploads past their expiry, forgotten (their files stay). */
  forgotten: number;
  /** Staged bytes no upload owns any more, removed. */
  strays: number;
}

export interface StaleUploads {
  /** Uploads not finished yet. */
  unfinished: number;
  /** Of those, the ones past their expiry (the server's maintenance job deletes them). */
  expired: Array<{ id: string; name: string; accountId: string; offset: number; length: number; expiresAt: string }>;
  /** Staged bytes that no upload owns. */
  strayStaged: Array<{ key: string; size: number; lastModified: string }>;
}

const HEAD_BYTES = 64 * 1024;
// An upload that has received no byte this long after its creation expires (sooner than TUS_EXPIRY_HOURS).
const UNSTARTED_EXPIRY_MS = 15 * 60_000;
// Unfinished uploads through share links, expired ones not yet swept included: per link, and per address.
export const DROP_UPLOADS_PER_LINK = 8;
export const DROP_UPLOADS_PER_ADDRESS = 4;
/** Unfinished uploads of one login: each is a row every quota and disk check of its account sums. */
export const UPLOADS_PER_LOGIN = 1000;
const SWEEP_PAGE = 200;
const LISTED = 100;
// How long a termination waits for a PATCH still recording what it received (a client that just hung up).
const TERMINATE_WAIT_MS = 10_000;
// How long a HEAD waits for the PATCH that holds every byte to create the file (423 past it, as for a PATCH).
const COMPLETING_WAIT_MS = 10_000;
// How stale the recorded progress of an upload receiving bytes may grow: its recorded expiry trails the real one by no more.
const RECORD_EVERY_MS = 10_000;

/** An upload's acknowledged progress not yet recorded in the database (this process answers from it), and its record. */
interface Unrecorded {
  progress: Pick<TusUpload, 'offset' | 'durableOffset' | 'tail' | 'updatedAt' | 'expiresAt'>;
  recorded: Recorded;
}

type Recorded = Pick<TusUpload, 'offset' | 'durableOffset' | 'updatedAt'>;

/**
 * Resumable uploads (tus 1.0): creation reserves the whole length against the quota after the same
 * checks as POST /upload (permission, folder, name, max size, quota, disk); each PATCH seals its bytes
 * onto a staged object (ResumableStore) and records the acknowledged offset and how much of it is synced
 * (after a restart, the unsynced segments are authenticated before the offset is told); the PATCH that
 * completes it publishes the object and hands it to the upload pipeline, which creates the file as
 * POST /upload does.
 * One request at a time per upload (a lock; a second one is refused with 423); another account's upload
 * is 404. Unfinished uploads expire `expiryMs` after their last bytes.
 */
export class TusUploadService {
  private readonly locks = new Set<string>();
  /** Uploads this process has appended to or settled: their bytes beyond the durable offset are in its page cache. */
  private readonly settledHere = new Set<string>();
  private readonly unlocked = new Map<string, Array<() => void>>();
  /**
   * Progress acknowledged since the upload's record: a PATCH that ends at a segment boundary, with no sync
   * finished since, is not committed (a commit per PATCH stalled some behind the disk's syncs); after a
   * restart the staged segments past the record are authenticated instead (`settled`).
   */
  private readonly unrecorded = new Map<string, Unrecorded>();

  constructor(
    private readonly d: {
      /** The retention time (RetentionClock): a clock set ahead while uploads run expires none of them before it comes back. */
      clock: Pick<Clock, 'now'>;
      log: Logger;
      transactions: Transactions;
      repo: TusUploadsRepo;
      /** The sender's login, read again when the sweep finishes its upload. */
      users: Pick<UsersRepo, 'byId'>;
      tree: Tree;
      quota: QuotaService;
      settings: SettingsService;
      disk: DiskSpaceService;
      sealed: SealedStore;
      resumable: ResumableStore;
      uploads: UploadService;
      views: ItemViews;
      /** Records who sent a file through a drop folder's link, in the transaction that creates it. */
      drops: { recordResumed(upload: TusUpload, item: Item): void };
      /** The other uploads staging objects here (chunked uploads): their staged bytes are never strays. */
      otherStaging: { keysInUse(keys: readonly string[]): Set<string> };
      expiryMs: number;
    },
  ) {}

  /** POST: checks everything before a byte is accepted, reserves the length, then takes the bytes sent with it (if any). */
  async create(caller: TusSender, length: number, metadata: TusMetadata, body: TusBody | null): Promise<TusState> {
    // An editor of a shared folder uploads into it: the file and its reservation are the sharing owner's.
    const principal = this.d.tree.actor(
      caller,
      metadata.replaceId ? { ids: [metadata.replaceId] } : { parentId: metadata.parentId || null },
      'edit',
    );
    const max = this.d.settings.get('maxUploadBytes');
    if (length > max) throw fileTooLarge(max);
    if (metadata.filename === undefined) throw badRequest(Messages.tusNoFilename);
    const name = uploadedFileName(metadata.filename);
    const folders = relativeFolders(metadata.relativePath).length;
    // Refused before a byte is sent: the folders would sit past the depth limit, whichever of them exist yet.
    if (folders > 0 && !metadata.replaceId) this.d.tree.items.assertNests(metadata.parentId || null, folders);
    // A replacement needs the permission to modify as well, and names a live file of the account.
    const replaced = metadata.replaceId ? this.replaceTarget(principal, metadata.replaceId) : null;
    const keys = this.d.resumable.begin();
    const now = this.d.clock.now();
    const row: TusUpload = {
      id: newToken(),
      accountId: principal.accountId,
      loginId: principal.loginId,
      storageKey: newStorageKey(),
      length,
      offset: 0,
      durableOffset: 0,
      wrappedKey: keys.wrappedKey,
      keyId: keys.keyId,
      header: keys.header,
      tail: null,
      name,
      parentId: replaced ? replaced.parentId : metadata.parentId || null,
      relativePath: replaced ? null : metadata.relativePath || null,
      modifiedAt: parseModifiedTime(metadata.lastModified),
      clientId: metadata.clientId ?? null,
      clientType: metadata.filetype || null,
      replaceId: replaced?.id ?? null,
      state: 'receiving',
      itemId: null,
      shareLinkId: principal.drop?.linkId ?? null,
      shareVisitId: principal.drop?.visitId ?? null,
      shareUploader: principal.drop ? uploaderName(metadata.uploader) : null,
      // The client as the per-address cap counts it (an IPv6 one by its /64): the column is only counted.
      shareIp: principal.drop ? limitAddress(principal.ip) : null,
      createdAt: now,
      updatedAt: now,
      expiresAt: now + Math.min(this.d.expiryMs, UNSTARTED_EXPIRY_MS),
    };
    this.d.transactions.immediate(() => {
      // In the transaction that reserves: two creations cannot each count the room the other takes.
      this.d.disk.assertRoomToReserve(length);
      this.d.tree.requireFolder(principal, row.parentId);
      if (principal.drop) this.assertDropRoom(principal.drop.linkId, limitAddress(principal.ip));
      else if (this.d.repo.unfinishedOfLogin(principal.accountId, principal.loginId) >= UPLOADS_PER_LOGIN)
        throw new AppError(
          429,
          `You have ${UPLOADS_PER_LOGIN} unfinished resumable uploads, the most a login may have; finish or cancel some (DELETE their URLs), then try again`,
        );
      // Nothing is removed for a reservation: an own login's may count on versions, removed once its bytes commit.
      this.d.quota.assertCouldFit(principal.accountId, length, mayEvict(principal) ? 'evict' : 'free');
      this.d.repo.insert(row);
    });
    // Nothing is staged yet: there is nothing for a restart's check to find.
    this.settledHere.add(row.id);
    // An empty file is complete at once: tus clients send no PATCH for it.
    if (body === null && length > 0) return stateOf(row);
    this.lock(row.id);
    try {
      return await this.receive(row, principal, body ?? { chunks: noBytes(), declared: 0 });
    } catch (err) {
      // The client never learnt this upload's address, so nothing can resume it: it goes, with its reservation.
      const current = this.d.repo.get(row.id);
      if (current?.state === 'receiving') await this.remove(current);
      throw err;
    } finally {
      this.unlock(row.id);
    }
  }

  /** 429 when the link, or the visitor's address (`limitAddress`), already holds its share of unfinished uploads. */
  private assertDropRoom(linkId: string, ip: string): void {
    const held = this.d.repo.unfinishedDrops(linkId, ip);
    if (held.address >= DROP_UPLOADS_PER_ADDRESS) throw new AppError(429, Messages.tusDropAddressBusy);
    if (held.link >= DROP_UPLOADS_PER_LINK) throw new AppError(429, Messages.tusDropLinkBusy);
  }

  /**
   * A replacement changes an existing file: whoever sends its bytes or completes it must hold Modify then, not
   * only at creation (a permission taken away takes effect at the next request; another login of the account may drive it).
   */
  private assertMayReplace(row: TusUpload, sender: TusSender): void {
    if (row.replaceId) requirePermission(sender, permissionFor('uploads.replace'));
  }

  private replaceTarget(principal: Principal, id: string): Item {
    requirePermission(principal, permissionFor('uploads.replace'));
    const row = this.d.tree.requireLive(principal, id);
    if (row.type !== 'file') throw badRequest(Messages.onlyFiles);
    return row;
  }

  /** HEAD: the acknowledged offset. An upload whose bytes are all stored gets its file now if a crash kept it from that. */
  async status(principal: TusSender, id: string): Promise<TusState> {
    let row = this.owned(principal, id);
    // Every byte in but no file yet: the PATCH holding the lock is making it, so wait, as a HEAD reporting the whole length must name the file.
    const completing = row.state !== 'completed' && row.offset === row.length;
    // Otherwise locked: a PATCH in this process holds it, and has settled the upload.
    const locked = completing
      ? await this.waitLock(id, COMPLETING_WAIT_MS)
      : (row.state === 'sealed' || this.unsettled(row)) && this.tryLock(id);
    if (completing && !locked) throw new AppError(423, Messages.tusLocked);
    if (locked) {
      try {
        row = await this.settled(this.owned(principal, id));
        if (row.state === 'sealed') {
          this.assertMayReplace(row, principal);
          await this.finish(row, principal, this.evictsFor(row, principal));
        }
      } finally {
        this.unlock(id);
      }
      row = this.owned(principal, id);
    }
    this.assertNotExpired(row);
    return stateOf(row);
  }

  /** PATCH: appends the body at `offset`, which must be where the upload stands. */
  async append(principal: TusSender, id: string, offset: number, body: TusBody): Promise<TusState> {
    const owned = this.owned(principal, id);
    this.assertMayReplace(owned, principal);
    if (!this.tryLock(id)) throw new AppError(423, Messages.tusLocked);
    try {
      const row = await this.settled(owned);
      this.assertNotExpired(row);
      if (offset !== row.offset) throw tusOffsetMismatch(offset, row.offset);
      if (row.state === 'sealed') await this.finish(row, principal, this.evictsFor(row, principal));
      if (row.state !== 'receiving') {
        // Every byte is in: a body would go past Upload-Length (an empty PATCH at the end stays a harmless check).
        if (body.declared === null ? await bytesFollow(body.chunks[Symbol.asyncIterator]()) : body.declared > 0)
          throw tusPastLength(row.length);
        return stateOf(this.owned(principal, id));
      }
      return await this.receive(row, principal, body);
    } finally {
      this.unlock(id);
    }
  }

  /** DELETE: ends the upload, its reservation and its stored bytes. A completed upload's file stays; only the record goes. */
  async terminate(principal: TusSender, id: string): Promise<void> {
    this.owned(principal, id);
    if (!(await this.waitLock(id, TERMINATE_WAIT_MS))) throw new AppError(423, Messages.tusLocked);
    try {
      const row = this.owned(principal, id);
      await this.remove(row);
    } finally {
      this.unlock(id);
    }
  }

  /** The login is gone (a sub-user deleted): its unfinished uploads end with their reservations and bytes; one receiving a PATCH now ends at the next sweep. */
  async endLogin(loginId: string): Promise<void> {
    await this.end(this.d.repo.unfinishedOf(loginId));
  }

  /** An account was deleted: its logins' unfinished uploads into other accounts (a member's, into a shared folder) end with their reservations and bytes. */
  async endGoneLogins(): Promise<void> {
    await this.end(this.d.repo.unfinishedOfGoneLogins());
  }

  private async end(rows: readonly TusUpload[]): Promise<void> {
    for (const row of rows) {
      if (!this.tryLock(row.id)) continue;
      try {
        const fresh = this.d.repo.get(row.id);
        if (fresh && fresh.state !== 'completed') await this.remove(fresh);
      } finally {
        this.unlock(row.id);
      }
    }
  }

  /**
   * `memberAccountId` lost a share of `ownerId` (removed, made viewer, its group gone): its unfinished uploads there that it may no
   * longer finish end with their reservations and bytes, which would otherwise hold the owner's quota until they expire.
   * One receiving a PATCH now is refused at its next one and ends at its expiry.
   */
  async leaveShare(memberAccountId: string, ownerId: string): Promise<void> {
    const rows = this.d.repo.unfinishedOfMemberIn(memberAccountId, ownerId);
    await this.end(rows.filter((row) => !row.parentId || !this.d.tree.editsShared(memberAccountId, row.parentId)));
  }

  /** GET: the file a completed upload created, for a client that missed the PATCH's answer. */
  result(principal: TusSender, id: string): { item: ItemView; clientId: string | null } {
    const row = this.owned(principal, id);
    if (row.state !== 'completed' || !row.itemId) {
      throw new AppError(409, Messages.tusNotFinished, { offset: row.offset, length: row.length });
    }
    // owned() checked the caller may reach the upload's account (its own, or a share's owner).
    return {
      item: this.d.views.one(row.accountId, this.d.tree.requireLive({ accountId: row.accountId }, row.itemId)),
      clientId: row.clientId,
    };
  }

  /**
   * The maintenance job (and start-up): creates the files of uploads a crash left fully stored, deletes
   * unfinished uploads past their expiry with their bytes, forgets completed ones past it, and removes
   * staged bytes that no upload owns (an account deleted mid-upload).
   */
  async sweep(): Promise<TusSweep> {
    const out: TusSweep = { finished: 0, expired: 0, forgotten: 0, strays: 0 };
    const skipped = new Set<string>();
    for (const row of this.d.repo.sealed(SWEEP_PAGE)) {
      if (!this.tryLock(row.id)) continue;
      try {
        const fresh = this.d.repo.get(row.id);
        if (fresh?.state !== 'sealed') continue;
        // Who sent it is not known here: nothing of the account's history is removed for it. A member's login acts for its
        // own account, so the file lands only where the member still edits (a gone login's account is none).
        const login = this.d.users.byId(fresh.loginId);
        const sender = login ? (login.parentUserId ?? login.id) : '';
        await this.finish(fresh, { accountId: sender, loginId: fresh.loginId }, false);
        out.finished++;
      } catch (err) {
        // Every byte arrived and the storage is away: the upload waits for it, past its expiry too, rather than being deleted.
        if (err instanceof StorageUnavailableError) skipped.add(row.id);
        this.d.log.warn('could not finish a stored upload', { uploadId: row.id, err: String(err) });
      } finally {
        this.unlock(row.id);
      }
    }
    for (;;) {
      const rows = this.d.repo.expired(this.d.clock.now(), SWEEP_PAGE).filter((r) => !skipped.has(r.id));
      if (rows.length === 0) break;
      for (const row of rows) {
        // One in use (a request arriving as it expires) or failing to go waits for the next sweep.
        skipped.add(row.id);
        if (!this.tryLock(row.id)) continue;
        try {
          // Bytes acknowledged since its record put its expiry later.
          if (this.withUnrecorded(row)!.expiresAt >= this.d.clock.now()) continue;
          await this.remove(row);
          if (row.state === 'completed') out.forgotten++;
          else out.expired++;
        } catch (err) {
          this.d.log.warn('could not delete an expired upload', { uploadId: row.id, err: String(err) });
        } finally {
          this.unlock(row.id);
        }
      }
    }
    const cutoff = this.d.clock.now() - this.d.expiryMs;
    for (const stray of await this.strayStaged()) {
      if (stray.lastModified.getTime() > cutoff) continue;
      if (await this.d.resumable.discard(stray.key)) out.strays++;
    }
    if (out.expired || out.strays || out.finished) this.d.log.info('resumable uploads swept', { ...out });
    return out;
  }

  /** For `coffer doctor`: unfinished uploads, those past their expiry, and staged bytes no upload owns. */
  async stale(): Promise<StaleUploads> {
    const expired = this.d.repo.expired(this.d.clock.now(), LISTED, { unfinished: true });
    const strays = await this.strayStaged();
    return {
      unfinished: this.d.repo.countUnfinished(),
      expired: expired.map((r) => ({
        id: r.id,
        name: r.name,
        accountId: r.accountId,
        offset: r.offset,
        length: r.length,
        expiresAt: new Date(r.expiresAt).toISOString(),
      })),
      strayStaged: strays.slice(0, LISTED).map((s) => ({ key: s.key, size: s.size, lastModified: s.lastModified.toISOString() })),
    };
  }

  /** Of `keys`, those an unfinished upload owns (orphan review must never offer them). */
  keysInUse(keys: readonly string[]): Set<string> {
    return this.d.repo.keysInUse(keys);
  }

  /** Streams the body onto the staged object and records each step; the completing step creates the file. */
  private async receive(row: TusUpload, actor: TusSender, body: TusBody): Promise<TusState> {
    const remaining = row.length - row.offset;
    if (body.declared !== null && body.declared > remaining) throw tusPastLength(row.length);
    this.d.disk.assertRoomToStage(Math.min(body.declared ?? remaining, remaining));
    let recorded: Recorded = this.unrecorded.get(row.id)?.recorded ?? row;
    /** Records progress, or keeps it in memory (see `unrecorded`); returns the upload's new expiry. */
    const record = (p: AppendProgress, sealed = false): number => {
      const now = this.d.clock.now();
      // Nothing received yet: the creation's short expiry stands.
      const expiresAt = p.offset > 0 ? now + this.d.expiryMs : row.expiresAt;
      if (!sealed && !mustRecord(recorded, p, now)) {
        const progress = { offset: p.offset, durableOffset: p.durableOffset, tail: p.tail, updatedAt: now, expiresAt };
        this.unrecorded.set(row.id, { progress, recorded });
        return expiresAt;
      }
      this.d.repo.progress(row.id, { ...p, sealed, at: now, expiresAt });
      this.unrecorded.delete(row.id);
      recorded = { offset: p.offset, durableOffset: p.durableOffset, updatedAt: now };
      return expiresAt;
    };
    this.settledHere.add(row.id);
    const chunks = body.chunks[Symbol.asyncIterator]();
    let result: Awaited<ReturnType<ResumableStore['append']>>;
    try {
      result = await this.d.resumable.append(
        resumableOf(row),
        this.checked({ [Symbol.asyncIterator]: () => chunks }, remaining, row.length),
        {
          onCheckpoint: (p) => record(p),
        },
      );
    } catch (err) {
      if (err instanceof ResealMismatchError) throw conflict(Messages.tusResealMismatch);
      throw err;
    }
    // A chunked body tells its length only by ending: one going on past the upload's is refused as a declared one is, its last
    // segment not acknowledged (staged, it is sealed again from the same bytes when the client resends them).
    if (result.complete && !result.interrupted && body.declared === null && (await bytesFollow(chunks))) throw tusPastLength(row.length);
    const expiresAt = record(result, result.complete);
    // What arrived before the body failed is kept; the failure (a client that hung up, too many bytes) is the answer.
    if (result.interrupted) throw result.interrupted;
    // Still receiving, under the lock: the answer is what was just acknowledged (no read of the record a PATCH).
    if (!result.complete) return { id: row.id, offset: result.offset, length: row.length, expiresAt, itemId: null };
    const current = this.d.repo.get(row.id)!;
    if (current.state === 'sealed') await this.finish(current, actor, this.evictsFor(row, actor));
    return stateOf(this.d.repo.get(row.id)!);
  }

  /** Written by an earlier process, maybe beyond its record, and maybe not all on the disk: a power loss may have come between. */
  private unsettled(row: TusUpload): boolean {
    return row.state === 'receiving' && !this.settledHere.has(row.id);
  }

  /** The upload where its staged bytes really stand (see ResumableStore.recover); call with its lock held. */
  private async settled(row: TusUpload): Promise<TusUpload> {
    if (!this.unsettled(row)) return row;
    const at = await this.d.resumable.recover(resumableOf(row), { pastOffset: true });
    this.d.repo.progress(row.id, { ...at, durableOffset: at.offset, sealed: false, at: row.updatedAt, expiresAt: row.expiresAt });
    this.unrecorded.delete(row.id);
    if (at.offset < row.offset) {
      this.d.log.warn('resumable upload resumes from the bytes the disk kept', {
        uploadId: row.id,
        acknowledged: row.offset,
        kept: at.offset,
      });
    }
    this.settledHere.add(row.id);
    return this.current(row.id)!;
  }

  /** The body, refused past the upload's length, with the disk's reserve checked every few MiB. */
  private async *checked(chunks: AsyncIterable<Uint8Array>, remaining: number, length: number): AsyncGenerator<Uint8Array> {
    const checkEvery = this.d.disk.checkEvery;
    let left = remaining;
    let sinceCheck = 0;
    for await (const chunk of chunks) {
      if (chunk.byteLength > left) throw tusPastLength(length);
      left -= chunk.byteLength;
      sinceCheck += chunk.byteLength;
      if (sinceCheck >= checkEvery) {
        sinceCheck = 0;
        this.d.disk.assertRoom();
      }
      yield chunk;
    }
  }

  /** Publishes the whole object and creates its file; idempotent up to the transaction that completes the upload. */
  private async finish(row: TusUpload, actor: AuditPrincipal, evicts: boolean): Promise<void> {
    await this.d.resumable.publish({ key: row.storageKey, length: row.length });
    const head = await this.readHead(row);
    // A master key rotated while the upload ran: the file starts out under the current one.
    const wrappedKey = this.d.sealed.keyring.rewrap(row.wrappedKey);
    // Set when the member's right to write there has ended: the upload can never finish, so its bytes and reservation go.
    const refusal: { err?: AppError } = {};
    try {
      await this.commitResumed(row, actor, evicts, head, wrappedKey, refusal);
    } catch (err) {
      if (err === refusal.err) await this.remove(row);
      throw err;
    }
  }

  private async commitResumed(
    row: TusUpload,
    actor: AuditPrincipal,
    evicts: boolean,
    head: Uint8Array,
    wrappedKey: string,
    refusal: { err?: AppError },
  ): Promise<void> {
    await this.d.uploads.commitResumed(
      // A member's upload into a shared folder becomes a file of the sharing owner's account.
      { ...actor, accountId: row.accountId },
      {
        replaceId: row.replaceId,
        storageKey: row.storageKey,
        size: row.length,
        wrappedKey,
        keyId: wrappedKeyId(wrappedKey),
        head,
        clientType: row.clientType,
        name: row.name,
        parentId: row.parentId,
        relativePath: row.relativePath,
        modified: row.modifiedAt,
        evicts,
        droppedVia: row.shareLinkId,
      },
      (item) => {
        // A member's file lands only where the member still edits: its folder may have left the share meanwhile (moved
        // out, or trashed, which sends the file to the owner's top level); refused in the transaction that would make it.
        if (actor.accountId !== row.accountId && !(item.parentId && this.d.tree.editsShared(actor.accountId, item.parentId)))
          throw (refusal.err = lostShare(this.d.tree, actor.accountId, item.parentId));
        const now = this.d.clock.now();
        this.d.repo.completed(row.id, item.id, now, now + this.d.expiryMs);
        if (row.shareLinkId) this.d.drops.recordResumed(row, item);
      },
    );
  }

  private async readHead(row: TusUpload): Promise<Uint8Array> {
    if (row.length === 0) return new Uint8Array(0);
    const end = Math.min(HEAD_BYTES, row.length);
    return this.d.sealed.readBytes(row.storageKey, { size: row.length, wrappedKey: row.wrappedKey }, { start: 0, end });
  }

  /** Deletes an upload: an unfinished one's staged bytes (or its published object) first, then the record. */
  private async remove(row: TusUpload): Promise<void> {
    this.settledHere.delete(row.id);
    this.unrecorded.delete(row.id);
    if (row.state !== 'completed') {
      await this.d.resumable.discard(row.storageKey);
      await this.d.sealed.delete(row.storageKey);
    }
    this.d.repo.delete(row.id);
  }

  private async strayStaged() {
    const staged = [];
    for await (const o of this.d.sealed.driver.staging.list()) staged.push(o);
    const keys = staged.map((s) => s.key);
    const owned = this.d.repo.keysInUse(keys);
    const others = this.d.otherStaging.keysInUse(keys);
    return staged.filter((s) => !owned.has(s.key) && !others.has(s.key));
  }

  /**
   * The account's upload (a link's, through that link only), else 404 whatever the reason (another
   * account's id included). A member's upload into a shared folder stays its login's while the
   * membership still allows it, checked each time.
   */
  private owned(principal: TusSender, id: string): TusUpload {
    const row = this.current(id);
    if (!row || row.shareLinkId !== (principal.drop?.linkId ?? null)) throw notFound(Messages.tusNotFound);
    if (row.accountId === principal.accountId) return row;
    if (row.loginId !== principal.loginId || !row.parentId) throw notFound(Messages.tusNotFound);
    let actor: Principal;
    try {
      actor = this.d.tree.actor(principal, { parentId: row.parentId }, 'edit');
    } catch {
      throw notFound(Messages.tusNotFound);
    }
    if (actor.accountId !== row.accountId) throw notFound(Messages.tusNotFound);
    return row;
  }

  /** The upload's record with the progress this process acknowledged since. */
  private current(id: string): TusUpload | null {
    return this.withUnrecorded(this.d.repo.get(id));
  }

  private withUnrecorded(row: TusUpload | null): TusUpload | null {
    const since = row && this.unrecorded.get(row.id);
    return since && row.state === 'receiving' ? { ...row, ...since.progress } : row;
  }

  /** Whether the upload is sent by a login of its account itself (the owner or a sub-user), not a visitor or member. */
  private evictsFor(row: TusUpload, sender: TusSender): boolean {
    return mayEvict(sender) && sender.accountId === row.accountId;
  }

  private assertNotExpired(row: TusUpload): void {
    if (row.state !== 'completed' && row.expiresAt <= this.d.clock.now()) throw new AppError(410, Messages.tusExpired);
  }

  private tryLock(id: string): boolean {
    if (this.locks.has(id)) return false;
    this.locks.add(id);
    return true;
  }

  private lock(id: string): void {
    this.locks.add(id);
  }

  private unlock(id: string): void {
    this.locks.delete(id);
    const waiters = this.unlocked.get(id);
    this.unlocked.delete(id);
    for (const wake of waiters ?? []) wake();
  }

  /** Takes the lock, waiting up to `ms` for the request that holds it to end. */
  private async waitLock(id: string, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.tryLock(id)) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        const list = this.unlocked.get(id) ?? [];
        list.push(() => {
          clearTimeout(timer);
          resolve();
        });
        this.unlocked.set(id, list);
      });
    }
    return true;
  }
}

/** Why a member's file may not land in `folderId`: 403 while it still views the share there, else 404 as if the folder were not there. */
function lostShare(tree: Tree, memberAccountId: string, folderId: string | null): AppError {
  return folderId && tree.sharedRootOf(memberAccountId, folderId) ? forbidden(Messages.viewerOnly) : notFound(Messages.folderNotFound);
}

/** Whether a sender's upload may count on the account's versions: a visitor's or a member's never does. */
function mayEvict(sender: TusSender): boolean {
  return !sender.drop && roomRuleOf(sender) === 'evict';
}

/**
 * Whether acknowledged progress must be committed now rather than kept in memory: the bytes of a partial
 * segment (kept nowhere else), a sync finished (the record then trails by less than the sync lag), the
 * first bytes (the creation's short expiry ends), or a record older than RECORD_EVERY_MS (its expiry).
 */
function mustRecord(recorded: Recorded, p: AppendProgress, now: number): boolean {
  return (
    p.tail !== null || p.durableOffset > recorded.durableOffset || recorded.offset === 0 || now - recorded.updatedAt >= RECORD_EVERY_MS
  );
}

/** Whether a body goes on with any byte; a body that fails now (a client gone) is taken to have ended. */
async function bytesFollow(chunks: AsyncIterator<Uint8Array>): Promise<boolean> {
  try {
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) if (next.value.byteLength > 0) return true;
  } catch {
    return false;
  }
  return false;
}

function resumableOf(row: TusUpload): ResumableObject {
  const { storageKey: key, length, offset, durableOffset, wrappedKey, header, tail } = row;
  return { key, length, offset, durableOffset, wrappedKey, header, tail };
}

function stateOf(row: TusUpload): TusState {
  return {
    id: row.id,
    offset: row.offset,
    length: row.length,
    expiresAt: row.state === 'completed' ? null : row.expiresAt,
    itemId: row.itemId,
  };
}
