import fs from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import type { Clock } from '../../src/clock.ts';
import type { Logger } from '../../src/log.ts';
import { TestClient } from './client.ts';
import { tempDir } from './run-root.ts';
import { sharedTestS3, suiteStorage } from './s3.ts';

// Under the run's root (test/helpers/run-root.ts), so a killed run's dirs are removed by the next.
export { tempDir };

export interface TestServer {
  url: string;
  dataDir: string;
  server: RunningServer;
  client(): TestClient;
  /**
   * Stops and starts again on the same data dir: on a new port, or with `samePort` on the same one (so
   * clients that were connected see the server go away and come back); `whileDown` runs in between.
   */
  restart(opts?: { samePort?: boolean; whileDown?: () => Promise<unknown> }): Promise<void>;
  stop(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** When false the worker does not poll; tests call server.worker.drain(). Default true. */
  startWorker?: boolean;
  dataDir?: string;
  /** Where the server listens (default loopback); `0.0.0.0` as install.sh runs it. */
  host?: string;
  /** Receives the server's log lines (default: LOG_LEVEL, silent in tests). */
  logger?: Logger;
}

/**
 * Starts the real server (the same startServer as `coffer serve`) on a random port and a temp data dir.
 * Its disk reserve is 16 MiB rather than 512, so the suite runs on a machine with little free space, and
 * its password-hash budget is raised: every test signs in from loopback (test/api/accounts/signin-limits.test.ts sets its own).
 * With COFFER_STORAGE=s3 in the environment it stores objects in a test S3 server instead of the data dir.
 */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? tempDir();
  // With COFFER_STORAGE=s3 every server a suite starts keeps its objects in the test S3 server, under its own prefix.
  const storageEnv = suiteStorage === 's3' && !opts.env?.COFFER_STORAGE ? (await sharedTestS3()).env() : {};
  const boot = (port = 0) =>
    startServer(
      loadConfig(
        { port, host: opts.host ?? '127.0.0.1', dataDir },
        { LOG_LEVEL: 'silent', COFFER_MIN_FREE_BYTES: '16M', COFFER_PASSWORD_HASH_RATE_LIMIT: '1000000', ...storageEnv, ...opts.env },
      ),
      {
        clock: opts.clock,
        logger: opts.logger,
        startWorker: opts.startWorker,
      },
    );
  const t: TestServer = {
    url: '',
    dataDir,
    server: await boot(),
    client: () => new TestClient(t.url),
    async restart(opts = {}) {
      const port = t.server.port;
      await t.server.stop({ graceMs: opts.samePort ? 100 : undefined });
      // Back up even when a check while down fails, so the file's later tests still have a server.
      try {
        await opts.whileDown?.();
      } finally {
        t.server = await boot(opts.samePort ? port : 0);
        t.url = t.server.url;
      }
    },
    async stop() {
      await t.server.stop({ graceMs: 1000 });
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  t.url = t.server.url;
  return t;
}
