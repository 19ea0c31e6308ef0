import type { Command } from 'commander';
import {
  type Config,
  ENVIRONMENT_HELP,
  type ConfigFlags,
  parseReplicaDestination,
  type ReplicaDestination,
  withConfigFile,
} from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import type { RunningServer } from '../src/server.ts';
import { sdNotify } from '../src/lib/sd-notify.ts';
import { jitAtFullSpeed } from '../src/lib/jit-policy.ts';
import { action, addDataDirOption, configFrom } from './common.ts';

export function registerServe(program: Command): void {
  addDataDirOption(
    program
      .command('serve')
      .description('start the server (creates the data dir, database and secrets on first start)')
      .option('-p, --port <port>', 'port to listen on (env PORT, default 3000)')
      .option('-H, --host <host>', 'address to bind (env HOST, default 0.0.0.0)')
      .option('--default-storage-limit <size>', 'storage limit for accounts without their own, e.g. 50G (env COFFER_DEFAULT_STORAGE_LIMIT)')
      .option('--log-level <level>', 'debug, info, warn, error or silent (env LOG_LEVEL)')
      .option('--storage <driver>', 'where file contents go: local or s3 (env COFFER_STORAGE, default local; s3 reads the S3_* variables)')
      .option('--tls-cert <file>', 'serve HTTPS with this PEM certificate chain (env COFFER_TLS_CERT; needs --tls-key)')
      .option('--tls-key <file>', 'the PEM private key of --tls-cert (env COFFER_TLS_KEY)')
      .option(
        '--standby <dest>',
        'follow the replica at DEST (a directory or s3://bucket/prefix) and serve only /health until promoted (coffer promote); once promoted, start as the primary replicating to DEST',
      ),
  )
    .addHelpText('after', `\n${ENVIRONMENT_HELP}`)
    .action(
      action(async (opts: ConfigFlags & { standby?: string }) => {
        let config = configFrom(opts);
        if (opts.standby) {
          const dest = parseReplicaDestination(opts.standby, withConfigFile(process.env), process.cwd(), '--standby');
          const { promotedFrom } = await import('../src/services/maintenance/standby.ts');
          if (!promotedFrom(config, dest)) return standby(config, dest, opts.standby);
          config = { ...config, replication: { ...config.replication, destination: dest } };
        }
        let server: RunningServer | null = null;
        let requested: string | null = null;
        let signals = 0;
        const shutdown = (signal: string) => {
          if (++signals > 1) process.exit(1);
          requested = signal;
          if (!server) return;
          server.ctx.log.info('shutting down', { signal });
          notify(server, 'STOPPING=1');
          server.stop().then(
            () => process.exit(0),
            () => process.exit(1),
          );
        };
        // Registered before start-up, so a signal that arrives while starting still shuts down cleanly.
        process.on('SIGTERM', () => shutdown('SIGTERM'));
        process.on('SIGINT', () => shutdown('SIGINT'));
        // Loaded here, not at the top: every other command starts without the server's modules.
        const { startServer } = await import('../src/server.ts');
        // What loading the modules left is collected first, so start-up reuses that memory instead of growing the heap: 2–3 MiB of idle memory.
        Bun.gc(true);
        server = await startServer(config);
        if (opts.standby)
          server.ctx.log.info('this standby was promoted: serving as the primary, replicating to the replica it followed', {
            destination: opts.standby,
          });
        notify(server, `READY=1\nSTATUS=listening on ${server.url}`);
        jitAtFullSpeed();
        // Once idle, the runtime discards compiled code (what start-up ran once, most of it) and collects: 2–3 MiB of idle memory.
        Bun.shrink();
        if (requested) {
          signals = 0;
          shutdown(requested);
        }
      }),
    );
}

/**
 * A standby: follows the replica until promoted, then becomes the primary in the same process, on the same
 * port, replicating to the same destination under a new generation.
 */
async function standby(config: Config, dest: ReplicaDestination, destText: string): Promise<void> {
  jitAtFullSpeed();
  const [{ createStandby }, { standbyListener }, { startServer }] = await Promise.all([
    import('../src/services/maintenance/standby.ts'),
    import('../src/http/standby.ts'),
    import('../src/server.ts'),
  ]);
  const log = createLogger(config.logLevel, config.logFormat);
  const follower = createStandby(config, dest, log);
  await follower.start();
  let server: RunningServer | null = null;
  const listener = standbyListener({
    follower,
    host: config.host,
    port: config.port,
    promote: async () => {
      const status = await follower.promote();
      log.info('standby: promoted; starting as the primary', { generation: status.generation });
      // After the answer is on its way: the listener gives its port to the server.
      setTimeout(async () => {
        await listener.stop();
        const primary = await startServer({ ...config, port: listener.port, replication: { ...config.replication, destination: dest } });
        server = primary;
        notify(primary, `READY=1\nSTATUS=promoted; listening on ${primary.url}`);
        if (primary.ctx.driver.name === 'local') await reportMissingContents(primary);
      }, 50);
      return status;
    },
  });
  log.info('listening', { url: listener.url, dataDir: config.dataDir, standby: destText });
  const shutdown = async () => {
    await follower.stop();
    await listener.stop();
    await (server as RunningServer | null)?.stop();
    process.exit(0);
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

/** With local storage the replica brought the database, not the files: say which ones this box lacks. */
async function reportMissingContents(server: RunningServer): Promise<void> {
  const { missingObjects: missing } = await server.ctx.services.doctor.check();
  if (missing.count === 0) return;
  server.ctx.log.warn(
    'promoted with local storage: file contents missing on this box (copy blobs/ from the old primary, or keep files in S3)',
    {
      files: missing.count,
      examples: missing.items.slice(0, 10).map((m) => m.name),
    },
  );
}

/** Tells systemd (a Type=notify unit) how the server is doing; a failure is logged, never fatal. */
function notify(server: RunningServer, state: string): void {
  try {
    sdNotify(state);
  } catch (err) {
    server.ctx.log.error('could not notify systemd', { err: String(err) });
  }
}
