import type { Config } from './config.ts';
import { systemClock, type Clock } from './clock.ts';
import { createLogger, type Logger } from './log.ts';
import { acquireLock, dataPaths, prepareDataDir, requireDataDirOwner, requireExistingDataDir, type DataPaths } from './data-dir.ts';
import { StartupError } from './errors.ts';
import { followSecretsFile, loadSecrets } from './storage/secrets-file.ts';
import { closeDatabase, openDatabase, type Db } from './db/client.ts';
import { migrate, DatabaseTooNewError } from './db/migrate.ts';
import { createRepos, type Repos } from './db/repos/index.ts';
import type { Keyring } from './storage/keyring.ts';
import type { StorageDriver } from './storage/driver.ts';
import { cleanupTempFiles } from './storage/local.ts';
import { createDriver } from './storage/drivers.ts';
import { SealedStore } from './storage/sealed.ts';
import { JobQueue } from './jobs/queue.ts';
import { JobRegistry } from './jobs/registry.ts';
import { Schedules } from './jobs/schedules.ts';
import { EventHub } from './events/hub.ts';
import { Presence } from './events/presence.ts';
import { registerJobHandlers } from './jobs/handlers/index.ts';
import { createServices, type Services } from './services/index.ts';

/** Everything a service, route, job handler or CLI command needs, built once per process. */
export interface CoreContext {
  /** Unique per context: seeds the Elysia plugins so two servers in one process never share hooks. */
  instanceId: string;
  config: Config;
  paths: DataPaths;
  clock: Clock;
  log: Logger;
  db: Db;
  /** One repository per table group: the only code that holds SQL. */
  repos: Repos;
  jwtSecret: Uint8Array;
  keyring: Keyring;
  driver: StorageDriver;
  storage: SealedStore;
  queue: JobQueue;
  registry: JobRegistry;
  schedules: Schedules;
  hub: EventHub;
  /** Heartbeats of browser sessions and desktop clients (online = seen within 3 minutes; clients 5). */
  presence: Presence;
}

export interface AppContext extends CoreContext {
  services: Services;
  /** Releases the data-dir lock (server) and closes the database. */
  close(): void;
}

// Desktop clients count as active for 5 minutes, longer than a session's 3; keep entries for the longer.
const PRESENCE_TTL_MS = 5 * 60_000;

export interface OpenOptions {
  /** `server` owns the data dir (lock, temp clean-up); `cli` opens it beside a running server. */
  mode: 'server' | 'cli';
  clock?: Clock;
  logger?: Logger;
  /** `coffer storage migrate` opens the data dir with either location and checks it itself. */
  skipLocationCheck?: boolean;
}

export function openContext(config: Config, opts: OpenOptions): AppContext {
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
    const db = openDatabase(paths.database);
    try {
      migrate(db);
    } catch (err) {
      closeDatabase(db);
      if (err instanceof DatabaseTooNewError) throw new StartupError(err.message);
      throw err;
    }
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
      instanceId: crypto.randomUUID(),
      config,
      paths,
      clock,
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
    const services = createServices(core, repos);
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
    return ctx;
  } catch (err) {
    release();
    throw err;
  }
}
