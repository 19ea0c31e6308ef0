import type { ApiBody, ApiQuery } from '../../src/contract/api.ts';
import type { Item, JobStatus, Photo, ProgressLine, QueuedJob, ThumbnailSize } from '../../src/contract/files.ts';
import { ApiError, call, page, send, urlOf } from '../app/api.ts';

type Opts = { signal?: AbortSignal };

/** Polls a background job until it is done; failures carry the server's message. */
async function waitForJob(jobId: string, signal?: AbortSignal): Promise<JobStatus> {
  for (let delay = 250; ; delay = Math.min(delay * 1.5, 2000)) {
    const res = await send('GET /api/files/jobs/:jobId', { params: { jobId }, signal });
    const status = (await res.json()) as JobStatus;
    if (res.status === 200) return status;
    await new Promise((r) => setTimeout(r, delay));
  }
}

/**
 * Trash or restore with the server's NDJSON progress (docs/api.md › Progress streaming); a tree too big for
 * the web process comes back as a queued job, which is then awaited.
 */
async function withProgress(
  key: 'POST /api/files/delete' | 'POST /api/files/trash/restore',
  ids: string[],
  onProgress: (done: number, total: number) => void,
): Promise<string> {
  const res = await send(key, { body: { ids }, headers: { Accept: 'application/x-ndjson' } });
  if (res.status === 202) {
    const queued = (await res.json()) as QueuedJob;
    const done = await waitForJob(queued.jobId);
    return `${done.result?.count ?? ids.length} items`;
  }
  if (!(res.headers.get('content-type') ?? '').includes('ndjson'))
    return String(((await res.json()) as { message?: string }).message ?? '');
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (value) buffer += value;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffer.slice(0, nl)) as ProgressLine;
      buffer = buffer.slice(nl + 1);
      if (line.type === 'progress') onProgress(line.done, line.total);
      else if (line.type === 'error') throw new ApiError(500, line.message);
      else return line.message;
    }
    if (done) throw new ApiError(500, 'The server stopped answering part-way; reload to see what was done.');
  }
}

/** The file API (docs/api.md › API reference, Upload rules): lists, changes, jobs, uploads' URLs, downloads. */
export const files = {
  list: (query: ApiQuery<'GET /api/files'>, opts: Opts = {}) => page('GET /api/files', { query, ...opts }),
  // Shared lists what is shared by link and with people.
  collection: (name: 'starred' | 'shared' | 'trash', query: ApiQuery<'GET /api/files/starred'>, opts: Opts = {}) =>
    name === 'shared'
      ? page('GET /api/files/shared', { query: { ...query, include: 'people' }, ...opts })
      : page(`GET /api/files/${name}`, { query, ...opts }),
  /** One page of the Photos view, newest taken first; `nextCursor` continues it. */
  photos: async (query: ApiQuery<'GET /api/files/photos'>, opts: Opts = {}) => {
    const res = await send('GET /api/files/photos', { query, ...opts });
    return { items: (await res.json()) as Photo[], nextCursor: res.headers.get('X-Next-Cursor') };
  },
  recent: (limit: number, opts: Opts = {}) => call('GET /api/files/recent', { query: { limit }, ...opts }),
  search: (q: string, limit: number, opts: Opts & { includeShared?: boolean } = {}) =>
    call('GET /api/files/search', {
      query: { q, limit, ...(opts.includeShared ? { includeShared: 'true' as const } : {}) },
      signal: opts.signal,
    }),
  /** Names and, when the admin turned content search on, text (docs/search.md); hits in the text carry `match: 'content'`. */
  searchWithContent: (q: string, limit: number, opts: Opts = {}) =>
    call('GET /api/files/search', { query: { q, limit, content: 'true', includeShared: 'true' }, signal: opts.signal }),
  stats: () => call('GET /api/files/stats'),
  info: (id: string) => call('GET /api/files/:id/info', { params: { id } }),
  createFolder: (body: ApiBody<'POST /api/files/folder'>) => call('POST /api/files/folder', { body }),
  move: (body: ApiBody<'POST /api/files/move'>) => call('POST /api/files/move', { body }),
  rename: (body: ApiBody<'POST /api/files/rename'>) => call('POST /api/files/rename', { body }),
  star: (body: ApiBody<'POST /api/files/star'>) => call('POST /api/files/star', { body }),
  copy: (body: ApiBody<'POST /api/files/copy'>) => call('POST /api/files/copy', { body }),
  waitForJob,
  trash: (ids: string[], onProgress: (done: number, total: number) => void) => withProgress('POST /api/files/delete', ids, onProgress),
  restore: (ids: string[], onProgress: (done: number, total: number) => void) =>
    withProgress('POST /api/files/trash/restore', ids, onProgress),
  deleteForever: (ids: string[]) => call('POST /api/files/trash/delete', { body: { ids } }),
  emptyTrash: () => call('POST /api/files/trash/empty'),
  checkUpload: (fileSize: number, parentId: string | null) =>
    call('POST /api/files/upload/check', { body: parentId ? { fileSize, parentId } : { fileSize } }),
  storage: () => call('GET /api/user/storage'),
  /** Multipart uploads go over XMLHttpRequest (its progress events): these are their URLs. */
  uploadUrl: (to: { replaceId?: string; bulk?: boolean }) =>
    to.replaceId
      ? urlOf('POST /api/files/:id/replace', { id: to.replaceId })
      : urlOf(to.bulk ? 'POST /api/files/upload/bulk' : 'POST /api/files/upload'),
  tusEndpoint: urlOf('POST /api/files/tus'),
  /** The file a finished resumable upload made, from the upload's URL (`.../tus/<id>`). */
  tusResult: (uploadUrl: string) =>
    call('GET /api/files/tus/:uploadId', { params: { uploadId: uploadUrl.slice(uploadUrl.lastIndexOf('/') + 1) } }),
  eventsUrl: urlOf('GET /api/files/events'),
  // A photo reached through an album comes through the album's door (another account's file is 404 by its own).
  downloadUrl: (item: Pick<Item, 'id'> & { albumId?: string | undefined }) =>
    item.albumId
      ? urlOf('GET /api/albums/:id/items/:itemId/download', { id: item.albumId, itemId: item.id })
      : urlOf('GET /api/files/:id/download', { id: item.id }),
  /** Cached for good by the browser: `v` (the content's time and size) makes new content a new URL. */
  // A photo reached only through an album shared with the account comes through the album's door.
  thumbnailUrl: (item: Pick<Item, 'id' | 'modified' | 'size'> & { albumId?: string }, size: ThumbnailSize = 'small') => {
    const query = { size, v: `${Date.parse(item.modified).toString(36)}-${item.size ?? 0}` };
    return item.albumId
      ? urlOf('GET /api/albums/:id/items/:itemId/thumbnail', { id: item.albumId, itemId: item.id }, query)
      : urlOf('GET /api/files/:id/thumbnail', { id: item.id }, query);
  },
  /** A form posts here so the browser's download manager, not page memory, holds the ZIP. */
  zipUrl: urlOf('POST /api/files/download/bulk'),
  editorUrl: (item: Pick<Item, 'id'>) => urlOf('GET /api/docserver/viewer/:id', { id: item.id }),
  activity: (query: ApiQuery<'GET /api/activity'>, opts: Opts = {}) => call('GET /api/activity', { query, ...opts }),
  activityPeople: (opts: Opts = {}) => call('GET /api/activity/people', { query: {}, ...opts }),
  versions: (id: string) => call('GET /api/files/:id/versions', { params: { id } }).then((r) => r.versions),
  versionDownloadUrl: (id: string, versionId: string) => urlOf('GET /api/files/:id/versions/:versionId/download', { id, versionId }),
  restoreVersion: (id: string, versionId: string) => call('POST /api/files/:id/versions/:versionId/restore', { params: { id, versionId } }),
  deleteVersion: (id: string, versionId: string) => call('DELETE /api/files/:id/versions/:versionId', { params: { id, versionId } }),
};
