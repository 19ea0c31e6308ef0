import { createHmac, randomBytes } from 'node:crypto';
import dns from 'node:dns/promises';
import { isIP } from 'node:net';
import { jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { DocserverRepo, DocumentKey } from '../../db/repos/docserver.ts';
import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import type { LibrariesRepo } from '../../db/repos/libraries.ts';
import type { User, UsersRepo } from '../../db/repos/users.ts';
import { AppError, badRequest, forbidden, Messages, notFound, unauthorized, validationFailed } from '../../errors.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { Schedules } from '../../jobs/schedules.ts';
import { isNeverFetchedAddress } from '../../lib/ip.ts';
import type { Logger } from '../../log.ts';
import type { AdminOrigins } from '../admin/admin-origins.ts';
import { AuditActions, type AuditPrincipal, type AuditService } from '../admin/audit.ts';
import type { DownloadService } from '../files/downloads.ts';
import { FileEventType, type FileEvents } from '../files/file-events.ts';
import { splitExtension } from '../files/names.ts';
import { can, parsePermissions, type Principal, requirePermission } from '../identity/principal.ts';
import type { InstanceSettings, SettingsService } from '../admin/settings.ts';
import type { HeldItem, Tree } from '../files/tree.ts';
import type { UploadService } from '../files/uploads.ts';
import type { StoredObject } from '../files/stored-object.ts';

type DocumentType = 'word' | 'cell' | 'slide' | 'pdf';
type Docserver = NonNullable<InstanceSettings['docserver']>;

interface DocumentFormat {
  documentType: DocumentType;
  /** Edited in place; the others open read-only (PDF, and the binary formats the document server cannot write back). */
  editable: boolean;
  /** The type stored for the file when its content is not recognised more precisely. */
  mime: string;
  /** What detection may say of a file with this extension: types, or `text` for formats detection cannot see. */
  detected: readonly string[] | 'text';
}

const ZIP = 'application/zip';
const CFB = 'application/x-cfb';
const OOXML = 'application/vnd.openxmlformats-officedocument';
const ODF = 'application/vnd.oasis.opendocument';

// A ZIP whose [Content_Types].xml or mimetype entry lies past the sniffed head is only known to be a ZIP;
// the old binary formats are all Compound File containers.
const FORMATS: Record<string, DocumentFormat> = {
  docx: {
    documentType: 'word',
    editable: true,
    mime: `${OOXML}.wordprocessingml.document`,
    detected: [`${OOXML}.wordprocessingml.document`, ZIP],
  },
  xlsx: { documentType: 'cell', editable: true, mime: `${OOXML}.spreadsheetml.sheet`, detected: [`${OOXML}.spreadsheetml.sheet`, ZIP] },
  pptx: {
    documentType: 'slide',
    editable: true,
    mime: `${OOXML}.presentationml.presentation`,
    detected: [`${OOXML}.presentationml.presentation`, ZIP],
  },
  odt: { documentType: 'word', editable: true, mime: `${ODF}.text`, detected: [`${ODF}.text`, ZIP] },
  ods: { documentType: 'cell', editable: true, mime: `${ODF}.spreadsheet`, detected: [`${ODF}.spreadsheet`, ZIP] },
  odp: { documentType: 'slide', editable: true, mime: `${ODF}.presentation`, detected: [`${ODF}.presentation`, ZIP] },
  csv: { documentType: 'cell', editable: true, mime: 'text/csv', detected: 'text' },
  txt: { documentType: 'word', editable: true, mime: 'text/plain', detected: 'text' },
  pdf: { documentType: 'pdf', editable: false, mime: 'application/pdf', detected: ['application/pdf'] },
  doc: { documentType: 'word', editable: false, mime: 'application/msword', detected: [CFB, 'application/msword'] },
  xls: { documentType: 'cell', editable: false, mime: 'application/vnd.ms-excel', detected: [CFB, 'application/vnd.ms-excel'] },
  ppt: { documentType: 'slide', editable: false, mime: 'application/vnd.ms-powerpoint', detected: [CFB, 'application/vnd.ms-powerpoint'] },
};

/** Extensions the editor opens, lower case, without the dot. */
export const DOCSERVER_EXTENSIONS: readonly string[] = Object.keys(FORMATS);

/** The extension of a file name as the document server names types: lower case, no dot. */
function extensionOf(name: string): string {
  return splitExtension(name).ext.slice(1).toLowerCase();
}

/** Whether detected content fits the extension; text formats are whatever detection does not recognise. */
function contentFits(format: DocumentFormat, detected: string | null): boolean {
  if (format.detected === 'text') return detected === null || detected.startsWith('text/') || detected === 'application/xml';
  return detected !== null && format.detected.includes(detected);
}

// Document keys: 0-9, a-z, A-Z, - . _ = and at most 128 characters (the document server's API).
const DOCUMENT_KEY = /^[0-9A-Za-z._=-]{1,128}$/;
const FILE_TOKEN_AUDIENCE = 'coffer:docserver-file';
const FILE_TOKEN_LIFETIME_S = 15 * 60;
const SCHEDULE_PREFIX = 'docserver.forcesave:';
const LEGACY_COMMAND_PATH = '/coauthoring/CommandService.ashx';
const COMMAND_TIMEOUT_MS = 30_000;
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;
const MAX_REDIRECTS = 3;
// Keys nobody has used for this long, and with no auto-save left, are removed (with the saves under them).
const IDLE_KEY_MS = 30 * 24 * 3600_000;
// Callbacks are signed with the document server's clock.
const CLOCK_TOLERANCE_S = 120;

/** A new key for a file's content: its id (so the document server's logs name the file) and 96 random bits. */
function newDocumentKey(itemId: string): string {
  return `${itemId}.${randomBytes(12).toString('base64url')}`;
}

/** The fields of a callback Coffer reads (docs/api.md › Document server: status, key, url, forcesavetype; users, filetype from the API). */
const callbackPayload = z
  .object({
    key: z.string().regex(DOCUMENT_KEY, 'key is not a document key'),
    status: z.number().int(),
    url: z.string().max(8192).optional(),
    users: z.array(z.string()).max(1000).optional(),
    forcesavetype: z.number().int().optional(),
    filetype: z.string().max(16).optional(),
  })
  .refine((p) => !(p.status === 2 || p.status === 6) || p.url !== undefined, { message: 'url is required to save', path: ['url'] });
type CallbackPayload = z.infer<typeof callbackPayload>;

const CallbackStatus = {
  editing: 1,
  mustSave: 2,
  saveError: 3,
  closed: 4,
  forceSaved: 6,
  forceSaveError: 7,
} as const;

/** What POST /api/docserver/callback answers: `{error: 0}` or `{error: 1}` with a reason for people reading logs. */
export type CallbackAnswer = { error: 0 } | { error: 1; message: string };

export interface OpenedDocument {
  config: EditorConfig;
  token: string;
  docserverJsUrl: string;
  /** The document server's origin, the only one the viewer page lets script and frames come from. */
  docserverOrigin: string;
}

interface EditorConfig {
  document: {
    fileType: string;
    key: string;
    title: string;
    url: string;
    permissions: { edit: boolean; download: boolean; print: boolean };
  };
  documentType: DocumentType;
  editorConfig: {
    mode: 'edit' | 'view';
    callbackUrl: string;
    lang: string;
    user: { id: string; name: string };
    customization: { forcesave: true; autosave: true };
  };
}

/** A save that was refused (quota, disk, wrong content, a URL that is not the document server's): the callback answers `{error: 1}`. */
class SaveRefused extends Error {}
/** The same edited version was saved under this key meanwhile. */
class AlreadySaved extends Error {}
/** A version the document server sent later under this key was saved meanwhile: it holds this one's edits too. */
class Superseded extends Error {}

/** The saves of one key in flight: callbacks numbered as they arrive, and the number of the last one committed. */
interface SaveOrder {
  arrived: number;
  committed: number;
  running: number;
}

export interface DocserverDeps {
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'docserverAutosaveIntervalMs' | 'docserverBackendUrl' | 'publicUrl'>;
  /** Coffer's own token secret; file links are signed with a key derived from it, never with the document server's secret. */
  jwtSecret: Uint8Array;
  repo: DocserverRepo;
  items: ItemsRepo;
  libraries: LibrariesRepo;
  users: UsersRepo;
  tree: Tree;
  settings: SettingsService;
  adminOrigins: AdminOrigins;
  uploads: UploadService;
  downloads: DownloadService;
  schedules: Schedules;
  events: FileEvents;
  audit: AuditService;
}

/**
 * The document server integration (an OnlyOffice-compatible Docs server): signed editor configs with one
 * key per editing session, short-lived file links for the server to fetch a document, signed callbacks
 * that save edited versions (downloaded only from the server's own origin), and durable auto-save
 * schedules that send it `forcesave` commands.
 */
export class DocserverService {
  private readonly fileKey: Uint8Array;
  /** Document server origins that answered 404 on /command: they get the legacy path for the rest of this run. */
  private readonly legacyCommandPath = new Set<string>();
  /** Saves in progress by key and URL: a callback repeated meanwhile waits for the first instead of downloading again. */
  private readonly saving = new Map<string, Promise<CallbackAnswer>>();
  /** Arrival order of the saves in flight by key, so an older version that downloads slowly never overwrites a newer one. */
  private readonly order = new Map<string, SaveOrder>();

  constructor(private readonly d: DocserverDeps) {
    this.fileKey = new Uint8Array(createHmac('sha256', d.jwtSecret).update('coffer docserver file links').digest());
  }

  /** Whether the admin has connected a document server. */
  configured(): boolean {
    return this.d.settings.get('docserver') !== null;
  }

  /**
   * GET /api/docserver/config/:id: the signed editor config of a live file of the account. Opens (or
   * joins) the editing session of the file's content and makes sure it has an auto-save schedule.
   */
  async open(principal: Principal, id: string, opts: { requestOrigin: string; acceptLanguage?: string | null }): Promise<OpenedDocument> {
    const docserver = this.requireConfigured();
    const actor = this.d.tree.actor(principal, { ids: [id] }, 'view');
    const row = this.d.tree.requireLive(actor, id);
    if (row.type !== 'file') throw badRequest(Messages.docserverFolder);
    const fileType = extensionOf(row.name);
    const format = FORMATS[fileType];
    if (!format) {
      throw badRequest(
        `Files of this type cannot be opened in the document editor. It opens ${DOCSERVER_EXTENSIONS.map((e) => `.${e}`).join(', ')}.`,
      );
    }
    if (!contentFits(format, await this.d.downloads.detectType(row))) throw badRequest(Messages.docserverTypeMismatch);

    const base = this.backendBase(opts.requestOrigin);
    const now = this.d.clock.now();
    // A viewer of a shared document reads it; an editor edits it like the owner's own logins.
    const mode = format.editable && can(principal, 'files.edit') && actor.share?.role !== 'viewer' ? 'edit' : 'view';
    const session = this.d.repo.openKey(
      { key: newDocumentKey(row.id), itemId: row.id, accountId: row.accountId, storageKey: this.contentOf(row) },
      now,
    );
    this.ensureAutosave(session.key, now);
    const fileToken = await this.fileLinkToken({ file: row.id, account: row.accountId, key: session.key, login: principal.loginId });
    const config: EditorConfig = {
      document: {
        fileType,
        key: session.key,
        title: row.name,
        url: `${base}/api/docserver/file/${encodeURIComponent(row.id)}?t=${fileToken}`,
        // Only logins that may download open documents at all, so the editor's download and print stay on.
        permissions: { edit: mode === 'edit', download: true, print: true },
      },
      documentType: format.documentType,
      editorConfig: {
        mode,
        callbackUrl: `${base}/api/docserver/callback`,
        lang: languageOf(opts.acceptLanguage),
        user: { id: principal.loginId, name: principal.name || principal.email },
        customization: { forcesave: true, autosave: true },
      },
    };
    const token = await new SignJWT({ ...config })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(Math.floor(now / 1000))
      .sign(secretOf(docserver));
    return {
      config,
      token,
      docserverJsUrl: `${docserver.url}/web-apps/apps/api/documents/api.js`,
      docserverOrigin: new URL(docserver.url).origin,
    };
  }

  /** The `t` of a document link: names the file, its account, the session key and the login that opened it; 15 minutes. */
  fileLinkToken(claims: { file: string; account: string; key: string; login: string }): Promise<string> {
    const now = Math.floor(this.d.clock.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setAudience(FILE_TOKEN_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + FILE_TOKEN_LIFETIME_S)
      .sign(this.fileKey);
  }

  /**
   * GET /api/docserver/file/:id?t=: the file a document link names. The link's signature, expiry, file
   * and account must all hold, and its key must still be a session of that file; nothing else grants access.
   */
  async fileForLink(id: string, token: string | undefined, ip: string): Promise<{ row: HeldItem; reader: AuditPrincipal }> {
    if (!token) throw unauthorized(Messages.docserverFileToken);
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(token, this.fileKey, {
        algorithms: ['HS256'],
        audience: FILE_TOKEN_AUDIENCE,
        currentDate: new Date(this.d.clock.now()),
      }));
    } catch {
      throw unauthorized(Messages.docserverFileToken);
    }
    const { file, account, key, login } = claims;
    if (file !== id || typeof account !== 'string' || typeof key !== 'string' || typeof login !== 'string') {
      throw unauthorized(Messages.docserverFileToken);
    }
    // The link's claims must be the session's own: its key names the file and account it was handed out for.
    const session = this.d.repo.get(key);
    if (!session || session.itemId !== file || session.accountId !== account) throw unauthorized(Messages.docserverFileToken);
    if (!this.accountActive(account)) throw forbidden(Messages.accountDisabled);
    const reader = this.d.users.byId(login);
    // The link reads for the login that opened the editor: it ends with that login and with its Download.
    if (!reader) throw unauthorized(Messages.docserverFileToken);
    if (reader.disabledAt !== null) throw forbidden(Messages.accountDisabled);
    requirePermission({ isOwner: reader.parentUserId === null, permissions: parsePermissions(reader.permissions) }, 'files.download');
    const readerAccount = reader.parentUserId ?? reader.id;
    // A member's link ends with its membership.
    if (readerAccount !== account && !this.d.tree.reachesShared(readerAccount, id)) throw notFound(Messages.itemNotFound);
    const row = this.d.tree.requireLive({ accountId: account }, id);
    if (this.contentOf(row) !== session.storageKey) throw new AppError(409, Messages.docserverFileChanged);
    return { row, reader: { loginId: login, accountId: account, ip } };
  }

  /**
   * POST /api/docserver/callback. The body's `token`, or else the `Authorization: Bearer` token (whose
   * claims wrap the body in `payload`), must verify with the shared secret; only its signed claims are read.
   */
  async callback(body: unknown, authorization: string | null, ip: string): Promise<CallbackAnswer> {
    const docserver = this.d.settings.get('docserver');
    const claims = docserver ? await this.verifiedCallback(body, authorization, secretOf(docserver)) : null;
    if (!claims || !docserver) {
      this.d.log.warn('document server callback refused: no valid signature', { ip });
      this.d.audit.record({
        action: AuditActions.accessDenied,
        status: 'denied',
        ip,
        targetType: 'route',
        targetId: 'POST /api/docserver/callback',
        details: { reason: Messages.docserverCallbackToken },
      });
      throw unauthorized(Messages.docserverCallbackToken);
    }
    const parsed = callbackPayload.safeParse(claims);
    if (!parsed.success) {
      throw validationFailed(parsed.error.issues.map((i) => ({ field: i.path.join('.') || 'body', message: i.message })));
    }
    const p = parsed.data;
    const session = this.d.repo.get(p.key);
    if (!session) throw new AppError(404, Messages.docserverSessionNotFound, { error: 1 });
    const now = this.d.clock.now();
    this.d.log.info('document server callback', { key: p.key, status: p.status, forcesavetype: p.forcesavetype });
    switch (p.status) {
      case CallbackStatus.editing:
        // Kept when everyone has left: a save that then names nobody is checked against who edited.
        if (p.users?.length) this.d.repo.setEditors(p.key, JSON.stringify(p.users), now);
        // Someone is editing: keep auto-saving even if a command found the key unknown while the editor loaded.
        if (p.users?.length && session.closedAt === null && this.accountActive(session.accountId)) this.ensureAutosave(p.key, now);
        return { error: 0 };
      case CallbackStatus.mustSave: {
        const answer = await this.saveOnce(session, p, docserver, ip);
        this.endSession(p.key);
        return answer;
      }
      case CallbackStatus.forceSaved:
        return this.saveOnce(session, p, docserver, ip);
      case CallbackStatus.saveError:
      case CallbackStatus.forceSaveError:
        this.d.log.warn('the document server could not save a document; the stored version is kept', { key: p.key, status: p.status });
        this.d.audit.record({
          action: AuditActions.documentSave,
          status: 'failure',
          principal: this.actorOf(session, p.users, ip),
          targetType: 'file',
          targetId: session.itemId,
          details: { key: p.key, status: p.status, reason: 'the document server reported a saving error' },
        });
        return { error: 0 };
      case CallbackStatus.closed:
        this.endSession(p.key);
        return { error: 0 };
      default:
        return { error: 0 };
    }
  }

  /**
   * The auto-save job: asks the document server to force-save the key's document (`{c: "forcesave", key}`,
   * signed as `{token}`, key also as `shardkey`). Error 0 saved (the server then calls back with status 6),
   * 4 nothing changed, 1 the document is no longer open (the schedule goes); anything else throws, and the
   * queue retries with backoff.
   */
  async forcesave(key: string): Promise<{ outcome: 'requested' | 'unchanged' | 'closed' }> {
    const docserver = this.d.settings.get('docserver');
    const session = this.d.repo.get(key);
    if (!docserver || !session || session.closedAt !== null || !this.accountActive(session.accountId)) {
      this.d.schedules.remove(scheduleName(key));
      return { outcome: 'closed' };
    }
    const origin = new URL(docserver.url).origin;
    const token = await new SignJWT({ c: 'forcesave', key })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(Math.floor(this.d.clock.now() / 1000))
      .sign(secretOf(docserver));
    const send = (path: string) =>
      fetch(`${docserver.url}${path}?shardkey=${encodeURIComponent(key)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ token }),
        redirect: 'error',
        signal: AbortSignal.timeout(COMMAND_TIMEOUT_MS),
      });
    const path = this.legacyCommandPath.has(origin) ? LEGACY_COMMAND_PATH : '/command';
    let res = await send(path);
    // Checked against the path this job used: another job may have switched while this one waited.
    if (res.status === 404 && path === '/command') {
      await res.body?.cancel();
      if (!this.legacyCommandPath.has(origin)) {
        this.legacyCommandPath.add(origin);
        this.d.log.info('the document server has no /command; using the legacy command path from now on', { path: LEGACY_COMMAND_PATH });
      }
      res = await send(LEGACY_COMMAND_PATH);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`the document server answered the forcesave command with HTTP ${res.status}`);
    }
    const answer = (await res.json().catch(() => null)) as { error?: unknown } | null;
    switch (answer?.error) {
      case 0:
        return { outcome: 'requested' };
      case 4:
        return { outcome: 'unchanged' };
      case 1:
        this.d.schedules.remove(scheduleName(key));
        return { outcome: 'closed' };
      default:
        throw new Error(`the document server refused the forcesave command: ${commandError(answer?.error)}`);
    }
  }

  /** Daily: sessions idle for a month with no auto-save left go, with the record of their saves. */
  purgeIdleKeys(): number {
    return this.d.repo.purgeIdleBefore(this.d.clock.now() - IDLE_KEY_MS, SCHEDULE_PREFIX);
  }

  // ---- internals ----

  private requireConfigured(): Docserver {
    const docserver = this.d.settings.get('docserver');
    if (!docserver) throw new AppError(424, Messages.docserverNotConfigured);
    return docserver;
  }

  /**
   * Where the document server reaches Coffer: DOCSERVER_BACKEND_URL, else the share base URL, else COFFER_PUBLIC_URL,
   * else the request's origin when the admin has used the instance at it, else the origin the admin last started using.
   * The request's origin comes from its Host header, which any client writes: taken as it is, the signed config would
   * send the document server to fetch and save at a host of that client's choosing.
   */
  private backendBase(requestOrigin: string): string {
    if (this.d.config.docserverBackendUrl) return this.d.config.docserverBackendUrl;
    const named = this.d.settings.get('shareBaseUrl') ?? this.d.config.publicUrl;
    if (named) return new URL(named).origin;
    if (this.d.adminOrigins.has(requestOrigin)) return requestOrigin;
    const latest = this.d.adminOrigins.latest();
    if (latest === null) throw new AppError(424, Messages.docserverNoOrigin);
    return latest;
  }

  /** One schedule per key (its name is the key), first run a full interval away, on the interval's boundaries. */
  private ensureAutosave(key: string, now: number): void {
    const interval = this.d.config.docserverAutosaveIntervalMs;
    this.d.schedules.ensure(scheduleName(key), {
      job: Jobs.docserverForcesave,
      payload: { key },
      intervalMs: interval,
      firstRunAt: Math.ceil((now + interval) / interval) * interval,
    });
  }

  /** What a session edits: the file's stored object, or a library file's host content as indexed. */
  private contentOf(row: Item): string {
    const content = row.storageKey ?? this.d.libraries.contentTag(row.id);
    if (!content) throw new AppError(409, Messages.docserverFileChanged);
    return content;
  }

  private endSession(key: string): void {
    this.d.repo.close(key, this.d.clock.now());
    this.d.schedules.remove(scheduleName(key));
  }

  private async verifiedCallback(body: unknown, authorization: string | null, secret: Uint8Array): Promise<Record<string, unknown> | null> {
    const verify = async (token: unknown) => {
      if (typeof token !== 'string' || token === '') return null;
      try {
        const { payload } = await jwtVerify(token, secret, {
          algorithms: ['HS256'],
          currentDate: new Date(this.d.clock.now()),
          clockTolerance: CLOCK_TOLERANCE_S,
        });
        return payload as Record<string, unknown>;
      } catch {
        return null;
      }
    };
    const inBody = await verify((body as { token?: unknown } | null)?.token);
    if (inBody) return inBody;
    const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    const inHeader = await verify(bearer);
    const wrapped = inHeader?.payload;
    return typeof wrapped === 'object' && wrapped !== null && !Array.isArray(wrapped) ? (wrapped as Record<string, unknown>) : null;
  }

  /** Saves the version at `url` once per key, whatever number of callbacks name it (concurrent ones wait for the first). */
  private saveOnce(session: DocumentKey, p: CallbackPayload, docserver: Docserver, ip: string): Promise<CallbackAnswer> {
    const url = p.url!;
    if (this.d.repo.isSaved(session.key, url)) return Promise.resolve({ error: 0 });
    const flight = `${session.key}\n${url}`;
    let running = this.saving.get(flight);
    if (!running) {
      const order = this.order.get(session.key) ?? { arrived: 0, committed: 0, running: 0 };
      this.order.set(session.key, order);
      const seq = ++order.arrived;
      order.running++;
      const turn = {
        check: () => {
          if (seq < order.committed) throw new Superseded();
        },
        commit: () => {
          order.committed = seq;
        },
      };
      running = this.save(session, p, url, docserver, ip, turn).finally(() => {
        this.saving.delete(flight);
        if (--order.running === 0) this.order.delete(session.key);
      });
      this.saving.set(flight, running);
    }
    return running;
  }

  private async save(
    session: DocumentKey,
    p: CallbackPayload,
    url: string,
    docserver: Docserver,
    ip: string,
    turn: { check: () => void; commit: () => void },
  ): Promise<CallbackAnswer> {
    // A save naming nobody (its editors gone) is the last ones named editing's: a member removed meanwhile saves nothing.
    const users = p.users?.length ? p.users : editorsOf(session);
    const actor = this.actorOf(session, users, ip);
    const room = this.roomOf(session, users);
    const refuse = (reason: string): CallbackAnswer => {
      this.d.log.warn('edited document not saved', { key: session.key, status: p.status, reason });
      this.d.audit.record({
        action: AuditActions.documentSave,
        status: 'failure',
        principal: actor,
        targetType: 'file',
        targetId: session.itemId,
        details: { key: session.key, status: p.status, reason },
      });
      return { error: 1, message: reason };
    };
    if (!this.accountActive(session.accountId)) return refuse(Messages.accountDisabled);
    if (users.length && !users.some((id) => this.mayStillEdit(session, id)))
      return refuse('nobody editing it may still change this file (a member removed or made a viewer, or Modify taken away)');
    const current = this.d.items.get(session.accountId, session.itemId);
    if (!current || current.type !== 'file') return refuse('the file no longer exists');
    const fileType = extensionOf(current.name);
    const format = FORMATS[fileType];
    if (!format) return refuse(`the file was renamed to a type the editor does not save (.${fileType})`);
    if (p.filetype && p.filetype.toLowerCase() !== fileType) {
      return refuse(
        `the document server sent a .${p.filetype} for a .${fileType} file; enable its assemblyFormatAsOrigin setting so it saves in the original format`,
      );
    }

    let object: StoredObject | null = null;
    let committed = false;
    let trashed = false;
    try {
      const res = await this.downloadFromDocserver(url, docserver.url);
      object = await this.d.uploads.storeReplacement(current, brokenOffAsRefusal(res.body!), format.mime, room);
      const detected = object.detected ? object.mimeType : null;
      if (!contentFits(format, detected))
        throw new SaveRefused(`the edited version is not a .${fileType} file (detected ${detected ?? 'nothing'})`);
      // A bare container says nothing more precise than the extension does.
      if (detected === null || detected === ZIP || detected === CFB) object.mimeType = format.mime;
      const now = this.d.clock.now();
      const updated = this.d.uploads.commitReplacement(session.accountId, object, {
        current: () => {
          const row = this.d.items.get(session.accountId, session.itemId);
          if (!row) throw new SaveRefused('the file was deleted while its edited version was being saved');
          turn.check();
          // Replaced by another client since the editor opened it (the session as it is now: a concurrent save under this key moved it):
          // with versions off the save would delete that content.
          const edited = this.d.repo.get(session.key)?.storageKey ?? session.storageKey;
          if (this.contentOf(row) !== edited && !this.d.settings.get('versionsEnabled'))
            throw new SaveRefused(Messages.docserverSaveConflict);
          trashed = row.deletedAt !== null;
          return row;
        },
        by: { accountId: session.accountId, actor: { kind: 'docserver', id: null } },
        details: { loginId: actor.loginId, key: session.key },
        origin: { source: 'docserver', authorId: actor.loginId },
        room,
        during: (saved) => {
          if (!this.d.repo.recordSave(session.key, url, now)) throw new AlreadySaved();
          this.d.repo.moveTo(session.key, this.contentOf(saved), now);
          turn.commit();
        },
      });
      committed = true;
      this.d.events.item(
        actor,
        FileEventType.updated,
        updated,
        { size: updated.size, mimeType: updated.mimeType },
        {
          action: AuditActions.documentSave,
          details: { key: session.key, status: p.status, forcesavetype: p.forcesavetype ?? null },
        },
      );
      // Saved into the file where it lies, its content before kept as a version, but not where the editors think: say so, and stop auto-saving.
      if (trashed) {
        this.endSession(session.key);
        this.d.log.warn('edited document saved into a file in the trash', { key: session.key, status: p.status });
        return { error: 1, message: Messages.docserverSavedInTrash };
      }
      return { error: 0 };
    } catch (err) {
      if (err instanceof AlreadySaved) return { error: 0 };
      if (err instanceof Superseded) {
        this.d.log.info('an older edited version arrived after a newer one was saved; not saved over it', { key: session.key });
        // A repeat of this callback is then answered as saved, never downloaded and applied over the newer version.
        this.d.repo.recordSave(session.key, url, this.d.clock.now());
        return { error: 0 };
      }
      if (err instanceof SaveRefused) return refuse(err.message);
      // Quota (413) and the disk's reserve (507): the document server keeps the version and reports the failure.
      if (err instanceof AppError) return refuse(err.message);
      throw err;
    } finally {
      if (object && !committed) await this.d.uploads.discard([object]);
    }
  }

  /**
   * Fetches an edited version, only ever from the configured document server: the URL and every redirect
   * must have its scheme, host and port and carry no credentials, and a host name must not resolve to an
   * address no document server lives at (link-local metadata services, "this host", multicast).
   */
  private async downloadFromDocserver(url: string, docserverUrl: string): Promise<Response> {
    const allowed = new URL(docserverUrl);
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new SaveRefused('the download URL is not a URL');
    }
    for (let hop = 0; ; hop++) {
      if (target.origin !== allowed.origin)
        throw new SaveRefused(`the download URL ${target.origin} is not the document server (${allowed.origin})`);
      if (target.username || target.password) throw new SaveRefused('the download URL carries credentials');
      const hostProblem = await unfetchableHost(target.hostname);
      if (hostProblem) throw new SaveRefused(hostProblem);
      let res: Response;
      try {
        res = await fetch(target, { redirect: 'manual', signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
      } catch (err) {
        throw new SaveRefused(`the document server could not be reached for the download (${errorText(err)})`);
      }
      if (res.status >= 300 && res.status < 400 && res.headers.has('location')) {
        await res.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new SaveRefused('the document server redirected the download too many times');
        try {
          target = new URL(res.headers.get('location')!, target);
        } catch {
          throw new SaveRefused('the document server redirected the download to something that is not a URL');
        }
        continue;
      }
      if (res.status !== 200 || !res.body) {
        await res.body?.cancel();
        throw new SaveRefused(`the document server answered the download with HTTP ${res.status}`);
      }
      return res;
    }
  }

  /** A disabled account (deletion disables it first) neither serves its documents nor saves them. */
  private accountActive(accountId: string): boolean {
    const owner = this.d.users.authUser(accountId);
    return owner !== null && owner.disabledAt === null;
  }

  /** Who saved: the last editor the document server names when that login belongs to the account, else the owner. */
  private actorOf(session: DocumentKey, users: readonly string[] | undefined, ip: string): AuditPrincipal {
    for (const id of users ?? []) {
      const login = this.ownLogin(session, id);
      if (login) return { loginId: login.id, accountId: session.accountId, email: login.email, ip };
    }
    return { loginId: session.accountId, accountId: session.accountId, ip };
  }

  /**
   * Whether login `id`, named by the document server as editing, may change the file now, as opening it decided
   * then: enabled, holding Modify, and of the file's account or an editor of a share holding it.
   */
  private mayStillEdit(session: DocumentKey, id: string): boolean {
    const login = this.d.users.byId(id);
    if (!login || login.disabledAt !== null) return false;
    if (login.parentUserId !== null && !parsePermissions(login.permissions).has('files.edit')) return false;
    const account = login.parentUserId ?? login.id;
    return account === session.accountId || this.d.tree.editsShared(account, session.itemId);
  }

  /**
   * How a save finds room: the account's oldest versions go only when every editor the document server
   * names is one of its own logins; a member of a share (or nobody named) takes the free space.
   */
  private roomOf(session: DocumentKey, users: readonly string[] | undefined): 'evict' | 'free' {
    return users?.length && users.every((id) => this.ownLogin(session, id)) ? 'evict' : 'free';
  }

  /** The login `id` when it is the session's account's owner or one of its sub-users, else null. */
  private ownLogin(session: DocumentKey, id: string): User | null {
    const login = this.d.users.byId(id);
    return login && (login.id === session.accountId || login.parentUserId === session.accountId) ? login : null;
  }
}

/** The logins the document server last named as editing the session (callback status 1), none when it named nobody yet. */
function editorsOf(session: DocumentKey): string[] {
  try {
    const named: unknown = JSON.parse(session.editors ?? '[]');
    return Array.isArray(named) ? named.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

function secretOf(docserver: Docserver): Uint8Array {
  return new TextEncoder().encode(docserver.jwtSecret);
}

type Lookup = (host: string) => Promise<Array<{ address: string }>>;
const systemLookup: Lookup = (host) => dns.lookup(host, { all: true });

/**
 * Why a document server host must not be fetched from, or null: a host name that does not resolve, or
 * resolves to an address no document server lives at (a name rebound to a metadata service). An address
 * written in the URL is the admin's own choice.
 */
export async function unfetchableHost(hostname: string, lookup: Lookup = systemLookup): Promise<string | null> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return null;
  let addresses: Array<{ address: string }>;
  try {
    addresses = await lookup(host);
  } catch {
    return `the document server's host name ${host} does not resolve`;
  }
  const bad = addresses.find((a) => isNeverFetchedAddress(a.address));
  return bad ? `the document server's host name ${host} resolves to ${bad.address}` : null;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The download's bytes; a connection that breaks off (or times out) mid-way refuses the save rather than failing the callback. */
async function* brokenOffAsRefusal(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) yield chunk;
  } catch (err) {
    throw new SaveRefused(`the download from the document server broke off (${errorText(err)})`);
  }
}

function scheduleName(key: string): string {
  return `${SCHEDULE_PREFIX}${key}`;
}

/** The editor's language from the browser's first choice (`de`, `pt-BR`), else English. */
function languageOf(acceptLanguage: string | null | undefined): string {
  const first = acceptLanguage?.split(',')[0]?.split(';')[0]?.trim() ?? '';
  return /^[a-z]{2,3}(?:-[A-Za-z]{2,4})?$/i.test(first) ? first : 'en';
}

/** The command service's error codes, as its API documents them. */
function commandError(code: unknown): string {
  const meanings: Record<number, string> = {
    2: 'error 2 (callback URL not correct)',
    3: 'error 3 (internal server error)',
    5: 'error 5 (command not correct)',
    6: 'error 6 (invalid token: check that Coffer and the document server share the same JWT secret)',
  };
  return typeof code === 'number' ? (meanings[code] ?? `error ${code}`) : 'no error code in the answer';
}
