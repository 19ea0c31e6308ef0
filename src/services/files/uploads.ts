import { isMediaType } from '../../lib/media-type.ts';
import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import { type Item, type ItemsRepo, nameKeyOf } from '../../db/repos/items.ts';
import type { FileChecksumsRepo } from '../../db/repos/file-checksums.ts';
import {
  AppError,
  badRequest,
  conflict,
  fileTooLarge,
  forbidden,
  Messages,
  notFound,
  StorageLimitError,
  storageLimitExceeded,
  tooManyFiles,
  uploadAborted,
} from '../../errors.ts';
import { collectAfterTransfer, collectBeforeTransfer, grownFor } from '../../lib/buffers.ts';
import { newId } from '../../lib/ids.ts';
import { newStorageKey } from '../../storage/keys.ts';
import { FileEventType } from './file-events.ts';
import { type ChangeBy, type ChangeKind, ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import type { ItemService } from './items.ts';
import type { Item as ItemView } from '../../contract/files.ts';
import type { ItemViews } from './item-views.ts';
import type { FileEvents } from './file-events.ts';
import type { Tree } from './tree.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Logger } from '../../log.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import { isValidUploadedName, relativeFolders, uploadedBaseName, uploadedFileName } from './names.ts';
import type { AuditPrincipal } from '../admin/audit.ts';
import type { Principal } from '../identity/principal.ts';
import { type QuotaService, type RoomRule, roomRuleOf } from './quota.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { UploadIntentService } from './upload-intents.ts';
import type { DiskSpaceService } from './disk-space.ts';
import type { VersionSource } from '../../db/repos/versions.ts';
import { detectMimeType } from '../../lib/file-type.ts';
import type { LibraryContent } from './library-content.ts';
import type { StoredObject } from './stored-object.ts';

interface UploadFieldPart {
  kind: 'field';
  name: string;
  value: string;
}

/** What replacing a file's content asks of the versions domain: keep the content replaced (whether it did), move versions to another file. */
export interface ReplacedVersions {
  keepReplaced(row: Item): boolean;
  reassign(fromItemId: string, toItemId: string): void;
}

export interface UploadFilePart {
  kind: 'file';
  field: string;
  filename: string;
  /** The type the client sent. */
  mimeType: string;
  /** Must be read (or abandoned) before the next part can arrive; a chunk is valid until the next is asked for. */
  body: AsyncIterable<Uint8Array>;
  /**
   * Bytes of the file not read yet, from the request's declared length, when the file is the form's last part
   * (as browsers and the web app send it; a part after it is counted in); null when that length is unknown.
   */
  unread?: () => number | null;
}

/** A multipart body as ordered parts, produced by the HTTP layer's streaming parser. */
export type UploadPart = UploadFieldPart | UploadFilePart;

export interface UploadRequest {
  parts: AsyncIterable<UploadPart>;
  /** Aborted when the client hangs up: the object being written is dropped. */
  signal?: AbortSignal;
  /** Declared body length: the disk reserve's first check, and the 413's figure when a large file's end was not reached. */
  sizeHint?: number;
  /** The folder parentId names, found live by the caller in this request before the body (a WebDAV PUT's walk). */
  foundFolder?: string;
  /** The file goes in under its very name (a WebDAV PUT's path): a name taken meanwhile is 409, not a `(n)` name. */
  exactName?: boolean;
  /** A replace's check of the file as it stands at the commit, in its transaction (a WebDAV If-Match: 412 once it changed). */
  expect?: (current: Item) => void;
  /** The modified time a WebDAV client sent (X-OC-Mtime, checked by its door), before 1970 too: it wins over `lastModifiedTimes`. */
  modified?: number;
}

export interface BulkUploadResult {
  files: Array<ItemView & { clientId: string | null }>;
  failed: Array<{ fileName: string; error: string; clientId: string | null }>;
  total: number;
  successful: number;
  failedCount: number;
}

/** The bytes of a resumable upload, stored and published under their key: POST /upload's pipeline makes the file. */
export interface ResumedFile {
  storageKey: string;
  size: number;
  wrappedKey: string;
  keyId: string;
  /** The first bytes of the content, for type detection. */
  head: Uint8Array;
  clientType: string | null;
  name: string;
  parentId: string | null;
  relativePath: string | null;
  modified: number | null;
  /** The file whose content the upload replaces; a new file is made when it is gone by then. */
  replaceId?: string | null;
  /** Sent by a login of the account itself: its commit may remove the oldest versions it needs room from. */
  evicts: boolean;
  /** The upload link a visitor sent it through: the change is then a drop by that link. */
  droppedVia?: string | null;
  /** A new file goes in under its very name (a WebDAV path): a name taken meanwhile is 409, not a `(n)` name, and a folder gone 404. */
  exactName?: boolean;
  /** The check of the file `replaceId` names as it stands at the commit (null: gone), in its transaction (a WebDAV If-Match). */
  expect?: (current: Item | null) => void;
}

interface Budget {
  maxBytes: number;
  /**
   * Bytes the account may still add in this request; null when it has no limit. Read in the transaction that
   * records the upload's intent, before the first byte: under its write lock, with the other uploads of its group.
   */
  free: () => number | null;
  sizeHint?: number;
  /** Past the quota, how many more bytes of the file are read (and dropped) to learn its size for the 413. */
  overQuotaCount?: number;
}

/** The default of Budget.overQuotaCount: a request that fails with the 413 need not be read to its end. */
const OVER_QUOTA_COUNT_BYTES = 1024 * 1024;
// file-type needs a few KiB for most formats; office documents (ZIP containers) need a little more.
const SNIFF_BYTES = 64 * 1024;
const DEFAULT_TYPE = 'application/octet-stream';
const BULK_FILE_FIELDS = new Set(['files', 'files[]', 'file']);
// A bulk part up to this size is held in memory and stored while the next parts arrive, so the syncs of
// many small files overlap instead of running one after another.
const HELD_PART_BYTES = 256 * 1024;
// Stores of held parts running at once in one bulk upload (at most this many × HELD_PART_BYTES held).
const BULK_STORES_IN_FLIGHT = 16;
/** Files one bulk or drop request may carry; the part past it fails the request before it is stored. */
const MAX_FILES_PER_REQUEST = 1000;
// Rows of a bulk or drop request inserted per transaction, with a turn of the event loop between two, so
// other requests are answered while a large one commits.
const INSERT_CHUNK = 100;

const LIBRARY_ONTO = 'A library file has no stored object to hand over: copy it onto the other file, then delete it.';
// A library file's row: its content is the host file, not an object of the store.
const HOST_CONTENT = { storageKey: null, wrappedKey: null, keyId: null };

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A part body read up to `limit` bytes: `rest` is null when that was all of it, else the whole body again
 * (what was read, then the remainder).
 */
async function holdSmall(
  body: AsyncIterable<Uint8Array>,
  limit: number,
): Promise<{ chunks: Uint8Array[]; size: number; rest: AsyncIterable<Uint8Array> | null }> {
  const it = body[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const read = await it.next();
    if (read.done) return { chunks, size, rest: null };
    // Copied: a held part must not keep a larger request chunk alive, nor see it reused.
    chunks.push(new Uint8Array(read.value));
    size += read.value.byteLength;
    if (size > limit) {
      const rest = async function* () {
        yield* chunks;
        for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
      };
      return { chunks, size, rest: rest() };
    }
  }
}

async function* replay(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  yield* chunks;
}

/** docs/compatibility.md › Files: milliseconds since the epoch as text; anything else is ignored. */
export function parseModifiedTime(text: string | undefined): number | null {
  if (text === undefined || !/^\d{1,16}$/.test(text.trim())) return null;
  const ms = Number(text.trim());
  return ms > 0 && ms <= 8.64e15 ? ms : null;
}

async function sniff(head: Uint8Array): Promise<string | null> {
  if (head.byteLength === 0) return null;
  try {
    return await detectMimeType(head);
  } catch {
    return null;
  }
}

/** The client's type when it is a media type a header can carry; anything else (a line break in tus metadata) is none at all. */
function clientTypeOf(sent: string | null | undefined): string | null {
  return isMediaType(sent) ? sent : null;
}

/** Whether the client named no useful type, so a replaced file keeps the type it had. */
const noClientType = (sent: string | null | undefined) => {
  const type = clientTypeOf(sent);
  return type === null || type === DEFAULT_TYPE;
};

/** docs/api.md › Upload rules 1: the type detected from the content, else the client's, else the default. */
async function detectType(head: Uint8Array, clientType: string | null): Promise<{ mimeType: string; detected: boolean }> {
  const detected = await sniff(head);
  return { mimeType: detected ?? clientTypeOf(clientType) ?? DEFAULT_TYPE, detected: detected !== null };
}

/**
 * Uploads, replace and derive: each file streams straight through a byte counter (max upload size,
 * quota) and encryption into storage; its row is inserted only once the object is durable, in one
 * transaction with the account's usage counter. Any failure removes the objects this request stored.
 */
export interface UploadDeps {
  clock: Clock;
  log: Logger;
  queue: JobQueue;
  storage: Pick<SealedStore, 'put' | 'get' | 'delete'>;
  libraryContent: LibraryContent;
  transactions: Transactions;
  items: ItemsRepo;
  tree: Tree;
  folders: ItemService;
  views: ItemViews;
  events: FileEvents;
  changes: ChangeLog;
  quota: QuotaService;
  settings: SettingsService;
  intents: UploadIntentService;
  disk: DiskSpaceService;
  versions: ReplacedVersions;
  /** A MOVE onto a file hands it the source's object, and with it the SHA1 a client sent with those bytes. */
  checksums: Pick<FileChecksumsRepo, 'carry'>;
}

/** How new content arrived and which login wrote it: the version the replaced content becomes names them. */
export interface ContentOrigin {
  source: VersionSource;
  authorId: string;
}

/** What an upload's event and audit record say of the file beyond its row's id and name. */
function uploadedDetails(row: Item): Pick<Item, 'size' | 'mimeType'> {
  return { size: row.size, mimeType: row.mimeType };
}

export class UploadService {
  private readonly clock: Clock;
  private readonly transactions: Transactions;
  private readonly quota: QuotaService;
  private readonly settings: SettingsService;
  private readonly intents: UploadIntentService;
  private readonly disk: DiskSpaceService;

  constructor(private readonly d: UploadDeps) {
    ({
      clock: this.clock,
      transactions: this.transactions,
      quota: this.quota,
      settings: this.settings,
      intents: this.intents,
      disk: this.disk,
    } = d);
  }

  /** POST /upload/check: would a file of this size be accepted into `parentId` (default: the root)? */
  check(caller: Principal, fileSize: number, parentId?: string): { allowed: true } {
    const max = this.settings.get('maxUploadBytes');
    if (fileSize > max) throw fileTooLarge(max);
    // The account that would own the bytes, as the upload decides it: the sharing owner for a shared folder.
    const principal = this.d.tree.actor(caller, { parentId }, 'edit');
    if (parentId) this.d.tree.requireFolder(principal, parentId);
    this.quota.assertCouldFit(principal.accountId, fileSize, roomRuleOf(principal));
    this.disk.assertRoom(fileSize);
    return { allowed: true };
  }

  /** POST /upload: one file (the first file part), optional parentId and lastModifiedTimes. */
  async upload(caller: Principal, req: UploadRequest, source: VersionSource = 'upload'): Promise<ItemView> {
    const { principal, row } = await this.uploadRow(caller, req, source);
    return this.d.views.inserted(principal.accountId, row);
  }

  /** An upload as `upload` makes it, answered with its row (a WebDAV PUT answers from the row, not a view). */
  async uploadRow(caller: Principal, req: UploadRequest, source: VersionSource = 'upload'): Promise<{ principal: Principal; row: Item }> {
    const stored: StoredObject[] = [];
    let principal = caller;
    // Its intent and its row: concurrent uploads wait a moment to share those commits.
    const settled = this.transactions.announce();
    try {
      let name = '';
      // The folder found before the body, when parentId came first: the commit checks it again in its transaction.
      let before = null as { parentId: string | undefined; accountId: string; folderId: string | null } | null;
      const { fields, object } = await this.readOneFile(req, stored, (part, fields) => {
        name = uploadedFileName(part.filename);
        if (!fields.has('parentId')) return this.budgetBeforeTarget(caller, req.sizeHint);
        // A member uploading into a shared folder spends the sharing owner's quota.
        const parentId = fields.get('parentId');
        principal = this.d.tree.actor(caller, { parentId }, 'edit');
        // Not read again when the caller just found it: the commit reads it under the write lock either way.
        const folderId =
          req.foundFolder !== undefined && req.foundFolder === parentId
            ? parentId
            : (this.d.tree.requireFolder(principal, parentId)?.id ?? null);
        before = { parentId, accountId: principal.accountId, folderId };
        return this.budget(principal.accountId, roomRuleOf(principal), 0, req.sizeHint);
      });
      // parentId may come after the file part: the target is decided from the whole form.
      principal = this.d.tree.actor(caller, { parentId: fields.get('parentId') }, 'edit');
      const modified = req.modified ?? parseModifiedTime(fields.get('lastModifiedTimes'));
      const folderId =
        before && before.parentId === fields.get('parentId') && before.accountId === principal.accountId
          ? before.folderId
          : (this.d.tree.requireFolder(principal, fields.get('parentId'))?.id ?? null);
      await this.toLibrary(folderId, object, modified);
      // Committed with the rows of the other uploads that finish in this turn: one commit's page writes for all.
      const row = await this.transactions.grouped(() => {
        const parentId = fields.get('parentId');
        // A member's share read again: it may have ended while the bytes arrived (a WebDAV mount's principal carries it from the walk).
        const parent = this.d.tree.requireFolder(this.d.tree.actorNow(principal, { parentId }, 'edit'), parentId);
        const row = this.insertFile(principal, parent?.id ?? null, name, object, modified, {
          source,
          room: roomRuleOf(principal),
          exactName: req.exactName,
        });
        this.recordUpload(principal, row);
        return row;
      });
      stored.length = 0;
      this.published(principal, row);
      return { principal, row };
    } finally {
      settled();
      await this.discard(stored);
    }
  }

  /** POST /upload/bulk: every file part, with relativePaths, clientIds and lastModifiedTimes joined by position. */
  async uploadBulk(caller: Principal, req: UploadRequest): Promise<BulkUploadResult> {
    let principal = caller;
    const lists = { relativePaths: [] as string[], clientIds: [] as string[], lastModifiedTimes: [] as string[] };
    let parentId: string | undefined;
    const incoming: Array<{ index: number; fileName: string; object: StoredObject | null; error: string | null }> = [];
    const toDiscard: StoredObject[] = [];
    // Until parentId arrives, the files stream under the room of any account they may land in.
    let free = this.budgetBeforeTarget(caller).free();
    // Stores of held parts still running, and the first error among them that fails the request.
    const inFlight = new Set<Promise<void>>();
    let bulkFailure: unknown = null;
    try {
      for await (const part of req.parts) {
        if (part.kind === 'field') {
          const key = part.name.replace(/\[\]$/, '');
          if (key === 'parentId') {
            parentId = part.value;
            principal = this.d.tree.actor(caller, { parentId }, 'edit');
            free = this.quota.usage(principal.accountId).free;
          } else if (key in lists) lists[key as keyof typeof lists].push(part.value);
          continue;
        }
        if (!BULK_FILE_FIELDS.has(part.field)) continue;
        if (incoming.length === MAX_FILES_PER_REQUEST) throw tooManyFiles(MAX_FILES_PER_REQUEST);
        const index = incoming.length;
        const fileName = uploadedBaseName(part.filename);
        if (!isValidUploadedName(fileName)) {
          incoming.push({ index, fileName: part.filename, object: null, error: Messages.invalidFileName });
          continue;
        }
        const entry: (typeof incoming)[number] = { index, fileName, object: null, error: null };
        incoming.push(entry);
        const room = free;
        // A refused file is counted to its end: the parser reads the rest of its part anyway to reach the next one.
        const budget = { maxBytes: this.settings.get('maxUploadBytes'), free: () => room, overQuotaCount: Number.POSITIVE_INFINITY };
        const stored = (object: StoredObject) => {
          toDiscard.push(object);
          entry.object = object;
        };
        // Refusals of one file fail that file only; anything else (an abort) fails the request.
        const refused = (err: unknown) => {
          if (err instanceof AppError && err.status === 413) entry.error = err.message;
          else throw err;
        };
        let held;
        try {
          held = await holdSmall(part.body, HELD_PART_BYTES);
        } catch (err) {
          if (req.signal?.aborted) throw uploadAborted();
          throw err;
        }
        if (held.rest) {
          try {
            const object = await this.store({ body: held.rest, mimeType: part.mimeType }, budget, req.signal);
            stored(object);
            if (free !== null) free -= object.size;
          } catch (err) {
            refused(err);
          }
          continue;
        }
        // The size is known: a part that passes the budget spends it now, as its store will succeed or fail the request.
        const spent = free !== null && held.size <= budget.maxBytes && held.size <= free ? held.size : 0;
        if (free !== null) free -= spent;
        const store = this.store({ body: replay(held.chunks), mimeType: part.mimeType }, budget, req.signal)
          .then(stored)
          .catch((err) => {
            try {
              refused(err);
              // A refused file (the disk's reserve) gives back what it spent to the files after it.
              if (free !== null) free += spent;
            } catch {
              bulkFailure ??= err;
            }
          })
          .finally(() => inFlight.delete(store));
        inFlight.add(store);
        if (inFlight.size >= BULK_STORES_IN_FLIGHT) await Promise.race(inFlight);
        if (bulkFailure) throw bulkFailure;
      }
      await Promise.all(inFlight);
      if (bulkFailure) throw bulkFailure;
      if (incoming.length === 0) throw badRequest(Messages.noFile);
      const target = this.d.tree.requireFolder(principal, parentId)?.id ?? null;
      for (const entry of incoming)
        if (entry.object) await this.toLibrary(target, entry.object, parseModifiedTime(lists.lastModifiedTimes[entry.index]));

      const result = {
        files: [] as Array<{ row: Item; index: number }>,
        failed: [] as Array<{ index: number; fileName: string; error: string }>,
      };
      for (let i = 0; i < incoming.length; i += INSERT_CHUNK) {
        if (i > 0) await nextTurn();
        const chunk = incoming.slice(i, i + INSERT_CHUNK);
        const done = this.transactions.immediate(() => {
          const files: typeof result.files = [];
          const failed: typeof result.failed = [];
          const created: Item[] = [];
          const failAll = (err: AppError) => {
            for (const entry of chunk) failed.push({ index: entry.index, fileName: entry.fileName, error: entry.error ?? err.message });
            return { created, files, failed };
          };
          let parent: Item | null;
          try {
            parent = this.d.tree.requireFolder(this.d.tree.actorNow(principal, { parentId }, 'edit'), parentId);
          } catch (err) {
            // The target went after earlier chunks were committed: those files stay, the rest fail.
            if (i === 0 || !(err instanceof AppError)) throw err;
            return failAll(err);
          }
          // Per chunk: a folder an earlier chunk made may have been trashed since, so names are looked up again.
          const folders = new Map<string, string | null>([['', parent?.id ?? null]]);
          try {
            this.insertingChunk(() => {
              for (const entry of chunk) {
                if (!entry.object) {
                  failed.push({ index: entry.index, fileName: entry.fileName, error: entry.error! });
                  continue;
                }
                try {
                  const folderId = this.ensureFolders(principal, folders, created, lists.relativePaths[entry.index]);
                  const row = this.insertFile(
                    principal,
                    folderId,
                    entry.fileName,
                    entry.object,
                    parseModifiedTime(lists.lastModifiedTimes[entry.index]),
                    { room: roomRuleOf(principal) },
                  );
                  this.recordUpload(principal, row);
                  files.push({ row, index: entry.index });
                } catch (err) {
                  if (!(err instanceof AppError)) throw err;
                  failed.push({ index: entry.index, fileName: entry.fileName, error: err.message });
                }
              }
            });
          } catch (err) {
            // The store refusing writes (a storage move), checked before the chunk's first row: none of its files is kept.
            if (!(err instanceof AppError)) throw err;
            return failAll(err);
          }
          return { created, files, failed };
        });
        const committed = new Set(done.files.map((f) => incoming[f.index]!.object!.storageKey));
        toDiscard.splice(0, toDiscard.length, ...toDiscard.filter((o) => !committed.has(o.storageKey)));
        for (const folder of done.created) this.d.events.item(principal, FileEventType.folderCreated, folder);
        this.publishedEach(
          principal,
          done.files.map((f) => f.row),
        );
        result.files.push(...done.files);
        result.failed.push(...done.failed);
      }
      const views = this.d.views.many(
        principal.accountId,
        result.files.map((f) => f.row),
      );
      const clientId = (i: number) => lists.clientIds[i] ?? null;
      return {
        files: views.map((v, i) => ({ ...v, clientId: clientId(result.files[i]!.index) })),
        failed: result.failed
          .sort((a, b) => a.index - b.index)
          .map((f) => ({ fileName: f.fileName, error: f.error, clientId: clientId(f.index) })),
        total: incoming.length,
        successful: result.files.length,
        failedCount: result.failed.length,
      };
    } finally {
      // Every store still running lands in toDiscard (or fails) before anything is discarded.
      await Promise.all(inFlight);
      await this.discard(toDiscard);
    }
  }

  /**
   * POST /s/<token>/upload: every `file` part into a shared folder, as new items with free names, on the
   * owner's quota and the max upload size. The visitor names nothing else (no parent, no paths); a full
   * quota is a 507 the visitor can read. Rows are inserted a chunk per transaction; `within` runs in each
   * (who dropped what).
   */
  async drop(
    owner: AuditPrincipal,
    folderId: string,
    req: UploadRequest,
    within: (rows: Item[], fields: Map<string, string>) => void,
  ): Promise<Item[]> {
    const fields = new Map<string, string>();
    const incoming: Array<{ name: string; object: StoredObject }> = [];
    const stored: StoredObject[] = [];
    try {
      let free = this.quota.usage(owner.accountId).free;
      for await (const part of req.parts) {
        if (part.kind === 'field') {
          fields.set(part.name, part.value);
          continue;
        }
        if (part.field !== 'file') continue;
        if (incoming.length === MAX_FILES_PER_REQUEST) throw tooManyFiles(MAX_FILES_PER_REQUEST);
        const name = uploadedFileName(part.filename);
        const room = free;
        const object = await this.store(
          part,
          { maxBytes: this.settings.get('maxUploadBytes'), free: () => room, sizeHint: req.sizeHint },
          req.signal,
        );
        stored.push(object);
        if (free !== null) free -= object.size;
        incoming.push({ name, object });
      }
      if (incoming.length === 0) throw badRequest(Messages.noFile);
      for (const f of incoming) await this.toLibrary(folderId, f.object, null);
      const rows: Item[] = [];
      for (let i = 0; i < incoming.length; i += INSERT_CHUNK) {
        if (i > 0) await nextTurn();
        const chunk = incoming.slice(i, i + INSERT_CHUNK);
        const inserted = this.transactions.immediate(() => {
          if (!this.d.items.getLive(owner.accountId, folderId)) throw notFound(Messages.itemNotInShare);
          const rows = this.insertingChunk(() =>
            chunk.map((f) => this.insertFile(owner, folderId, f.name, f.object, null, { room: 'free' })),
          );
          for (const row of rows) this.auditUpload(owner, row);
          within(rows, fields);
          return rows;
        });
        const committed = new Set(chunk.map((f) => f.object.storageKey));
        stored.splice(0, stored.length, ...stored.filter((o) => !committed.has(o.storageKey)));
        this.publishedEach(owner, inserted);
        rows.push(...inserted);
      }
      return rows;
    } catch (err) {
      if (err instanceof StorageLimitError) throw new AppError(507, Messages.shareDropQuota);
      throw err;
    } finally {
      await this.discard(stored);
    }
  }

  /** POST /:id/replace (and WebDAV PUT): new content for an existing file; id and name stay, the old content becomes a version. */
  async replace(caller: Principal, id: string, req: UploadRequest, source: VersionSource = 'replace'): Promise<ItemView> {
    const principal = this.d.tree.actor(caller, { ids: [id] }, 'content');
    const current = this.requireFile(principal, id);
    const stored: StoredObject[] = [];
    try {
      const {
        fields,
        part,
        object: newObject,
      } = await this.readOneFile(req, stored, () => this.budget(principal.accountId, roomRuleOf(principal), current.size, req.sizeHint));
      // Content not recognised and no useful client type: keep the type the file had.
      if (!newObject.detected && noClientType(part.mimeType) && current.mimeType) newObject.mimeType = current.mimeType;
      const modified = req.modified ?? parseModifiedTime(fields.get('lastModifiedTimes'));
      await this.toLibrary(current.parentId, newObject, modified, current);
      const row = this.commitReplacement(principal.accountId, newObject, {
        current: () => {
          const row = this.requireFile(this.d.tree.actorNow(principal, { ids: [id] }, 'content'), id);
          req.expect?.(row);
          return row;
        },
        by: principal,
        origin: { source, authorId: principal.loginId },
        modified,
        room: roomRuleOf(principal),
      });
      stored.length = 0;
      this.d.events.item(principal, FileEventType.updated, row, { size: row.size, mimeType: row.mimeType });
      return this.d.views.one(principal.accountId, row);
    } finally {
      await this.discard(stored);
    }
  }

  /**
   * New content for `current` from a stream (a document server's edited version), stored under a new key
   * with the same budget as a replace under `room` (by default an own login's): the max upload size, and
   * the quota with the file's own bytes freed. The object is not the file's until commitReplacement;
   * `discard` removes it otherwise.
   */
  async storeReplacement(
    current: Item,
    body: AsyncIterable<Uint8Array>,
    defaultType: string,
    room: 'evict' | 'free' = 'evict',
  ): Promise<StoredObject> {
    const object = await this.store({ body, mimeType: defaultType }, this.budget(current.accountId, room, current.size));
    try {
      await this.toLibrary(current.parentId, object, null, current);
    } catch (err) {
      await this.discard([object]);
      throw err;
    }
    return object;
  }

  /**
   * Points a file at a stored object in one transaction: the row re-read by `current` (which throws when
   * it is gone), its content kept as a version (or, with versions off, its object queued for deletion),
   * the quota checked under `room` (413; by default after the account's oldest versions), size, type,
   * times and origin set, and the usage counter adjusted. `during` runs inside the same transaction.
   */
  commitReplacement(
    accountId: string,
    object: StoredObject,
    opts: {
      current: () => Item;
      /** Who the change log names; the kind is item.replaced unless `kind` says otherwise. */
      by: ChangeBy;
      kind?: ChangeKind;
      details?: Record<string, unknown>;
      origin: ContentOrigin;
      modified?: number | null;
      during?: (updated: Item) => void;
      room?: RoomRule;
    },
  ): Item {
    const now = this.clock.now();
    const host = object.host;
    return this.transactions.immediate(() => {
      const row = opts.current();
      // A kept version still counts, so the whole new object needs room; otherwise only the growth does.
      // A library file's content before is the copy kept in the store, if any; the file itself takes no room.
      const before = host ? (object.kept ? { ...row, ...object.kept } : null) : row;
      const kept = before !== null && this.d.versions.keepReplaced(before);
      const added = host ? (kept ? before.size : 0) : kept ? object.size : object.size - row.size;
      if (added > 0) this.quota.assertRoomFor(accountId, added, opts.room ?? 'evict');
      const updated = this.d.items.replaceContent(
        row.id,
        {
          size: object.size,
          mimeType: object.mimeType,
          ...(host ? HOST_CONTENT : { storageKey: object.storageKey, wrappedKey: object.wrappedKey, keyId: object.keyId }),
          modifiedAt: host?.modifiedAt ?? opts.modified ?? now,
          accessedAt: now,
          contentSource: opts.origin.source,
          contentAuthorId: opts.origin.authorId,
        },
        host,
      );
      this.quota.adjust(accountId, added);
      if (!kept && row.storageKey) this.d.queue.insert(Jobs.storageDelete, { keys: [row.storageKey] });
      if (host)
        this.d.queue.insert(Jobs.storageDelete, { keys: [object.storageKey, ...(object.kept && !kept ? [object.kept.storageKey] : [])] });
      if (object.kept) this.intents.committed(object.kept.storageKey);
      this.intents.committed(object.storageKey);
      this.d.changes.record(opts.by, opts.kind ?? ChangeKinds.replaced, updated, {
        details: { size: updated.size, mimeType: updated.mimeType, ...opts.details },
      });
      opts.during?.(updated);
      return updated;
    });
  }

  /**
   * New content for a file from an object already stored (a WebDAV COPY or MOVE onto it); into a library file,
   * staged in its host folder first. The event goes out as for a replace.
   */
  async commitStored(
    principal: Principal,
    id: string,
    object: StoredObject,
    modified: number,
    expect?: (current: Item) => void,
  ): Promise<Item> {
    const dest = this.requireFile(principal, id);
    let row: Item;
    try {
      await this.toLibrary(dest.parentId, object, modified, dest);
      row = this.commitReplacement(principal.accountId, object, {
        current: () => {
          const row = this.requireFile(principal, id);
          expect?.(row);
          return row;
        },
        by: principal,
        origin: { source: 'webdav', authorId: principal.loginId },
        modified,
        room: roomRuleOf(principal),
      });
    } catch (err) {
      await this.d.libraryContent.drop(object.host, object.kept);
      throw err;
    }
    this.d.events.item(principal, FileEventType.updated, row, { size: row.size, mimeType: row.mimeType });
    return row;
  }

  /**
   * WebDAV MOVE of a file onto another file: the destination keeps its id, name, shares and stars and
   * takes the source's object (no bytes move); its content before becomes a version. The source row
   * goes, and its versions follow its content to the destination.
   */
  moveOnto(principal: Principal, sourceId: string, destId: string): Item {
    const updated = this.transactions.immediate(() => {
      const source = this.requireFile(principal, sourceId);
      const dest = this.requireFile(principal, destId);
      // A library file has no object to hand over: its bytes are a host file.
      if (!source.storageKey) throw forbidden(LIBRARY_ONTO);
      const kept = this.d.versions.keepReplaced(dest);
      this.d.versions.reassign(source.id, dest.id);
      // Before the source's row goes, and its SHA1 with it.
      this.d.checksums.carry({ id: source.id, storageKey: source.storageKey }, { id: dest.id, storageKey: source.storageKey });
      this.d.items.delete(source.id);
      const row = this.d.items.replaceContent(dest.id, {
        size: source.size,
        mimeType: source.mimeType,
        storageKey: source.storageKey,
        wrappedKey: source.wrappedKey,
        keyId: source.keyId,
        modifiedAt: source.modifiedAt,
        accessedAt: this.clock.now(),
        contentSource: source.contentSource,
        contentAuthorId: source.contentAuthorId,
      });
      if (!kept) {
        this.quota.adjust(principal.accountId, -dest.size);
        if (dest.storageKey) this.d.queue.insert(Jobs.storageDelete, { keys: [dest.storageKey] });
      }
      // Two items changed: the source is gone, the destination holds its content.
      this.d.changes.record(principal, ChangeKinds.purged, source, { gone: true, details: { movedOnto: dest.id } });
      this.d.changes.record(principal, ChangeKinds.replaced, row, { details: { size: row.size, movedFrom: source.id } });
      return { row, source };
    });
    this.d.events.item(principal, FileEventType.permanentlyDeleted, updated.source);
    this.d.events.item(principal, FileEventType.updated, updated.row, { size: updated.row.size, mimeType: updated.row.mimeType });
    return updated.row;
  }

  /** POST /:id/derived: a new sibling file next to an existing one (the original is unchanged). */
  async derive(caller: Principal, id: string, req: UploadRequest): Promise<ItemView> {
    const principal = this.d.tree.actor(caller, { ids: [id] }, 'edit');
    this.requireFile(principal, id);
    const stored: StoredObject[] = [];
    try {
      let name = '';
      const { fields, object } = await this.readOneFile(req, stored, (part) => {
        name = uploadedFileName(part.filename);
        return this.budget(principal.accountId, roomRuleOf(principal), 0, req.sizeHint);
      });
      const modified = parseModifiedTime(fields.get('lastModifiedTimes'));
      await this.toLibrary(this.requireFile(principal, id).parentId, object, modified);
      const row = this.transactions.immediate(() => {
        const source = this.requireFile(this.d.tree.actorNow(principal, { ids: [id] }, 'edit'), id);
        const row = this.insertFile(principal, source.parentId, name, object, modified, { room: roomRuleOf(principal) });
        this.recordUpload(principal, row);
        return row;
      });
      stored.length = 0;
      this.published(principal, row);
      return this.d.views.inserted(principal.accountId, row);
    } finally {
      await this.discard(stored);
    }
  }

  /**
   * A file whose bytes arrived in a resumable upload: the row, free name, folders of its relative path,
   * usage counter, events and audit exactly as POST /upload makes them. Its quota was reserved when the
   * upload began; the commit checks it against the limit as it stands, its own reservation counted as room
   * (413 otherwise, the upload kept), and `within` runs in the same transaction (the upload ends).
   * A target folder trashed meanwhile puts the file in the account's home (Tree.homeFolder), as restore does, rather than lose it; with
   * `exactName` (a WebDAV path) it is 404 instead, and `within` does not run.
   */
  async commitResumed(uploader: AuditPrincipal, file: ResumedFile, within: (row: Item) => void): Promise<ItemView> {
    const type = await detectType(file.head, file.clientType);
    const object: StoredObject = { ...file, ...type };
    const replaced = file.replaceId ? this.d.items.getLive(uploader.accountId, file.replaceId) : null;
    const parent = this.d.items.getLive(uploader.accountId, file.parentId ?? '');
    const folderId = replaced?.type === 'file' ? replaced.parentId : parent?.type === 'folder' ? parent.id : null;
    await this.toLibrary(folderId, object, file.modified, replaced?.type === 'file' ? replaced : undefined);
    try {
      return this.commitResumedObject(uploader, file, object, type.detected, within);
    } catch (err) {
      await this.d.libraryContent.drop(object.host, object.kept);
      throw err;
    }
  }

  private commitResumedObject(
    uploader: AuditPrincipal,
    file: ResumedFile,
    object: StoredObject,
    detected: boolean,
    within: (row: Item) => void,
  ): ItemView {
    const room = { reserved: file.size, evicts: file.evicts };
    const by: ChangeBy = file.droppedVia ? { accountId: uploader.accountId, actor: { kind: 'link', id: file.droppedVia } } : uploader;
    const target = file.replaceId ? this.d.items.getLive(uploader.accountId, file.replaceId) : null;
    if (file.replaceId && target?.type !== 'file') file.expect?.(null);
    if (target?.type === 'file') {
      if (!detected && noClientType(file.clientType) && target.mimeType) object.mimeType = target.mimeType;
      const row = this.commitReplacement(uploader.accountId, object, {
        current: () => {
          const row = this.d.items.getLive(uploader.accountId, target.id) ?? target;
          file.expect?.(row);
          return row;
        },
        by,
        origin: { source: 'replace', authorId: uploader.loginId },
        modified: file.modified,
        during: within,
        room,
      });
      this.d.events.item(uploader, FileEventType.updated, row, { size: row.size, mimeType: row.mimeType });
      collectAfterTransfer(file.size);
      return this.d.views.one(uploader.accountId, row);
    }
    // Not in a group commit: the account's usage row, which the row's checks each read, is read once all the same.
    const result = this.transactions.immediate(() =>
      this.quota.readOnceWhile(() => {
        const parent = this.d.items.getLive(uploader.accountId, file.parentId ?? '');
        // A WebDAV path names its folder: the file never lands elsewhere (the upload stays, for a MOVE to another path).
        if (file.exactName && file.parentId && parent?.type !== 'folder') throw notFound(Messages.folderNotFound);
        const created: Item[] = [];
        const folders = new Map<string, string | null>([
          ['', parent?.type === 'folder' ? parent.id : this.d.tree.homeFolder(uploader.accountId)],
        ]);
        const folderId = this.ensureFolders(uploader, folders, created, file.relativePath ?? undefined);
        const row = this.insertFile(uploader, folderId, file.name, object, file.modified, { room, exactName: file.exactName });
        if (file.droppedVia) {
          this.d.changes.record(by, ChangeKinds.dropped, row, {
            details: { size: row.size, mimeType: row.mimeType, linkId: file.droppedVia },
          });
          this.auditUpload(uploader, row);
        } else this.recordUpload(uploader, row);
        within(row);
        return { row, created };
      }),
    );
    for (const folder of result.created) this.d.events.item(uploader, FileEventType.folderCreated, folder);
    this.published(uploader, result.row);
    collectAfterTransfer(file.size);
    return this.d.views.inserted(uploader.accountId, result.row);
  }

  /**
   * When `folderId` is a folder of a writable library, writes the stored object's bytes to a temporary file
   * in its host folder (`object.host`), which the commit renames into place, and keeps the content of the
   * file it `replaces` for its version (`object.kept`). Every door calls it once the target is known, as
   * the bytes reach the encrypted store before it is; `discard` removes both when the commit does not happen.
   */
  private async toLibrary(folderId: string | null, object: StoredObject, modified: number | null, replaces?: Item): Promise<void> {
    const staged = await this.d.libraryContent.stage(folderId, object, modified);
    if (!staged) return;
    object.host = staged;
    if (replaces) object.kept = (await this.d.libraryContent.keep(replaces)) ?? undefined;
  }

  /**
   * A single-file form: every field, and the first file part stored under a new key (recorded in `stored`
   * so the caller can discard it); later file parts are skipped. `prepare` checks the part before a byte
   * of it is stored and returns the budget to store it under.
   */
  private async readOneFile(
    req: UploadRequest,
    stored: StoredObject[],
    prepare: (part: UploadFilePart, fields: Map<string, string>) => Budget,
  ): Promise<{ fields: Map<string, string>; part: UploadFilePart; object: StoredObject }> {
    collectBeforeTransfer(req.sizeHint);
    const fields = new Map<string, string>();
    let file: { part: UploadFilePart; object: StoredObject } | null = null;
    for await (const part of req.parts) {
      if (part.kind === 'field') {
        fields.set(part.name, part.value);
        continue;
      }
      if (file) continue;
      const object = await this.store(part, prepare(part, fields), req.signal);
      stored.push(object);
      file = { part, object };
    }
    if (!file) throw badRequest(Messages.noFile);
    return { fields, ...file };
  }

  private requireFile(principal: Principal, id: string): Item {
    const row = this.d.tree.requireLive(principal, id);
    if (row.type !== 'file') throw badRequest(Messages.onlyFiles);
    return row;
  }

  /**
   * The budget of a file part that arrives before the form names its target: the most room among the
   * accounts the caller may add files to. The real account's quota is checked again when the row is inserted.
   */
  private budgetBeforeTarget(caller: Principal, sizeHint?: number): Budget {
    const free = () => {
      let most = this.roomOf(caller.accountId, roomRuleOf(caller));
      // Unlimited room in the caller's own account is the most there is: the shares need not be read.
      if (most === null) return null;
      for (const accountId of this.d.tree.writableAccounts(caller)) {
        if (accountId === caller.accountId) continue;
        const room = this.roomOf(accountId, 'free');
        if (room === null) return null;
        most = Math.max(most, room);
      }
      return most;
    };
    return { maxBytes: this.settings.get('maxUploadBytes'), free, sizeHint };
  }

  /** The room of an upload: free space, plus what versions hold when its commit may remove them. */
  private budget(accountId: string, rule: 'evict' | 'free', freedBytes: number, sizeHint?: number): Budget {
    const free = () => {
      const room = this.roomOf(accountId, rule);
      return room === null ? null : room + freedBytes;
    };
    return { maxBytes: this.settings.get('maxUploadBytes'), free, sizeHint };
  }

  private roomOf(accountId: string, rule: 'evict' | 'free'): number | null {
    return rule === 'evict' ? this.quota.room(accountId) : this.quota.usage(accountId).free;
  }

  /**
   * Streams one file part into storage under a new key, enforcing the budget while the bytes flow, and
   * the disk's reserve: before the first byte (for the declared size) and every few MiB after.
   */
  private async store(
    part: Pick<UploadFilePart, 'body' | 'mimeType' | 'unread'>,
    budget: Budget,
    signal?: AbortSignal,
  ): Promise<StoredObject> {
    const disk = this.disk;
    disk.assertRoom(budget.sizeHint ?? 0);
    const checkEvery = disk.checkEvery;
    const storageKey = newStorageKey();
    // Not zero-filled: only the bytes copied in (head.subarray(0, headBytes)) are ever read.
    let head = null as Buffer | null;
    let headBytes = 0;
    let free: number | null = null;
    const overQuotaCount = budget.overQuotaCount ?? OVER_QUOTA_COUNT_BYTES;
    async function* counted(): AsyncGenerator<Uint8Array> {
      let size = 0;
      let checkedAt = 0;
      let overAt: number | null = null;
      let unread: number | null = null;
      for await (const chunk of part.body) {
        size += chunk.byteLength;
        if (overAt !== null) {
          if (size - overAt > overQuotaCount) {
            unread = part.unread?.() ?? null;
            break;
          }
          continue;
        }
        if (size > budget.maxBytes) throw fileTooLarge(budget.maxBytes);
        // Refused: the rest of a small file is counted (not kept) so the 413 names its size, not a form's around it.
        if (free !== null && size > free) {
          overAt = size;
          continue;
        }
        if (size - checkedAt >= checkEvery) {
          checkedAt = size;
          disk.assertRoom();
        }
        if (headBytes < SNIFF_BYTES) {
          const take = chunk.subarray(0, SNIFF_BYTES - headBytes);
          head = grownFor(head, headBytes, take.byteLength, SNIFF_BYTES);
          head.set(take, headBytes);
          headBytes += take.byteLength;
        }
        yield chunk;
      }
      // The file's size when its end came within the count; else what the declared length leaves for it, or that length
      // itself (a WebDAV PUT's is the file's).
      if (overAt !== null) {
        const required = size - overAt <= overQuotaCount ? size : unread !== null ? size + unread : Math.max(size, budget.sizeHint ?? 0);
        throw storageLimitExceeded(required, free!);
      }
    }
    // Committed with the intents and rows of the other uploads of this turn, before the first byte is written.
    free = await this.transactions.grouped(() => {
      this.intents.record(storageKey);
      return budget.free();
    });
    let info;
    try {
      info = await this.d.storage.put(storageKey, counted(), { signal, fresh: true });
    } catch (err) {
      // The driver removed its temp file and published nothing; a client that hung up gets the 499.
      this.intents.forget(storageKey);
      if (signal?.aborted) throw uploadAborted();
      throw err;
    }
    return {
      storageKey,
      size: info.size,
      wrappedKey: info.wrappedKey,
      keyId: info.keyId,
      ...(await detectType(head?.subarray(0, headBytes) ?? new Uint8Array(0), part.mimeType)),
    };
  }

  /**
   * A chunk of inserts (inside its transaction) with what each would repeat done once: the store's location
   * checked before the first row, and at the end the folders' tree marks, the usage counters and the intents' clears.
   */
  private insertingChunk<T>(write: () => T): T {
    return this.intents.batchingCommits(() => this.quota.batchingUsage(() => this.d.items.batchingTreeChanges(write)));
  }

  /** Inserts a file row for a durable object, with a free name and the usage counter; inside a transaction. */
  private insertFile(
    principal: AuditPrincipal,
    parentId: string | null,
    name: string,
    object: StoredObject,
    modified: number | null,
    opts: { room: RoomRule; source?: VersionSource; exactName?: boolean },
  ): Item {
    this.assertAccountActive(principal.accountId);
    // The name was free when the request began; another door may have taken it while the bytes arrived.
    if (opts.exactName && this.d.items.liveByName(principal.accountId, parentId, name)) throw conflict(Messages.nameTaken);
    const host = object.host;
    // A library file takes no room in the store: its object goes once the host file is in place.
    if (!host) this.quota.assertRoomFor(principal.accountId, object.size, opts.room);
    const now = this.clock.now();
    const row = this.d.items.insert(
      {
        id: newId(),
        accountId: principal.accountId,
        parentId,
        type: 'file',
        name: opts.exactName ? name : this.d.tree.uniqueName(principal.accountId, parentId, name),
        size: object.size,
        mimeType: object.mimeType,
        ...(host ? HOST_CONTENT : { storageKey: object.storageKey, wrappedKey: object.wrappedKey, keyId: object.keyId }),
        starred: false,
        modifiedAt: host?.modifiedAt ?? modified ?? now,
        accessedAt: now,
        createdAt: now,
        contentSource: opts.source ?? 'upload',
        contentAuthorId: principal.loginId,
      },
      host,
    );
    if (host) this.d.queue.insert(Jobs.storageDelete, { keys: [object.storageKey] });
    else this.quota.adjust(principal.accountId, object.size);
    this.intents.committed(object.storageKey);
    return row;
  }

  /**
   * 404 once the account is disabled or deleted while the bytes arrived: its logins were signed out at once, and
   * nothing new may land in it (after its deletion job's purge, a row would be left behind or break its key).
   */
  private assertAccountActive(accountId: string): void {
    if (!this.quota.accepts(accountId)) throw notFound(Messages.folderNotFound);
  }

  /** Finds or creates the folders of a relative path (`a/b/file.txt` → a, a/b) below the upload's parent. */
  private ensureFolders(
    principal: AuditPrincipal,
    folders: Map<string, string | null>,
    created: Item[],
    relativePath: string | undefined,
  ): string | null {
    let path = '';
    let parentId: string | null = folders.get('') ?? null;
    const segments = relativeFolders(relativePath);
    let checked = false;
    for (const [i, segment] of segments.entries()) {
      path += `/${nameKeyOf(segment)}`;
      const known = folders.get(path);
      if (known !== undefined) {
        parentId = known;
        continue;
      }
      const existing = this.d.items.liveByName(principal.accountId, parentId, segment);
      if (existing?.type === 'folder') {
        parentId = existing.id;
      } else {
        this.assertAccountActive(principal.accountId);
        // The folders still to make, checked at once: a path too deep makes none of them.
        if (!checked) this.d.items.assertNests(parentId, segments.length - i);
        checked = true;
        const folder = this.d.folders.insertFolder(principal.accountId, parentId, segment);
        this.d.changes.record(principal, ChangeKinds.created, folder);
        created.push(folder);
        parentId = folder.id;
      }
      folders.set(path, parentId);
    }
    return parentId;
  }

  /** The change log's row and the audit record of a new file, in the transaction that inserts it. */
  private recordUpload(principal: AuditPrincipal, row: Item): void {
    this.d.changes.record(principal, ChangeKinds.uploaded, row, { details: { size: row.size, mimeType: row.mimeType } });
    this.auditUpload(principal, row);
  }

  /** Queued in the transaction that inserts the row: one commit for both, and no upload without its record. */
  private auditUpload(principal: AuditPrincipal, row: Item): void {
    this.d.events.recordAudit(principal, FileEventType.uploaded, row, uploadedDetails(row));
  }

  /** The live event of a new file, once committed; its audit record was written with the row (`auditUpload`). */
  private published(principal: AuditPrincipal, row: Item): void {
    this.d.events.announce(principal, FileEventType.uploaded, row, uploadedDetails(row));
  }

  /** `published` of new files committed together. */
  private publishedEach(principal: AuditPrincipal, rows: readonly Item[]): void {
    this.d.events.announceEach(principal, FileEventType.uploaded, rows, uploadedDetails);
  }

  /** Removes objects this request stored but did not commit; one that cannot be removed is left to the intent sweep. */
  async discard(objects: StoredObject[]): Promise<void> {
    for (const o of objects) {
      await this.d.libraryContent.drop(o.host, o.kept);
      try {
        await this.d.storage.delete(o.storageKey);
        this.intents.forget(o.storageKey);
      } catch (err) {
        this.intents.abandon(o.storageKey);
        this.d.log.warn('could not remove an uploaded object', { key: o.storageKey, err: String(err) });
      }
    }
  }
}
