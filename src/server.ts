import type { Config } from './config.ts';
import { composeServer, type ServerOptions } from './composition.ts';
import type { AppContext } from './context.ts';
import type { Worker } from './jobs/worker.ts';
import { httpListener } from './listener.ts';
import { startAll, stopAll } from './lib/lifecycle.ts';
import { releasePageCache } from './db/client.ts';

export interface RunningServer {
  url: string;
  port: number;
  ctx: AppContext;
  worker: Worker;
  /** Stops accepting, lets in-flight requests finish (bounded), stops the worker, closes the database. */
  stop(opts?: { graceMs?: number }): Promise<void>;
}

/** Starts every lifecycle the composition root lists, in order; stopping walks the same list in reverse. */
export async function startServer(config: Config, opts: ServerOptions = {}): Promise<RunningServer> {
  const { ctx, worker, http, lifecycles } = composeServer(config, opts, httpListener);
  for (const warning of config.warnings) ctx.log.warn(warning);
  await startAll(lifecycles);
  for (const notice of ctx.services.settings.storedNotices()) ctx.log.warn(notice);
  releasePageCache(ctx.db);
  let stopping: Promise<void> | null = null;
  return {
    url: http.url,
    port: http.port,
    ctx,
    worker,
    stop({ graceMs = 10_000 } = {}) {
      stopping ??= (async () => {
        await stopAll(lifecycles, graceMs);
        ctx.log.info('stopped');
      })();
      return stopping;
    },
  };
}
