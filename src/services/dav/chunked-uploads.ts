import type { Clock } from '../../clock.ts';
import type { ChunkedUpload, ChunkedUploadsRepo, UploadChunk } from '../../db/repos/chunked-uploads.ts';
import type { Transactions } from '../../db/repos/index.ts';
import { AppError, badRequest, conflict, fileTooLarge, forbidden, notFound } from '../../errors.ts';
import { noBytes } from '../../lib/buffers.ts';
import { newToken } from '../../lib/ids.ts';
import type { Logger } from '../../log.ts';
import { wrappedKeyId } from '../../storage/keyring.ts';
import { newStorageKey } from '../../storage/keys.ts';
import { ResealMismatchError, type ResumableObject, type ResumableStore } from '../../storage/resumable.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import { permissionFor } from '../identity/permissions.ts';
import { can, type Principal } from '../identity/principal.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { DiskSpaceService } from '../files/disk-space.ts';
import { type QuotaService, roomRuleOf } from '../files/quota.ts';

/** Chunks one upload may have (Nextcloud's chunking v2 numbers them 1 to 10,000). */
const MAX_CHUNKS = 10_000;
/** Unfinished chunked uploads one login may hold at once. */
const MAX_UPLOADS_PER_LOGIN = 100;
const UPLOAD_NAME = /^[A-Za-z0-9._-]{1,100}$/;
const CHUNK_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** The name the final MOVE is sent to. */
export const ASSEMBLED = '.file';
const SWEEP_PAGE = 200;
const HEAD_BYTES = 64 * 1024;

/** A chunk's place among the others: numeric names by their value (Nextcloud sorts zero-padded names), others after, by name. */
function sortKeyOf(name: string): string {
  return /^\d+$/.test(name) ? `0${name.replace(/^0+(?=\d)/, '').padStart(64, '0')}` : `1${name}`;
}

/** A numeric name's value (null: not a number, or too large to be a chunk's index or offset). */
function numberOf(name: string): number | null {
  if (!/^\d{1,16}$/.test(name)) return null;
  const n = Number(name);
  return Number.isSafeInteger(n) ? n : null;
}

/** A chunked upload as the HTTP layer lists it. */
export interface ChunkedUploadView {
  transfer: string;
  modifiedAt: number;
  chunks: Array<Pick<UploadChunk, 'name' | 'size' | 'createdAt'> & { etag: string }>;
}

/** A chunked upload makes a file or new content for one: Upload or Modify (the final MOVE checks which). */
function assertMayUpload(principal: Principal): void {
  if (!can(principal, permissionFor('uploads.upload')) && !can(principal, permissionFor('uploads.replace')))
    throw forbidden('This login may not upload files');
}

/** The sealed object a finished upload became, for the file it makes (its quota reservation ends in `within`). */
export interface AssembledObject {
  storageKey: string;
  size: number;
  wrappedKey: string;
  keyId: string;
  /** The first bytes, for type detection. */
  head: Uint8Array;
  /** Whether the commit may remove the account's oldest versions to make room (its own login's upload). */
  evicts: boolean;
  /** Runs inside the transaction that creates or replaces the file: the upload ends with it. */
  within(): void;
}

/** What the final MOVE writes: the upload's own object (sealed as the chunks came), or the chunks read in order. */
export type AssembledUpload = { id: string; size: number; release(): void } & (
  | { kind: 'object'; object: AssembledObject }
  | { kind: 'stream'; body: AsyncIterable<Uint8Array> }
);

/** Where the final MOVE puts the file: the account it goes to and whether the login is that account's own. */
export interface MoveTarget {
  principal: Principal;
  /** OC-Total-Length on the MOVE, when sent. */
  declared: number | null;
  /** OC-Checksum's SHA1, checked here when the chunks were sealed straight into the file. */
  sha1?: string;
}

/**
 * Chunked uploads of the Nextcloud clients: a folder per file under the login's uploads, its chunks
 * sent in any order, then the final MOVE, which writes the file like a PUT (permissions, quota, versions).
 *
 * With OC-Total-Length the upload is sealed straight into the file's object: each chunk that comes next
 * in order (named 0 or 1 first, then the next number, or the next offset) is appended to a resumable
 * object as it streams in; a chunk that comes early waits as a sealed object of its own and is appended
 * at the MOVE. The MOVE then makes that object the file's content, with no second pass over the bytes
 * the chunks sent in order (the SHA1 is hashed as they stream). Without a total length every chunk is
 * an object of its own, read in order into the file at the MOVE. Nothing is ever plaintext on disk.
 * Another login's upload is 404. An upload untouched for `expiryMs` goes with its chunks.
 */
export class ChunkedUploadService {
  /** Requests at work on an upload: chunk PUTs, or the MOVE or DELETE that ends it (alone). */
  private readonly busy = new Map<string, { puts: number; ending: boolean }>();
  /** Uploads a chunk is being appended to right now (one at a time; the others wait as objects of their own). */
  private readonly appending = new Set<string>();
  /** The SHA1 of what each upload's object holds so far (lost with the process: then hashed from the object at the MOVE). */
  private readonly hashes = new Map<string, { hash: Bun.CryptoHasher; upTo: number }>();
  /** Uploads this process has appended to: their bytes beyond the durable offset are in its page cache. */
  private readonly settledHere = new Set<string>();

  constructor(
    private readonly d: {
      /** The retention time (RetentionClock): a clock set ahead while uploads run expires none of them before it comes back. */
      clock: Pick<Clock, 'now'>;
      log: Logger;
      transactions: Transactions;
      repo: ChunkedUploadsRepo;
      sealed: SealedStore;
      resumable: ResumableStore;
      quota: QuotaService;
      settings: SettingsService;
      disk: DiskSpaceService;
      expiryMs: number;
    },
  ) {}

  /**
   * MKCOL: a new upload. With `totalLength` (OC-Total-Length) the file's size is checked up front
   * against the max upload size (413), the quota of `room` (the account the file goes to; reserved
   * there until the upload ends) and free disk (507).
   */
  begin(principal: Principal, transfer: string, totalLength: number | null, room: Principal = principal): void {
    assertMayUpload(principal);
    if (!UPLOAD_NAME.test(transfer)) throw badRequest('An upload folder is named with 1 to 100 letters, digits, ".", "_" or "-"');
    if (this.d.repo.byTransfer(principal.loginId, transfer)) throw new AppError(405, 'This upload folder already exists');
    if (totalLength !== null) {
      const max = this.d.settings.get('maxUploadBytes');
      if (totalLength > max) throw fileTooLarge(max);
    }
    const keys = totalLength === null ? null : this.d.resumable.begin();
    const now = this.d.clock.now();
    this.d.transactions.immediate(() => {
      if (this.d.repo.ofLogin(principal.loginId, MAX_UPLOADS_PER_LOGIN).length >= MAX_UPLOADS_PER_LOGIN)
        throw new AppError(429, `A login may have ${MAX_UPLOADS_PER_LOGIN} unfinished chunked uploads; finish or delete one first`);
      if (totalLength !== null) {
        this.d.quota.assertCouldFit(room.accountId, totalLength, roomRuleOf(room));
        this.d.disk.assertRoomToReserve(totalLength);
      }
      this.d.repo.insert({
        id: newToken(),
        accountId: principal.accountId,
        loginId: principal.loginId,
        transfer,
        totalLength,
        roomAccountId: keys ? room.accountId : null,
        storageKey: keys ? newStorageKey() : null,
        wrappedKey: keys?.wrappedKey ?? null,
        keyId: keys?.keyId ?? null,
        header: keys?.header ?? null,
        tail: null,
        streamOffset: 0,
        durableOffset: 0,
        lastStreamed: null,
        broken: false,
        createdAt: now,
        updatedAt: now,
        expiresAt: now + this.d.expiryMs,
      });
    });
  }

  /** PROPFIND: the upload and its chunks (a client resuming asks which arrived). */
  view(principal: Principal, transfer: string): ChunkedUploadView {
    const upload = this.owned(principal, transfer);
    const chunks = this.d.repo
      .chunks(upload.id)
      .map((c) => ({ name: c.name, size: c.size, createdAt: c.createdAt, etag: `"${c.createdAt}-${c.size}"` }));
    return { transfer, modifiedAt: upload.updatedAt, chunks };
  }

  /** The login's uploads (PROPFIND of its uploads folder). */
  list(principal: Principal): ChunkedUploadView[] {
    return this.d.repo
      .ofLogin(principal.loginId, MAX_UPLOADS_PER_LOGIN)
      .map((u) => ({ transfer: u.transfer, modifiedAt: u.updatedAt, chunks: [] }));
  }

  /**
   * PUT of one chunk, sealed as it streams in: onto the upload's object when it comes next in order,
   * else as an object of its own. A chunk sent again under its name replaces the one before, unless it
   * is already sealed into the upload's object (409).
   */
  async putChunk(principal: Principal, transfer: string, name: string, body: AsyncIterable<Uint8Array>): Promise<{ created: boolean }> {
    if (!CHUNK_NAME.test(name) || name === ASSEMBLED)
      throw badRequest('A chunk is named with 1 to 64 letters, digits, ".", "_" or "-" (numbers order the chunks)');
    // Checked at every chunk, not only when the upload began: a permission taken away takes effect at once.
    assertMayUpload(principal);
    const upload = this.owned(principal, transfer);
    const before = this.d.repo.chunk(upload.id, name);
    if (before && before.storageKey === null)
      throw conflict('This chunk is already sealed into the file being assembled: send the next one, or DELETE the upload and start again');
    if (upload.lastStreamed !== null && sortKeyOf(name) < upload.lastStreamed)
      throw badRequest(
        'This chunk sorts before chunks already sealed into the file: number the chunks from 0 or 1 and send the first one first',
      );
    const totals = this.d.repo.totals(upload.id);
    if (!before && totals.count >= MAX_CHUNKS) throw badRequest(`An upload has at most ${MAX_CHUNKS.toLocaleString('en-US')} chunks`);
    const max = this.d.settings.get('maxUploadBytes');
    const limit = Math.min(max, upload.totalLength ?? max) - (totals.bytes - (before?.size ?? 0));
    const tooLarge =
      upload.totalLength !== null && upload.totalLength < max
        ? () => badRequest(`This chunk takes the upload past its OC-Total-Length of ${upload.totalLength} bytes`)
        : () => fileTooLarge(max);
    // All of OC-Total-Length is here: a byte more is refused, and an empty chunk adds nothing (appended to the whole object, it failed the MOVE as corrupt).
    if (upload.totalLength !== null && limit <= 0) {
      for await (const _ of this.checked(body, 0, tooLarge));
      return { created: !before };
    }
    const state = this.enter(upload.id, 'put');
    try {
      if (!before && this.isNext(upload, name) && !this.appending.has(upload.id)) {
        this.appending.add(upload.id);
        try {
          await this.appendChunk(upload, name, this.checked(body, limit, tooLarge));
        } finally {
          this.appending.delete(upload.id);
        }
        return { created: true };
      }
      await this.storeChunk(upload, name, this.checked(body, limit, tooLarge), before);
      return { created: !before };
    } finally {
      this.leave(upload.id, state, 'put');
    }
  }

  /**
   * The final MOVE: the upload as the file's content, for the caller to write at `target`. The chunks
   * must hold `declared` and the upload's OC-Total-Length (400). With its own object, the chunks that
   * waited are appended, the SHA1 checked (400) and the object published; the upload ends inside the
   * transaction that writes the file (`object.within`). Call `release` once written or failed.
   */
  async assemble(principal: Principal, transfer: string, target: MoveTarget): Promise<AssembledUpload> {
    const upload = this.owned(principal, transfer);
    if (upload.broken) {
      await this.remove(upload.id);
      throw conflict('This upload lost bytes it had received (the server stopped meanwhile): start it again');
    }
    const chunks = this.d.repo.chunks(upload.id);
    const size = chunks.reduce((n, c) => n + c.size, 0);
    for (const expected of [target.declared, upload.totalLength]) {
      if (expected !== null && expected !== size)
        throw badRequest(`The chunks hold ${size} bytes, not the ${expected} of OC-Total-Length: send the missing chunks, then MOVE again`);
    }
    const state = this.enter(upload.id, 'end');
    const release = () => this.leave(upload.id, state, 'end');
    try {
      if (!upload.storageKey) return { kind: 'stream', id: upload.id, size, body: this.read(chunks), release };
      const object = await this.completeObject(upload, chunks, target);
      if (upload.roomAccountId === target.principal.accountId) return { kind: 'object', id: upload.id, size, object, release };
      // Reserved in another account than the one the file goes to (no Destination at MKCOL): written as a new upload there.
      return { kind: 'stream', id: upload.id, size, body: this.readObject(object), release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** After the file is written from a stream: the upload and what it stored go. */
  async finish(id: string): Promise<void> {
    await this.remove(id);
  }

  /** DELETE: the upload is abandoned, its chunks deleted. */
  async abort(principal: Principal, transfer: string): Promise<void> {
    const upload = this.owned(principal, transfer);
    const state = this.enter(upload.id, 'end');
    try {
      await this.remove(upload.id);
    } finally {
      this.leave(upload.id, state, 'end');
    }
  }

  /**
   * `accountId` may no longer write into `roomAccountId` (its last editor share there ended): its uploads reserved
   * there go with their chunks, so the reservation ends with the right. One receiving a chunk now is refused at its MOVE.
   */
  async leaveRoom(accountId: string, roomAccountId: string): Promise<void> {
    for (const id of this.d.repo.reservedIn(accountId, roomAccountId)) {
      if (this.busy.has(id)) continue;
      await this.remove(id);
    }
  }

  /** The account is gone (deleted): other accounts' uploads reserved there go with their chunks; one receiving a chunk now ends at its expiry. */
  async endRoom(roomAccountId: string): Promise<void> {
    for (const id of this.d.repo.reservedInAccount(roomAccountId)) {
      if (this.busy.has(id)) continue;
      await this.remove(id);
    }
  }

  /** The login is gone (a sub-user deleted): its uploads go with their chunks and reservations. */
  async endLogin(loginId: string): Promise<void> {
    for (const upload of this.d.repo.ofLogin(loginId, MAX_UPLOADS_PER_LOGIN)) {
      if (this.busy.has(upload.id)) continue;
      await this.remove(upload.id);
    }
  }

  /** The maintenance job: uploads untouched for `expiryMs` go with their chunks. */
  async sweep(): Promise<number> {
    let removed = 0;
    const skipped = new Set<string>();
    for (;;) {
      const rows = this.d.repo.expired(this.d.clock.now(), SWEEP_PAGE).filter((r) => !skipped.has(r.id));
      if (rows.length === 0) break;
      for (const row of rows) {
        skipped.add(row.id);
        if (this.busy.has(row.id)) continue;
        try {
          await this.remove(row.id);
          removed++;
        } catch (err) {
          this.d.log.warn('could not delete an expired chunked upload', { uploadId: row.id, err: String(err) });
        }
      }
    }
    if (removed) this.d.log.info('chunked uploads swept', { expired: removed });
    return removed;
  }

  /** Of `keys`, those a chunk or an unfinished upload's object holds (orphan review and the staging sweep must leave them). */
  keysInUse(keys: readonly string[]): Set<string> {
    return this.d.repo.keysInUse(keys);
  }

  private owned(principal: Principal, transfer: string): ChunkedUpload {
    const upload = this.d.repo.byTransfer(principal.loginId, transfer);
    if (!upload || upload.accountId !== principal.accountId) throw notFound('No such upload');
    return upload;
  }

  /** Whether a chunk named `name` comes right after what the upload's object holds. */
  private isNext(upload: ChunkedUpload, name: string): boolean {
    if (!upload.storageKey || upload.broken) return false;
    const value = numberOf(name);
    if (value === null) return false;
    if (upload.lastStreamed === null) return value === 0 || value === 1;
    const last = Number(upload.lastStreamed.slice(1));
    return value === last + 1 || value === upload.streamOffset;
  }

  private objectOf(upload: ChunkedUpload): ResumableObject {
    return {
      key: upload.storageKey!,
      length: upload.totalLength!,
      offset: upload.streamOffset,
      durableOffset: upload.durableOffset,
      wrappedKey: upload.wrappedKey!,
      header: upload.header!,
      tail: upload.tail,
    };
  }

  /**
   * The upload where its object really stands: after a restart the bytes past the durable offset are
   * authenticated (ResumableStore.recover); if some were lost the upload is broken (409 at the MOVE).
   */
  private async settled(upload: ChunkedUpload): Promise<ChunkedUpload> {
    if (this.settledHere.has(upload.id) || upload.durableOffset >= upload.streamOffset) return upload;
    const at = await this.d.resumable.recover(this.objectOf(upload));
    this.settledHere.add(upload.id);
    if (at.offset !== upload.streamOffset) {
      this.d.repo.markBroken(upload.id);
      throw conflict('This upload lost bytes it had received (the server stopped meanwhile): start it again');
    }
    this.d.repo.streamed(upload.id, {
      offset: upload.streamOffset,
      durableOffset: upload.streamOffset,
      tail: upload.tail,
      lastStreamed: null,
    });
    return this.d.repo.get(upload.id)!;
  }

  /** Appends `body` (one chunk's bytes) to the upload's object and records the chunk as part of it. */
  private async appendChunk(given: ChunkedUpload, name: string, body: AsyncIterable<Uint8Array>): Promise<void> {
    const upload = await this.settled(given);
    const hashed = this.hashes.get(upload.id);
    const hash =
      hashed?.upTo === upload.streamOffset ? hashed : upload.streamOffset === 0 ? { hash: new Bun.CryptoHasher('sha1'), upTo: 0 } : null;
    this.hashes.delete(upload.id);
    this.settledHere.add(upload.id);
    this.d.disk.assertRoomToStage(upload.totalLength! - upload.streamOffset);
    let result: Awaited<ReturnType<ResumableStore['append']>>;
    try {
      result = await this.d.resumable.append(this.objectOf(upload), hash ? hashing(body, hash.hash) : body);
    } catch (err) {
      if (!(err instanceof ResealMismatchError)) throw err;
      this.d.repo.markBroken(upload.id);
      throw conflict('This chunk differs from the bytes an interrupted request sent for it: start the upload again');
    }
    // Nothing of an interrupted chunk is recorded: it is sent again from its start (the same bytes seal the same way).
    if (result.interrupted) throw result.interrupted;
    const now = this.d.clock.now();
    this.d.transactions.immediate(() => {
      if (!this.d.repo.get(upload.id)) throw notFound('This upload was deleted meanwhile');
      this.d.repo.putChunk({
        uploadId: upload.id,
        name,
        sortKey: sortKeyOf(name),
        size: result.offset - upload.streamOffset,
        storageKey: null,
        wrappedKey: null,
        createdAt: now,
      });
      this.d.repo.streamed(upload.id, { ...result, lastStreamed: sortKeyOf(name) });
      this.d.repo.touch(upload.id, now, now + this.d.expiryMs);
    });
    if (hash) this.hashes.set(upload.id, { hash: hash.hash, upTo: result.offset });
  }

  /** Seals a chunk as an object of its own (it waits for its turn, or the upload has no object). */
  private async storeChunk(
    upload: ChunkedUpload,
    name: string,
    body: AsyncIterable<Uint8Array>,
    before: UploadChunk | null,
  ): Promise<void> {
    const key = newStorageKey();
    try {
      const info = await this.d.sealed.put(key, body);
      const now = this.d.clock.now();
      this.d.transactions.immediate(() => {
        if (!this.d.repo.get(upload.id)) throw notFound('This upload was deleted meanwhile');
        this.d.repo.putChunk({
          uploadId: upload.id,
          name,
          sortKey: sortKeyOf(name),
          size: info.size,
          storageKey: key,
          wrappedKey: info.wrappedKey,
          createdAt: now,
        });
        this.d.repo.touch(upload.id, now, now + this.d.expiryMs);
      });
    } catch (err) {
      await this.d.sealed.delete(key).catch(() => false);
      throw err;
    }
    if (before?.storageKey) await this.deleteObject(before.storageKey);
  }

  /** Appends the chunks that waited (in order), checks the SHA1 and publishes the upload's object. */
  private async completeObject(given: ChunkedUpload, chunks: readonly UploadChunk[], target: MoveTarget): Promise<AssembledObject> {
    let upload = await this.settled(given);
    const hashed = this.hashes.get(upload.id);
    let hash = hashed?.upTo === upload.streamOffset ? hashed.hash : upload.streamOffset === 0 ? new Bun.CryptoHasher('sha1') : null;
    for (const c of chunks) {
      if (c.storageKey === null || c.wrappedKey === null) continue;
      const result = await this.d.resumable.append(this.objectOf(upload), this.readHashed([c], hash));
      if (result.interrupted) {
        hash = null;
        this.hashes.delete(upload.id);
        throw result.interrupted;
      }
      this.d.transactions.immediate(() => {
        this.d.repo.chunkStreamed(upload.id, c.name);
        this.d.repo.streamed(upload.id, { ...result, lastStreamed: c.sortKey });
      });
      await this.deleteObject(c.storageKey);
      upload = this.d.repo.get(upload.id)!;
    }
    const size = upload.totalLength!;
    // An empty file has no chunk to write its object's header.
    if (size === 0) await this.d.resumable.append(this.objectOf(upload), noBytes());
    await this.d.resumable.publish({ key: upload.storageKey!, length: size });
    const info = { size, wrappedKey: upload.wrappedKey! };
    if (target.sha1) {
      const actual = hash ? hash.digest('hex') : await this.hashObject(upload.storageKey!, info);
      this.hashes.delete(upload.id);
      if (actual !== target.sha1.toLowerCase())
        throw badRequest(`The content's SHA1 is ${actual}, not the ${target.sha1} of OC-Checksum: nothing was stored; send the file again`);
    }
    this.hashes.delete(upload.id);
    const head =
      size === 0
        ? new Uint8Array(0)
        : await this.d.sealed.readBytes(upload.storageKey!, info, { start: 0, end: Math.min(HEAD_BYTES, size) });
    // A master key rotated while the upload ran: the file starts out under the current one.
    const wrappedKey = this.d.sealed.keyring.rewrap(upload.wrappedKey!);
    return {
      storageKey: upload.storageKey!,
      size,
      wrappedKey,
      keyId: wrappedKeyId(wrappedKey),
      head,
      evicts: roomRuleOf(target.principal) === 'evict',
      within: () => this.d.repo.delete(upload.id),
    };
  }

  private async hashObject(key: string, info: { size: number; wrappedKey: string }): Promise<string> {
    const hash = new Bun.CryptoHasher('sha1');
    for await (const chunk of await this.d.sealed.get(key, info)) hash.update(chunk);
    return hash.digest('hex');
  }

  /** 423 while the upload is ending, or (to end it) while a chunk is still arriving. */
  private enter(id: string, kind: 'put' | 'end'): { puts: number; ending: boolean } {
    const state = this.busy.get(id) ?? { puts: 0, ending: false };
    if (state.ending || (kind === 'end' && state.puts > 0))
      throw new AppError(423, 'This upload is busy: a chunk is still arriving or the upload is being assembled');
    if (kind === 'put') state.puts++;
    else state.ending = true;
    this.busy.set(id, state);
    return state;
  }

  private leave(id: string, state: { puts: number; ending: boolean }, kind: 'put' | 'end'): void {
    if (kind === 'put') state.puts--;
    else state.ending = false;
    if (state.puts === 0 && !state.ending && this.busy.get(id) === state) this.busy.delete(id);
  }

  /** Deletes an upload that made no file: its record, then its chunks' objects and its own (staged or published). */
  private async remove(id: string): Promise<void> {
    const upload = this.d.repo.get(id);
    if (!upload) return;
    const chunks = this.d.repo.chunks(id);
    this.d.repo.delete(id);
    this.hashes.delete(id);
    this.settledHere.delete(id);
    for (const c of chunks) if (c.storageKey) await this.deleteObject(c.storageKey);
    if (upload.storageKey) {
      await this.d.resumable.discard(upload.storageKey).catch(() => false);
      await this.deleteObject(upload.storageKey);
    }
  }

  private async deleteObject(key: string): Promise<void> {
    try {
      await this.d.sealed.delete(key);
    } catch (err) {
      // Left to orphan review: the object no longer belongs to any upload.
      this.d.log.warn('could not delete a chunk', { key, err: String(err) });
    }
  }

  /** A chunk's body, refused past `limit` bytes (the upload's room left), with the disk's reserve checked every few MiB. */
  private async *checked(chunks: AsyncIterable<Uint8Array>, limit: number, tooLarge: () => AppError): AsyncGenerator<Uint8Array> {
    const checkEvery = this.d.disk.checkEvery;
    let left = limit;
    let sinceCheck = 0;
    this.d.disk.assertRoom();
    for await (const chunk of chunks) {
      left -= chunk.byteLength;
      if (left < 0) throw tooLarge();
      sinceCheck += chunk.byteLength;
      if (sinceCheck >= checkEvery) {
        sinceCheck = 0;
        this.d.disk.assertRoom();
      }
      yield chunk;
    }
  }

  /** The chunks' plaintext in order, one chunk open at a time. */
  private read(chunks: readonly UploadChunk[]): AsyncGenerator<Uint8Array> {
    return this.readHashed(chunks, null);
  }

  private async *readHashed(chunks: readonly UploadChunk[], hash: Bun.CryptoHasher | null): AsyncGenerator<Uint8Array> {
    for (const c of chunks) {
      const stream = await this.d.sealed.get(c.storageKey!, { size: c.size, wrappedKey: c.wrappedKey! });
      yield* hash ? hashing(stream, hash) : stream;
    }
  }

  /** A published upload object's plaintext. */
  private async *readObject(object: AssembledObject): AsyncGenerator<Uint8Array> {
    yield* await this.d.sealed.get(object.storageKey, object);
  }
}

/** The bytes, each added to `hash` as it passes. */
async function* hashing(body: AsyncIterable<Uint8Array>, hash: Bun.CryptoHasher): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    hash.update(chunk);
    yield chunk;
  }
}
