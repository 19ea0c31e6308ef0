import path from 'node:path';
import { BusyRounds } from '../../db/busy.ts';
import type { Lifecycle } from '../../lib/lifecycle.ts';
import type { DownloadService } from '../files/downloads.ts';
import type { FileEvents } from '../files/file-events.ts';
import type { LibraryFiles } from '../files/library-files.ts';
import type { Tree } from '../files/tree.ts';
import type { Infrastructure } from '../infrastructure.ts';
import { createHmac } from 'node:crypto';
import type { AuditService } from '../admin/audit.ts';
import type { SettingsService } from '../admin/settings.ts';
import { AlbumLinkService } from './album-links.ts';
import { AlbumService } from './albums.ts';
import { ThumbnailPool } from './pool.ts';
import { ThumbnailService } from './thumbnails.ts';
import { VideoFrames } from './video.ts';

/** How long after start the catch-up looks for files without thumbnails (after the first requests, not before). */
export const THUMBNAIL_CATCH_UP_DELAY_MS = 500;

export interface ThumbnailServices {
  thumbnails: ThumbnailService;
  albums: AlbumService;
  albumLinks: AlbumLinkService;
}

interface ThumbnailDeps {
  tree: Tree;
  libraryFiles: LibraryFiles;
  events: FileEvents;
  audit: AuditService;
  settings: SettingsService;
  downloads: DownloadService;
}

/** Thumbnails (the worker threads that make them, the service that stores, serves and removes them) and albums. */
export function createThumbnailServices(infra: Infrastructure, { tree, libraryFiles, events, audit, settings, downloads }: ThumbnailDeps) {
  const { config, clock, log, queue, storage, repos, paths } = infra;
  // libvips, embedded in the executable, is written out here once to be loaded.
  const pool = new ThumbnailPool(
    { cacheDir: path.join(paths.root, 'lib'), maxPixels: config.thumbnailMaxPixels },
    config.thumbnailConcurrency,
    log,
  );
  const thumbnails = new ThumbnailService({
    clock,
    log,
    queue,
    storage,
    items: repos.items,
    thumbnails: repos.thumbnails,
    attempts: repos.attempts,
    tree,
    libraries: repos.libraries,
    libraryFiles,
    pool,
    video: config.ffmpegPath ? new VideoFrames(config.ffmpegPath, config.thumbnailMaxPixels) : null,
  });
  // Uploads, replacements, copies and document saves: the sweep makes the new content's thumbnails. A file of a
  // type that has none is never a sweep source, so it queues no job (a job per 4 KiB upload: 17% of its CPU).
  events.onContentChange((mimeType) => {
    if (mimeType === null || thumbnails.canHave(mimeType)) thumbnails.requestSweep();
  });
  const albums = new AlbumService({ clock, transactions: repos.transactions, albums: repos.albums, users: repos.users, tree, thumbnails });
  const albumLinks = new AlbumLinkService({
    clock,
    transactions: repos.transactions,
    albums: repos.albums,
    users: repos.users,
    tree,
    thumbnails,
    albumService: albums,
    items: repos.items,
    downloads,
    settings,
    audit,
    // A key of its own, so an album link's unlock cookie can never pass for a file link's or a session's.
    unlockKey: createHmac('sha256', infra.jwtSecret).update('coffer album link unlock cookies').digest(),
  });
  const services: ThumbnailServices = { thumbnails, albums, albumLinks };
  let catchUp: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const lifecycles = {
    thumbnails: {
      name: 'thumbnails',
      // Files stored before thumbnails existed (an upgrade) are caught up with by the same throttled sweep,
      // looked for once the server answers: the query walks every item (10 ms on 100,000) and protects nothing.
      start: () => {
        stopped = false;
        catchUp = setTimeout(() => {
          // It writes (forgotten tries, the retry's job): a database busy at start makes it wait, not fail.
          new BusyRounds(log, 'thumbnail catch-up')
            .until(
              () => thumbnails.catchUp(),
              () => stopped,
            )
            .catch((err) => log.error('thumbnail catch-up failed', { err: err instanceof Error ? err.message : String(err) }));
        }, THUMBNAIL_CATCH_UP_DELAY_MS);
        catchUp.unref();
      },
      stop: () => {
        stopped = true;
        clearTimeout(catchUp);
        return thumbnails.close();
      },
    } satisfies Lifecycle,
  };
  return { services, lifecycles };
}
