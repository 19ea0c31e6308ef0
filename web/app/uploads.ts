import { computed, type Signal, signal } from '@preact/signals';
import { ApiError, OFFLINE_MESSAGE, refusalMessage } from './api.ts';
import type { Item } from '../../src/contract/files.ts';
import { formatSize } from './format.ts';
import { invalidateListings, type Listing } from './listings.ts';
import { maxUploadBytes } from './session.ts';
import { toast } from './toasts.ts';
import { api } from '../api/index.ts';

type UploadStatus = 'queued' | 'uploading' | 'done' | 'failed' | 'cancelled';

export interface UploadItem {
  id: number;
  file: File;
  /** Folder the upload goes into (null: My files). */
  parentId: string | null;
  /** `dir/sub/name.ext` for a file of a dropped or picked folder: the server recreates the folders. */
  relativePath?: string;
  /** Overwrite this existing file instead of adding a new one (Replace). */
  replaceId?: string;
  status: Signal<UploadStatus>;
  loaded: Signal<number>;
  /** Bytes per second, smoothed. */
  speed: Signal<number>;
  error: Signal<string | null>;
  /** False for a refusal no retry can fix (too large for this server). */
  retryable: boolean;
  abort?: () => void;
  /** A resumable upload's address once the server made it: Retry continues from what the server has. */
  resumeUrl?: string;
}

/**
 * How bytes reach the server: multipart for small files, the resumable tus endpoint for files above
 * 32 MiB (a replacement names its file in the metadata's replaceId), so a dropped connection or a
 * proxy's body limit costs a retry, not the file.
 */
interface UploadTransport {
  send(item: UploadItem, onProgress: (loaded: number) => void): { done: Promise<Item | null>; abort(): void };
}

const CONCURRENCY = 2;
const RESUMABLE_ABOVE = 32 * 1024 * 1024;
// Under the 100 MB request cap of common proxies and tunnels; a dropped chunk costs at most this much again.
const RESUMABLE_CHUNK = 50 * 1024 * 1024;
// Waits between tries of a chunk that failed for a reason a retry can fix (offline, a restart, 5xx, 423).
const RESUMABLE_RETRIES = [0, 1000, 3000, 5000, 10_000, 20_000, 30_000];

/** Multipart over XMLHttpRequest: the one browser API that reports upload progress. */
const multipartTransport: UploadTransport = {
  send(item, onProgress) {
    const xhr = new XMLHttpRequest();
    const form = new FormData();
    const url = api.files.uploadUrl({ replaceId: item.replaceId, bulk: Boolean(item.relativePath) });
    // Fields go before the file: the server streams the file as it arrives and must know where it goes.
    if (!item.replaceId) {
      if (item.parentId) form.append('parentId', item.parentId);
      if (item.relativePath) form.append('relativePaths', item.relativePath);
      form.append('lastModifiedTimes', String(item.file.lastModified));
    }
    form.append(item.relativePath && !item.replaceId ? 'files' : 'file', item.file, item.file.name);
    const done = new Promise<Item | null>((resolve, reject) => {
      xhr.upload.onprogress = (e) => onProgress(e.loaded);
      xhr.onload = () => {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(xhr.responseText) as Record<string, unknown>;
        } catch {
          // Not JSON: the status says enough.
        }
        if (xhr.status >= 200 && xhr.status < 300) {
          const failed = (body.failed as { error: string }[] | undefined)?.[0];
          if (failed) reject(new ApiError(400, failed.error));
          else resolve(((body.files as Item[] | undefined)?.[0] ?? body) as Item);
        } else
          reject(
            new ApiError(
              xhr.status,
              refusalMessage(xhr.status, body, xhr.getResponseHeader('Retry-After'), `Upload failed (${xhr.status})`),
              body,
            ),
          );
      };
      xhr.onerror = () => reject(new ApiError(0, OFFLINE_MESSAGE));
      xhr.onabort = () => reject(new DOMException('cancelled', 'AbortError'));
    });
    xhr.open('POST', url);
    xhr.send(form);
    return { done, abort: () => xhr.abort() };
  },
};

/** The server's answer to a failed tus request, as the user's message. */
function tusError(
  err: Error & { originalResponse?: { getStatus(): number; getBody(): string; getHeader(name: string): string | undefined } | null },
): ApiError {
  const res = err.originalResponse;
  if (!res) return new ApiError(0, OFFLINE_MESSAGE);
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(res.getBody()) as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  const status = res.getStatus();
  return new ApiError(status, refusalMessage(status, body, res.getHeader('Retry-After') ?? null, `Upload failed (${status})`), body);
}

/**
 * tus-js-client on /api/files/tus, loaded only when a large file is uploaded. Cancel ends the upload on
 * the server (its reservation and stored bytes go); a failure keeps its address for Retry. Nothing is
 * kept in localStorage: resuming works for as long as the page is open.
 */
const resumableTransport: UploadTransport = {
  send(item, onProgress) {
    let upload: import('tus-js-client').Upload | null = null;
    let cancelled = false;
    let reject!: (err: Error) => void;
    const done = new Promise<Item | null>((resolve, fail) => {
      reject = fail;
      void import('tus-js-client').then(({ Upload }) => {
        if (cancelled) return;
        const metadata: Record<string, string> = {
          filename: item.file.name,
          filetype: item.file.type,
          lastModified: String(item.file.lastModified),
        };
        if (item.parentId) metadata.parentId = item.parentId;
        if (item.relativePath) metadata.relativePath = item.relativePath;
        if (item.replaceId) metadata.replaceId = item.replaceId;
        upload = new Upload(item.file, {
          endpoint: api.files.tusEndpoint,
          uploadUrl: item.resumeUrl ?? null,
          chunkSize: RESUMABLE_CHUNK,
          retryDelays: RESUMABLE_RETRIES,
          storeFingerprintForResuming: false,
          metadata,
          onUploadUrlAvailable: () => {
            item.resumeUrl = upload?.url ?? undefined;
          },
          onProgress: (sent) => onProgress(sent),
          onError: (err) => {
            // An upload the server no longer knows (expired, ended) starts over on the next Retry.
            if ([404, 410].includes(tusError(err).status)) item.resumeUrl = undefined;
            fail(tusError(err));
          },
          onSuccess: ({ lastResponse }) => {
            const url = item.resumeUrl;
            item.resumeUrl = undefined;
            if (!lastResponse.getHeader('Upload-Item-Id') || !url) return resolve(null);
            api.files.tusResult(url).then(
              (r) => resolve(r?.item ?? null),
              () => resolve(null),
            );
          },
        });
        upload.start();
      }, fail);
    });
    return {
      done,
      abort: () => {
        cancelled = true;
        item.resumeUrl = undefined;
        // Terminates the upload on the server: its reservation and stored bytes go.
        void upload?.abort(true).catch(() => {});
        reject(new DOMException('cancelled', 'AbortError'));
      },
    };
  },
};

const transportFor = (item: UploadItem): UploadTransport => (item.file.size > RESUMABLE_ABOVE ? resumableTransport : multipartTransport);

export const uploads = signal<UploadItem[]>([]);
export const activeUploads = computed(() => uploads.value.filter((u) => u.status.value === 'queued' || u.status.value === 'uploading'));

let nextId = 1;
let refreshTimer: ReturnType<typeof setTimeout> | null = null;
const refreshSoon = () => {
  if (refreshTimer === null)
    refreshTimer = setTimeout(() => {
      refreshTimer = null;
      invalidateListings();
    }, 300);
};

const topDir = (u: UploadItem) => (u.relativePath?.includes('/') ? `${u.parentId}:${u.relativePath.split('/')[0]}` : null);
// Folders of a tree exist once one of their files has arrived; until then, one file per tree at a time
// so two requests never both create the same folder.
const createdDirs = new Set<string>();

function pump(): void {
  const list = uploads.value;
  let running = list.filter((u) => u.status.value === 'uploading');
  for (const u of list) {
    if (running.length >= CONCURRENCY) break;
    if (u.status.value !== 'queued') continue;
    const dir = topDir(u);
    if (
      dir &&
      !createdDirs.has(u.parentId + ':' + (u.relativePath ?? '').split('/').slice(0, -1).join('/')) &&
      running.some((r) => topDir(r) === dir)
    )
      continue;
    start(u);
    running = [...running, u];
  }
}

function start(u: UploadItem): void {
  u.status.value = 'uploading';
  u.error.value = null;
  u.loaded.value = 0;
  u.speed.value = 0;
  let lastAt = performance.now();
  let lastLoaded = 0;
  const { done, abort } = transportFor(u).send(u, (loaded) => {
    const now = performance.now();
    if (now - lastAt > 200) {
      const rate = ((loaded - lastLoaded) * 1000) / (now - lastAt);
      u.speed.value = u.speed.value ? u.speed.value * 0.7 + rate * 0.3 : rate;
      lastAt = now;
      lastLoaded = loaded;
    }
    u.loaded.value = loaded;
  });
  u.abort = abort;
  done
    .then(() => {
      u.loaded.value = u.file.size;
      u.status.value = 'done';
      if (u.relativePath) {
        const parts = u.relativePath.split('/').slice(0, -1);
        for (let i = 1; i <= parts.length; i++) createdDirs.add(`${u.parentId}:${parts.slice(0, i).join('/')}`);
      }
      refreshSoon();
    })
    .catch((err: Error) => {
      if (err.name === 'AbortError') u.status.value = 'cancelled';
      else {
        u.status.value = 'failed';
        u.error.value = err.message;
      }
    })
    .finally(() => {
      u.abort = undefined;
      pump();
    });
}

export function cancelUpload(u: UploadItem): void {
  if (u.status.value === 'uploading') u.abort?.();
  else if (u.status.value === 'queued') u.status.value = 'cancelled';
  pump();
}

export function retryUpload(u: UploadItem): void {
  if (u.status.value !== 'failed' && u.status.value !== 'cancelled') return;
  u.status.value = 'queued';
  u.error.value = null;
  pump();
}

export function clearFinished(): void {
  uploads.value = uploads.value.filter((u) => u.status.value === 'queued' || u.status.value === 'uploading');
}

export function cancelAll(): void {
  for (const u of activeUploads.value) cancelUpload(u);
}

export interface NewUpload {
  file: File;
  relativePath?: string;
}

/** Chooses Replace or Keep both for a name that exists; `all` applies the choice to the rest. */
export type ConflictChoice = { replace: boolean; all: boolean };
export type ConflictAsker = (name: string, remaining: number) => Promise<ConflictChoice | null>;

/** Existing files in the target folder with the names about to be uploaded. */
async function existingByName(parentId: string | null, names: string[], listing: Listing | null): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  const wanted = new Set(names.map((n) => n.toLowerCase()));
  if (listing?.complete) {
    for (const i of listing.items.value) if (i.type === 'file' && wanted.has(i.name.toLowerCase())) found.set(i.name.toLowerCase(), i);
    return found;
  }
  for (const name of wanted) {
    const hits = await api.files.search(name, 20);
    const hit = hits.find((i) => i.type === 'file' && i.parentId === parentId && i.name.toLowerCase() === name);
    if (hit) found.set(name, hit);
  }
  return found;
}

function makeItem(n: NewUpload, parentId: string | null): UploadItem {
  return {
    id: nextId++,
    file: n.file,
    parentId,
    relativePath: n.relativePath,
    status: signal<UploadStatus>('queued'),
    loaded: signal(0),
    speed: signal(0),
    error: signal<string | null>(null),
    retryable: true,
  };
}

/**
 * Creates folders by path under `parentId` (`a/b/c`, as `mkdir -p` does), reusing a folder that has the
 * name already, as the bulk upload does with relative paths: a dropped tree keeps its empty folders.
 */
async function makeFolders(paths: string[], parentId: string | null): Promise<void> {
  const made = new Map<string, string | null>([['', parentId]]);
  for (const path of [...paths].sort()) {
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const here = parts.slice(0, i).join('/');
      if (made.has(here)) continue;
      const parent = made.get(parts.slice(0, i - 1).join('/')) ?? null;
      const name = parts[i - 1]!;
      const hits = await api.files.search(name, 100);
      const existing = hits.find((h) => h.type === 'folder' && h.parentId === parent && h.name.toLowerCase() === name.toLowerCase());
      made.set(here, existing?.id ?? (await api.files.createFolder({ name, parentId: parent })).id);
    }
  }
}

/**
 * Queues files for a folder: refuses what exceeds the server's maximum or the quota with a sentence
 * that says why, asks about names that exist, then uploads in the background while the user moves on.
 * `folders` are the empty folders of a dropped tree, made before its files arrive.
 */
export async function enqueueUploads(
  files: NewUpload[],
  parentId: string | null,
  opts: { listing?: Listing | null; askConflict: ConflictAsker; folders?: string[] },
): Promise<void> {
  if (!files.length && !opts.folders?.length) return;
  const max = maxUploadBytes.value;
  const fits: NewUpload[] = [];
  const refused: UploadItem[] = [];
  for (const f of files) {
    if (max !== null && f.file.size > max) {
      const item = makeItem(f, parentId);
      item.status.value = 'failed';
      item.retryable = false;
      item.error.value = `${formatSize(f.file.size)} is more than the ${formatSize(max)} this server accepts per file. Ask your administrator to raise the limit.`;
      refused.push(item);
    } else fits.push(f);
  }
  if (refused.length)
    toast(`${refused.length === 1 ? `“${refused[0]!.file.name}” is` : `${refused.length} files are`} too large to upload here.`, {
      kind: 'error',
    });
  const total = fits.reduce((n, f) => n + f.file.size, 0);
  try {
    if (fits.length) await api.files.checkUpload(total, parentId);
  } catch (err) {
    toast(`Not uploaded: ${(err as Error).message}`, { kind: 'error' });
    uploads.value = [...uploads.value, ...refused];
    return;
  }
  const loose = fits.filter((f) => !f.relativePath);
  const existing = loose.length
    ? await existingByName(
        parentId,
        loose.map((f) => f.file.name),
        opts.listing ?? null,
      )
    : new Map<string, Item>();
  const items: UploadItem[] = [];
  let always: boolean | null = null;
  let conflictsLeft = loose.filter((f) => existing.has(f.file.name.toLowerCase())).length;
  for (const f of fits) {
    const item = makeItem(f, parentId);
    const clash = f.relativePath ? undefined : existing.get(f.file.name.toLowerCase());
    if (clash) {
      let replace = always;
      if (replace === null) {
        const choice = await opts.askConflict(f.file.name, conflictsLeft);
        if (!choice) {
          conflictsLeft--;
          continue;
        }
        replace = choice.replace;
        if (choice.all) always = choice.replace;
      }
      conflictsLeft--;
      if (replace) item.replaceId = clash.id;
    }
    items.push(item);
  }
  if (opts.folders?.length) {
    try {
      await makeFolders(opts.folders, parentId);
      refreshSoon();
    } catch (err) {
      toast(`Empty folders of the drop were not made: ${(err as Error).message}`, { kind: 'error' });
    }
  }
  uploads.value = [...uploads.value, ...refused, ...items];
  pump();
}
