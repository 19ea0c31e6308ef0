import type { Config } from '../config.ts';
import type { Clock, RetentionClock } from '../clock.ts';
import type { DataPaths } from '../data-dir.ts';
import type { Repos } from '../db/repos/index.ts';
import type { EventHub } from '../events/hub.ts';
import type { Presence } from '../events/presence.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Schedules } from '../jobs/schedules.ts';
import type { Logger } from '../log.ts';
import type { StorageDriver } from '../storage/driver.ts';
import type { Keyring } from '../storage/keyring.ts';
import type { SealedStore } from '../storage/sealed.ts';

/** What the domain services are built on: the repositories, storage, queue and events, never the database. */
export interface Infrastructure {
  config: Config;
  paths: DataPaths;
  clock: Clock;
  /** The time what retention deletes is measured against: it does not follow the clock's jumps forward. */
  retentionClock: RetentionClock;
  log: Logger;
  /** One repository per table group: the only code that holds SQL. */
  repos: Repos;
  jwtSecret: Uint8Array;
  keyring: Keyring;
  driver: StorageDriver;
  storage: SealedStore;
  queue: JobQueue;
  schedules: Schedules;
  hub: EventHub;
  /** Heartbeats of browser sessions and desktop clients (online = seen within 3 minutes; clients 5). */
  presence: Presence;
}
