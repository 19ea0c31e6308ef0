import { LibraryHostWrites } from './services/libraries/host-writes.ts';
import fs from 'node:fs';
import type { Config } from './config.ts';
import { RetentionClock, systemClock, type Clock } from './clock.ts';
import type { AppContext, CoreContext } from './context.ts';
import {
  acquireLock,
  type DataPaths,
  dataPaths,
  keepReserve,
  prepareDataDir,
  releaseReserveIfFull,
  requireDataDirOwner,
  requireExistingDataDir,
} from './data-dir.ts';
import { closeDatabase, type Db, openDatabase } from './db/client.ts';
import { DatabaseTooNewError, instanceIdOf } from './db/migrate.ts';
import { listUpgradeSnapshots, rollbackTo, type UpgradeSnapshot, upgradeDatabase } from './services/maintenance/upgrade.ts';
import { createRepos } from './db/repos/index.ts';
import { StartupError } from './errors.ts';
import { EventHub } from './events/hub.ts';
import { Presence } from './events/presence.ts';
import { ensureSystemSchedules, registerJobHandlers } from './job-handlers/index.ts';
import { Jobs } from './jobs/catalog.ts';
import { JobQueue } from './jobs/queue.ts';
import { JobRegistry } from './jobs/registry.ts';
import { Schedules } from './jobs/schedules.ts';
import { Worker } from './jobs/worker.ts';
import type { Lifecycle } from './lib/lifecycle.ts';
import type { HttpListener } from './listener.ts';
import { createLogger, type Logger } from './log.ts';
import { createAccountsServices } from './services/accounts/index.ts';
import { createAdminServices } from './services/admin/index.ts';
import { createDavServices } from './services/dav/index.ts';
import { createDocserverServices } from './services/docserver/index.ts';
import { createFilesServices } from './services/files/index.ts';
import { createSharingServices } from './services/sharing/index.ts';
import { createVersionService } from './services/versions/index.ts';
import { hasThumbnailWith } from './services/thumbnails/formats.ts';
import { createLibraryServices } from './services/libraries/index.ts';
import type { Infrastructure } from './services/infrastructure.ts';
import { createMaintenanceServices } from './services/maintenance/index.ts';
import { createResumableUploadServices } from './services/resumable-uploads/index.ts';
import { createSearchServices } from './services/search/index.ts';
import { createSignOnServices } from './services/sign-on/index.ts';
import { createThumbnailServices } from './services/thumbnails/index.ts';
import { createWebhookServices } from './services/webhooks/index.ts';
import type { StorageDriver } from './storage/driver.ts';
import { createDriver, verifyDriver } from './storage/drivers.ts';
import { cleanupTempFiles } from './storage/local.ts';
import { SealedStore } from './storage/sealed.ts';
import { followSecretsFile, loadSecrets } from './storage/secrets-file.ts';

// Desktop clients count as active for 5 minutes, longer than a session's 3; keep entries for the longer.
const PRESENCE_TTL_MS = 5 * 60_000;

/** Each domain's services, wired in the order they build on each other, and the lifecycles each owns. */
function createServices(infra: Infrastructure) {
  const admin = createAdminServices(infra);
  const { audit, settings, adminOrigins, storageLocation } = admin.services;
  const hasThumbnail = hasThumbnailWith(infra.config.ffmpegPath !== null);
  const files = createFilesServices(infra, {
    audit,
    settings,
    storageLocation,
    hasThumbnail,
    makeVersions: (deps) => createVersionService(infra, settings, deps),
    libraryStaging: new LibraryHostWrites({ items: infra.repos.items, libraries: infra.repos.libraries }),
  });
  const versions = { versions: files.shared.versions };
  const { tree, views, events, changes, libraryFiles } = files.shared;
  const sharing = createSharingServices(infra, {
    audit,
    settings,
    tree,
    views,
    events,
    changes,
    items: files.services.items,
  });
  const thumbnails = createThumbnailServices(infra, {
    tree,
    libraryFiles,
    events,
    audit,
    settings,
    downloads: files.services.downloads,
  });
  const dav = createDavServices(infra, {
    audit,
    tree,
    settings,
    thumbnails: thumbnails.services.thumbnails,
    ...files.services,
    ...sharing.services,
    ...versions,
  });
  const accounts = createAccountsServices(infra, {
    audit,
    settings,
    davLocks: dav.shared.davLocks,
    events,
    ...files.services,
    ...sharing.services,
  });
  const signOn = createSignOnServices(infra, { audit, groups: sharing.services.groups, ...accounts.services });
  const docserver = createDocserverServices(infra, { audit, settings, adminOrigins, tree, events, ...files.services });
  const resumable = createResumableUploadServices(infra, {
    settings,
    tree,
    views,
    otherStaging: dav.services.chunkedUploads,
    ...files.services,
    ...sharing.services,
  });
  // A deleted sub-user's unfinished uploads end with it: nobody can finish them, and they hold the owner's quota.
  const endUploadsOf = (loginId: string, why: string) => {
    const ended = (err: unknown) => infra.log.warn(`could not end the uploads of a sub-user ${why}`, { err: String(err) });
    resumable.services.tusUploads.endLogin(loginId).catch(ended);
    dav.services.chunkedUploads.endLogin(loginId).catch(ended);
  };
  accounts.services.subUsers.onRemoved((loginId) => endUploadsOf(loginId, 'deleted'));
  // So do those of one that may no longer upload: it could neither finish nor cancel them (403), and their room stays taken.
  accounts.services.subUsers.onPermissionsTaken((loginId, taken) => {
    if (taken.includes('files.upload')) endUploadsOf(loginId, 'no longer allowed to upload');
  });
  // A member's chunked upload into an account deleted meanwhile can never land there, and holds its bytes on the disk.
  accounts.services.users.onPurged((accountId) => {
    // Its logins' uploads into other accounts' shared folders can never finish, and hold those owners' quota.
    resumable.services.tusUploads
      .endGoneLogins()
      .catch((err) => infra.log.warn('could not end the resumable uploads of a deleted account', { err: String(err) }));
    dav.services.chunkedUploads
      .endRoom(accountId)
      .catch((err) => infra.log.warn('could not end the chunked uploads reserved in a deleted account', { err: String(err) }));
  });
  const maintenance = createMaintenanceServices(infra, {
    audit,
    settings,
    metrics: admin.services.metrics,
    ...files.services,
    ...resumable.services,
    chunkedUploads: dav.services.chunkedUploads,
  });
  const search = createSearchServices(infra, { settings, views, tree, libraryFiles, events, items: files.services.items });
  const libraries = createLibraryServices(infra, {
    audit,
    events,
    members: sharing.services.members,
    shares: sharing.services.shares,
    changes: files.services.changes,
  });
  // What a scan indexes gets its thumbnails and text as uploads do: queued, in the background.
  libraries.services.libraries.onIndexed(() => {
    thumbnails.services.thumbnails.libraryChanged();
    search.services.contentSearch.wake();
  });
  const webhooks = createWebhookServices(infra, {
    tree,
    accounts: accounts.services.accounts,
    scheduledBackups: maintenance.services.scheduledBackups,
    notifications: sharing.services.notifications,
    shares: sharing.services.shares,
    changes: files.services.changes,
  });
  return {
    services: {
      ...admin.services,
      ...files.services,
      ...sharing.services,
      ...versions,
      ...thumbnails.services,
      ...dav.services,
      ...accounts.services,
      ...signOn.services,
      ...docserver.services,
      ...resumable.services,
      ...maintenance.services,
      ...search.services,
      ...libraries.services,
      ...webhooks.services,
    },
    lifecycles: {
      ...admin.lifecycles,
      ...files.lifecycles,
      ...thumbnails.lifecycles,
      ...signOn.lifecycles,
      ...resumable.lifecycles,
      ...maintenance.lifecycles,
      ...search.lifecycles,
      ...libraries.lifecycles,
      ...webhooks.lifecycles,
    },
  };
}

type DomainLifecycles = ReturnType<typeof createServices>['lifecycles'];

export interface OpenOptions {
  /** `server` owns the data dir (lock, temp clean-up); `cli` opens it beside a running server. */
  mode: 'server' | 'cli';
  clock?: Clock;
  logger?: Logger;
  /** `coffer storage migrate` opens the data dir with either location and checks it itself. */
  skipLocationCheck?: boolean;
}

/** Applies pending migrations; a database written by a newer version is a start-up error. */
function applyMigrations(db: Db, paths: DataPaths, announce?: (line: string) => void): string[] {
  try {
    return upgradeDatabase(db, paths, { announce }).applied;
  } catch (err) {
    if (err instanceof DatabaseTooNewError) throw new StartupError(err.message);
    throw err;
  }
}

/** `coffer init`: the data directory, secrets.json and the database, unless an instance is already there. */
export function createInstance(config: Config): { paths: DataPaths; created: boolean } {
  const paths = dataPaths(config.dataDir);
  requireDataDirOwner(paths.root);
  if (fs.existsSync(paths.database)) return { paths, created: false };
  prepareDataDir(paths);
  loadSecrets(config, paths);
  const db = openDatabase(paths.database);
  try {
    applyMigrations(db, paths);
  } finally {
    closeDatabase(db);
  }
  return { paths, created: true };
}

/** `coffer migrate`: applies pending migrations to an existing instance; the names of those applied. */
export function migrateInstance(config: Config): string[] {
  const paths = dataPaths(config.dataDir);
  requireDataDirOwner(paths.root);
  requireExistingDataDir(paths);
  const db = openDatabase(paths.database);
  try {
    return applyMigrations(db, paths, (line) => process.stderr.write(`coffer: ${line}\n`));
  } finally {
    closeDatabase(db);
  }
}

/** `coffer rollback`: the snapshots taken before upgrades, newest first. */
export function upgradeSnapshots(config: Config): { root: string; snapshotsDir: string; snapshots: UpgradeSnapshot[] } {
  const paths = dataPaths(config.dataDir);
  requireDataDirOwner(paths.root);
  requireExistingDataDir(paths);
  return { root: paths.root, snapshotsDir: paths.snapshots, snapshots: listUpgradeSnapshots(paths) };
}

/** `coffer rollback --to`: the snapshot put back, with the data directory locked (a running server refuses it). */
export function rollbackInstance(config: Config, snapshotDir: string): ReturnType<typeof rollbackTo> & { root: string } {
  const paths = dataPaths(config.dataDir);
  requireDataDirOwner(paths.root);
  requireExistingDataDir(paths);
  const release = acquireLock(paths);
  try {
    return { ...rollbackTo(paths, snapshotDir), root: paths.root };
  } finally {
    release();
  }
}

/** The database opened, or a full disk (its -shm index could not be made) said as such instead of `disk I/O error`. */
function openDatabaseOnItsDisk(paths: DataPaths): Db {
  try {
    return openDatabase(paths.database);
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'SQLITE_IOERR_SHMSIZE') throw err;
    throw new StartupError(
      `the disk of ${paths.root} is full: the database cannot be opened without a little free space (for ${paths.database}-shm); free some space on it, then start again`,
    );
  }
}

/** The composition root: data directory, repositories, then services, then job handlers (the server adds routes). */
function open(config: Config, opts: OpenOptions): { ctx: AppContext; lifecycles: DomainLifecycles } {
  const paths = dataPaths(config.dataDir);
  const isServer = opts.mode === 'server';
  requireDataDirOwner(paths.root);
  if (isServer) prepareDataDir(paths);
  else requireExistingDataDir(paths);
  const release = isServer ? acquireLock(paths) : () => {};
  try {
    const log = opts.logger ?? createLogger(config.logLevel, config.logFormat);
    const { jwtSecret, keyring } = loadSecrets(config, paths);
    followSecretsFile(config, paths, keyring, log);
    if (isServer && releaseReserveIfFull(paths))
      log.warn('the disk is full: the space kept for opening the database (coffer.reserve) was given to it', { dataDir: paths.root });
    const db = openDatabaseOnItsDisk(paths);
    try {
      applyMigrations(db, paths, (line) => {
        process.stderr.write(`coffer: ${line}\n`);
        log.info('database upgrade', { message: line });
      });
    } catch (err) {
      closeDatabase(db);
      throw err;
    }
    if (isServer) keepReserve(paths);
    const clock = opts.clock ?? systemClock;
    let driver: StorageDriver;
    try {
      driver = createDriver(config.storage, paths.blobs);
    } catch (err) {
      closeDatabase(db);
      throw err;
    }
    const repos = createRepos(db);
    // The CLI has no worker, but the server's worker picks up what it enqueues.
    const queue = new JobQueue(repos.jobs, clock, { available: !isServer });
    const core: CoreContext = {
      instanceId: instanceIdOf(db),
      config,
      paths,
      clock,
      retentionClock: new RetentionClock(clock, repos.jobs.lastFinishedAt(), log),
      log,
      db,
      repos,
      jwtSecret,
      keyring,
      driver,
      storage: new SealedStore(driver, keyring),
      queue,
      registry: new JobRegistry(),
      schedules: new Schedules(repos.jobs, queue, clock, (fn) => repos.transactions.immediate(fn)),
      hub: new EventHub(),
      presence: new Presence(clock, PRESENCE_TTL_MS),
    };
    const { services, lifecycles } = createServices(core);
    try {
      if (!opts.skipLocationCheck) services.storageLocation.check({ record: isServer });
    } catch (err) {
      closeDatabase(db);
      throw err;
    }
    if (isServer && driver.name === 'local') {
      cleanupTempFiles(paths.blobs, 0).catch((err: unknown) => log.warn('temp clean-up failed', { err: String(err) }));
    }
    let closed = false;
    const ctx: AppContext = {
      ...core,
      services,
      close() {
        if (closed) return;
        closed = true;
        closeDatabase(db);
        release();
      },
    };
    registerJobHandlers(ctx);
    return { ctx, lifecycles };
  } catch (err) {
    release();
    throw err;
  }
}

/** Opens a data directory for a CLI command or a test: everything but the worker and the routes. */
export function openContext(config: Config, opts: OpenOptions): AppContext {
  return open(config, opts).ctx;
}

export interface ServerOptions {
  clock?: Clock;
  logger?: Logger;
  /** Tests drive the worker with drain() and audit processing with audit.flush() instead of letting them poll. */
  startWorker?: boolean;
}

export interface ComposedServer {
  ctx: AppContext;
  worker: Worker;
  http: HttpListener;
  /** Started in this order, stopped in reverse. */
  lifecycles: Lifecycle[];
}

/**
 * The server: the context, its worker and its routes, and every start and stop in one list. The routes come from the
 * caller (src/server.ts), so a command that opens the data directory (openContext) loads neither them nor Elysia.
 */
export function composeServer(config: Config, opts: ServerOptions, httpListener: (ctx: AppContext) => HttpListener): ComposedServer {
  const { ctx, lifecycles: domain } = open(config, { mode: 'server', clock: opts.clock, logger: opts.logger });
  const worker = new Worker({
    queue: ctx.queue,
    registry: ctx.registry,
    clock: ctx.clock,
    concurrency: config.workerConcurrency,
    schedules: ctx.schedules,
    log: ctx.log,
  });
  const background = opts.startWorker !== false;
  const http = httpListener(ctx);
  // Stopping walks back from the listener: requests finish, then the worker, the audit log, and the database last.
  const lifecycles: Lifecycle[] = [
    { name: 'data directory', stop: () => ctx.close() },
    // Right after the database opens, and stopped just before it closes: every commit in between is shipped.
    domain.replication,
    { name: 'event streams', stop: () => ctx.hub.close() },
    domain.accessTimes,
    domain.masterKeys,
    { name: 'storage', start: () => verifyDriver(ctx.driver) },
    {
      name: 'job queue',
      start: () => {
        ctx.queue.recoverInterrupted();
        // No copy made in a request runs yet: those still recorded were cut short by a crash.
        ctx.queue.release(Jobs.copyGuard);
        ensureSystemSchedules(ctx);
      },
    },
    domain.uploadIntents,
    domain.interruptedTrash,
    domain.identityProvider,
    // Before the worker: an interrupted run is marked so before its job runs again.
    domain.scheduledBackups,
    // Tests that drive the worker themselves flush the audit log by hand too; stopping still writes what is queued.
    background ? domain.auditLog : { ...domain.auditLog, start: undefined },
    {
      name: 'worker',
      start: () => (background ? worker.start() : void (ctx.queue.available = true)),
      stop: (graceMs) => worker.stop(graceMs),
    },
    domain.thumbnails,
    http,
    // Stopped before the listener waits for requests to finish: desktop push sockets would hold it for its whole grace.
    { name: 'live connections', stop: () => ctx.hub.close() },
    domain.outsideChanges,
    domain.resumableUploads,
    domain.diskSpace,
    domain.contentIndexer,
    domain.libraryWatch,
    ...(background ? [domain.webhookDispatcher] : []),
  ];
  return { ctx, worker, http, lifecycles };
}
