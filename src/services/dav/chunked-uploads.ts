import type { Clock } from '../../clock.ts';
import type { ChunkedUpload, ChunkedUploadsRepo, UploadChunk } from '../../db/repos/chunked-uploads.ts';
import type { Transactions } from '../../db/repos/index.ts';
import { AppError, badRequest, fileTooLarge, forbidden, notFound } from '../../errors.ts';
import { newToken } from '../../lib/ids.ts';
import type { Logger } from '../../log.ts';
import { newStorageKey } from '../../storage/keys.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import { permissionFor } from '../accounts/permissions.ts';
import { can, type Principal } from '../accounts/principal.ts';
import type { SettingsService } from '../administration/settings.ts';
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

/** A chunk's place among the others: numeric names by their value (Nextcloud sorts zero-padded names), others after, by name. */
function sortKeyOf(name: string): string {
  return /^\d+$/.test(name) ? `0${name.replace(/^0+(?=\d)/, '').padStart(64, '0')}` : `1${name}`;
}

/** A chunked upload as the HTTP layer lists it. */
export interface ChunkedUploadView {
  transfer: string;
  modifiedAt: number;
  chunks: Array<Pick<UploadChunk, 'name' | 'size' | 'createdAt'> & { etag: string }>;
}

/** The chunks in order, as one body for the file they make. */
export interface AssembledUpload {
  id: string;
  size: number;
  body: AsyncIterable<Uint8Array>;
}

/**
 * Chunked uploads of the Nextcloud clients: a folder per file under the login's uploads, its chunks
 * sent in any order (each sealed as an object of its own: nothing is plaintext on disk), then read in
 * order into the file by the final MOVE, which writes it like a PUT (permissions, quota, versions).
 * Another login's upload is 404. An upload untouched for `expiryMs` goes with its chunks.
 */
export class ChunkedUploadService {
  /** Requests at work on an upload: a chunk PUT, or the MOVE or DELETE that ends it (alone). */
  private readonly busy = new Map<string, { puts: number; ending: boolean }>();

  constructor(
    private readonly d: {
      clock: Clock;
      log: Logger;
      transactions: Transactions;
      repo: ChunkedUploadsRepo;
      sealed: SealedStore;
      quota: QuotaService;
      settings: SettingsService;
      disk: DiskSpaceService;
      expiryMs: number;
    },
  ) {}

  /**
   * MKCOL: a new upload. With `totalLength` (OC-Total-Length) the file's size is checked up front
   * against the max upload size (413), the quota of `room` (the account the file goes to) and free disk (507).
   */
  begin(principal: Principal, transfer: string, totalLength: number | null, room: Principal = principal): void {
    if (!can(principal, permissionFor('uploads.upload')) && !can(principal, permissionFor('uploads.replace')))
      throw forbidden('This login may not upload files');
    if (!UPLOAD_NAME.test(transfer)) throw badRequest('An upload folder is named with 1 to 100 letters, digits, ".", "_" or "-"');
    if (this.d.repo.byTransfer(principal.loginId, transfer)) throw new AppError(405, 'This upload folder already exists');
    if (totalLength !== null) {
      const max = this.d.settings.get('maxUploadBytes');
      if (totalLength > max) throw fileTooLarge(max);
    }
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

  /** PUT of one chunk, sealed as it streams in; a chunk sent again under its name replaces the one before. */
  async putChunk(principal: Principal, transfer: string, name: string, body: AsyncIterable<Uint8Array>): Promise<{ created: boolean }> {
    if (!CHUNK_NAME.test(name) || name === ASSEMBLED)
      throw badRequest('A chunk is named with 1 to 64 letters, digits, ".", "_" or "-" (numbers order the chunks)');
    const upload = this.owned(principal, transfer);
    const before = this.d.repo.chunk(upload.id, name);
    const totals = this.d.repo.totals(upload.id);
    if (!before && totals.count >= MAX_CHUNKS) throw badRequest(`An upload has at most ${MAX_CHUNKS.toLocaleString('en-US')} chunks`);
    const max = this.d.settings.get('maxUploadBytes');
    const limit = Math.min(max, upload.totalLength ?? max) - (totals.bytes - (before?.size ?? 0));
    const state = this.enter(upload.id, 'put');
    const key = newStorageKey();
    let stored = false;
    try {
      const tooLarge =
        upload.totalLength !== null && upload.totalLength < max
          ? () => badRequest(`This chunk takes the upload past its OC-Total-Length of ${upload.totalLength} bytes`)
          : () => fileTooLarge(max);
      const info = await this.d.sealed.put(key, this.checked(body, limit, tooLarge));
      stored = true;
      const now = this.d.clock.now();
      this.d.transactions.immediate(() => {
        if (!this.d.repo.byTransfer(principal.loginId, transfer)) throw notFound('This upload was deleted meanwhile');
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
    } finally {
      this.leave(upload.id, state, 'put');
    }
    if (stored && before) await this.deleteObject(before.storageKey);
    return { created: !before };
  }

  /**
   * The final MOVE: the chunks in order as one body, for the caller to write as the file. `declared`
   * (OC-Total-Length on the MOVE) must match what arrived. The upload stays until `finish` (or a failure's retry).
   */
  assemble(principal: Principal, transfer: string, declared: number | null): AssembledUpload & { release(): void } {
    const upload = this.owned(principal, transfer);
    const chunks = this.d.repo.chunks(upload.id);
    const size = chunks.reduce((n, c) => n + c.size, 0);
    for (const expected of [declared, upload.totalLength]) {
      if (expected !== null && expected !== size)
        throw badRequest(`The chunks hold ${size} bytes, not the ${expected} of OC-Total-Length: send the missing chunks, then MOVE again`);
    }
    const state = this.enter(upload.id, 'end');
    return { id: upload.id, size, body: this.read(chunks), release: () => this.leave(upload.id, state, 'end') };
  }

  /** After the file is written: the upload and its chunks go. */
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

  /** Unfinished chunked uploads, for `coffer doctor`. */
  unfinished(): number {
    return this.d.repo.count();
  }

  /** Of `keys`, those a chunk holds (orphan review must never offer them). */
  keysInUse(keys: readonly string[]): Set<string> {
    return this.d.repo.keysInUse(keys);
  }

  private owned(principal: Principal, transfer: string): ChunkedUpload {
    const upload = this.d.repo.byTransfer(principal.loginId, transfer);
    if (!upload || upload.accountId !== principal.accountId) throw notFound('No such upload');
    return upload;
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

  private async remove(id: string): Promise<void> {
    const chunks = this.d.repo.chunks(id);
    this.d.repo.delete(id);
    for (const c of chunks) await this.deleteObject(c.storageKey);
  }

  private async deleteObject(key: string): Promise<void> {
    try {
      await this.d.sealed.delete(key);
    } catch (err) {
      // Left to orphan review: the object no longer belongs to any chunk.
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
  private async *read(chunks: readonly UploadChunk[]): AsyncGenerator<Uint8Array> {
    for (const c of chunks) {
      const stream = await this.d.sealed.get(c.storageKey, { size: c.size, wrappedKey: c.wrappedKey });
      yield* stream;
    }
  }
}
