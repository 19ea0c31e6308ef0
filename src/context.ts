import type { Db } from './db/client.ts';
import type { JobRegistry } from './jobs/registry.ts';
import type { Services } from './services/index.ts';
import type { Infrastructure } from './services/infrastructure.ts';

/** Everything a service, route, job handler or CLI command needs, built once per process by `openContext`. */
export interface CoreContext extends Infrastructure {
  /** Unique per context: seeds the Elysia plugins so two servers in one process never share hooks. */
  instanceId: string;
  db: Db;
  registry: JobRegistry;
}

export interface AppContext extends CoreContext {
  services: Services;
  /** Releases the data-dir lock (server) and closes the database. */
  close(): void;
}
