import type { Command } from 'commander';
import { ENVIRONMENT_HELP, type ConfigFlags } from '../src/config.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { sdNotify } from '../src/lib/sd-notify.ts';
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
      .option('--tls-key <file>', 'the PEM private key of --tls-cert (env COFFER_TLS_KEY)'),
  )
    .addHelpText('after', `\n${ENVIRONMENT_HELP}`)
    .action(
      action(async (opts: ConfigFlags) => {
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
        server = await startServer(configFrom(opts));
        notify(server, `READY=1\nSTATUS=listening on ${server.url}`);
        if (requested) {
          signals = 0;
          shutdown(requested);
        }
      }),
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
