import dns from 'node:dns/promises';
import os from 'node:os';
import fs from 'node:fs';
import type { Config } from './config.ts';
import { isCidr, isIpAddress, isLoopback } from './lib/ip.ts';
import type { Clock } from './clock.ts';
import type { Logger } from './log.ts';
import { openContext, type AppContext } from './context.ts';
import { createApp } from './app.ts';
import { lastResortErrorHandler } from './http/plugins/core.ts';
import { Worker } from './jobs/worker.ts';
import { StartupError } from './errors.ts';
import { ensureSystemSchedules } from './jobs/handlers/index.ts';
import { verifyDriver } from './storage/drivers.ts';

export interface RunningServer {
  url: string;
  port: number;
  ctx: AppContext;
  worker: Worker;
  /** Stops accepting, lets in-flight requests finish (bounded), stops the worker, closes the database. */
  stop(opts?: { graceMs?: number }): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  logger?: Logger;
  /** Tests drive the worker with drain() and audit processing with audit.flush() instead of letting them poll. */
  startWorker?: boolean;
}

// Uploads up to the 100 GiB setting plus multipart framing must not be cut off by Bun's default 128 MiB.
const MAX_REQUEST_BODY = 101 * 1024 ** 3;

/** Known proxies are read once at start (SPEC: changing them needs a restart); hostnames are resolved now. */
async function resolveKnownProxies(ctx: AppContext): Promise<string[]> {
  const out: string[] = [];
  for (const entry of ctx.services.settings.get('knownProxies')) {
    if (isIpAddress(entry) || isCidr(entry)) {
      out.push(entry);
      continue;
    }
    try {
      for (const { address } of await dns.lookup(entry, { all: true })) out.push(address);
    } catch {
      ctx.log.warn('known proxy hostname does not resolve; ignored', { host: entry });
    }
  }
  return out;
}

/** The addresses people on the network can open, for the first-run line: the bound one, or each interface's. */
function reachableUrls(host: string, port: number, scheme: string): string[] {
  const hosts =
    host === '0.0.0.0' || host === '::'
      ? Object.values(os.networkInterfaces())
          .flat()
          .filter((a) => a && !a.internal && (a.family === 'IPv4' || host === '::'))
          .map((a) => a!.address)
      : [host];
  return (hosts.length ? hosts : [host]).map((h) => `${scheme}://${h.includes(':') ? `[${h}]` : h}:${port}/`);
}

/** With no account yet and a server reachable beyond loopback, the first sign-up needs the setup code: say it, in the log and on the console. */
function announceSetupCode(ctx: AppContext, port: number): void {
  const code = ctx.services.setupCode.current();
  if (code === null || isLoopback(ctx.config.host)) return;
  const urls = reachableUrls(ctx.config.host, port, ctx.config.tls ? 'https' : 'http');
  ctx.log.warn('no account yet: the first sign-up creates the admin and needs the setup code', { setupCode: code, urls });
  process.stderr.write(
    `\nCoffer has no account yet. Open ${urls.join(' or ')} and create the admin account with this setup code:\n\n    ${code}\n\n` +
      '(`coffer setup-code` prints it again.)\n\n',
  );
}

/** The certificate and key, read now so a missing or unreadable file stops start-up with its name. */
function readTls(files: { cert: string; key: string }): { cert: string; key: string } {
  const read = (file: string, what: string) => {
    try {
      const text = fs.readFileSync(file, 'utf8');
      if (!text.includes('-----BEGIN ')) throw new StartupError(`${what} ${file} is not a PEM file`);
      return text;
    } catch (err) {
      if (err instanceof StartupError) throw err;
      throw new StartupError(`cannot read ${what} ${file} (${(err as NodeJS.ErrnoException).code ?? err})`);
    }
  };
  return { cert: read(files.cert, 'TLS certificate'), key: read(files.key, 'TLS key') };
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const ctx = openContext(config, { mode: 'server', clock: opts.clock, logger: opts.logger });
  const missing = ctx.services.keys.missingKeys();
  if (missing.length > 0) {
    ctx.close();
    // Serving would answer every such download with a 500 and wrap new files under a key the old ones lack.
    const list = missing.map((m) => `${m.keyId} (${m.files} file(s))`).join(', ');
    throw new StartupError(
      `files are wrapped by master key(s) missing from ${ctx.paths.secrets}: ${list}; restore secrets.json from your backup, or set COFFER_MASTER_KEY to the key they were written with`,
    );
  }
  try {
    await verifyDriver(ctx.driver);
  } catch (err) {
    ctx.close();
    throw err;
  }
  const worker = new Worker({
    queue: ctx.queue,
    registry: ctx.registry,
    clock: ctx.clock,
    concurrency: config.workerConcurrency,
    schedules: ctx.schedules,
    log: ctx.log,
  });
  for (const warning of config.warnings) ctx.log.warn(warning);
  ctx.queue.recoverInterrupted();
  ensureSystemSchedules(ctx);
  let app;
  try {
    const tls = config.tls ? readTls(config.tls) : undefined;
    // Objects of uploads a crash cut off go before anything new is written (nothing is in flight yet).
    await ctx.services.uploadIntents.sweep();
    // Reads the client secret now (a start-up error if it cannot); discovery goes on in the background.
    ctx.services.idp.start();
    app = createApp(ctx, { knownProxies: await resolveKnownProxies(ctx) });
    app.listen({
      port: config.port,
      hostname: config.host,
      // Elysia's default lets a second server share a busy port and take part of its traffic.
      reusePort: false,
      maxRequestBodySize: MAX_REQUEST_BODY,
      idleTimeout: config.idleTimeoutSeconds,
      // Never the runtime's development error page (working directory, paths, source lines).
      development: false,
      error: lastResortErrorHandler(ctx.log),
      tls,
    });
  } catch (err) {
    ctx.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new StartupError(`port ${config.port} on ${config.host} is already in use`);
    if (code === 'EACCES') throw new StartupError(`not allowed to listen on port ${config.port} (try a port above 1023)`);
    throw err;
  }
  const server = app.server!;
  if (opts.startWorker !== false) {
    worker.start();
    ctx.services.audit.start();
  } else ctx.queue.available = true;

  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `${config.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${server.port}`;
  ctx.log.info('listening', { url, dataDir: config.dataDir, storage: ctx.driver.location });
  announceSetupCode(ctx, server.port!);
  // Files of resumable uploads a crash left fully stored are created now, not at the next scheduled sweep.
  ctx.services.tusUploads.sweep().catch((err: unknown) => ctx.log.warn('resumable upload sweep failed', { err: String(err) }));
  const disk = ctx.services.diskSpace.status();
  if (disk.low) ctx.services.diskSpace.warnLow(disk);

  let stopping: Promise<void> | null = null;
  return {
    url,
    port: server.port!,
    ctx,
    worker,
    stop({ graceMs = 10_000 } = {}) {
      stopping ??= (async () => {
        const graceful = server.stop(false);
        const timer = setTimeout(() => server.stop(true), graceMs);
        await graceful;
        clearTimeout(timer);
        await worker.stop(graceMs);
        ctx.queue.available = false;
        ctx.services.audit.stop();
        ctx.services.idp.stop();
        ctx.hub.close();
        ctx.close();
        ctx.log.info('stopped');
      })();
      return stopping;
    },
  };
}
