import dns from 'node:dns/promises';
import os from 'node:os';
import fs from 'node:fs';
import { createApp } from './app.ts';
import type { AppContext } from './context.ts';
import { listenFailure, StartupError } from './errors.ts';
import { lastResortErrorHandler } from './http/plugins/core.ts';
import { isCidr, isIpAddress, isLoopback, localUrl } from './lib/ip.ts';
import type { Lifecycle } from './lib/lifecycle.ts';

// Uploads up to the 100 GiB setting plus multipart framing must not be cut off by Bun's default 128 MiB.
const MAX_REQUEST_BODY = 101 * 1024 ** 3;

/** Known proxies are read once at start (docs/api.md › Limits: changing them needs a restart); hostnames are resolved now. */
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

/**
 * The connections' idle timeout: a request waits for the bucket up to S3_TIMEOUT_SECONDS with nothing on the
 * wire, and a connection closed first gave the client a reset instead of the 503 (S3_TIMEOUT_SECONDS above it).
 */
function idleTimeoutOf(config: AppContext['config']): number {
  const storageWait = config.storage.driver === 's3' ? Math.ceil(config.storage.timeoutMs / 1000) + 5 : 0;
  return Math.min(255, Math.max(config.idleTimeoutSeconds, storageWait));
}

export interface HttpListener extends Lifecycle {
  /** Set once started. */
  url: string;
  port: number;
}

/** The routes on the configured address: started last, so stopping first lets in-flight requests finish (bounded). */
export function httpListener(ctx: AppContext): HttpListener {
  const { config } = ctx;
  let server: ReturnType<typeof createApp>['server'] = null;
  const listener: HttpListener = {
    name: 'http listener',
    url: '',
    port: 0,
    async start() {
      try {
        const tls = config.tls ? readTls(config.tls) : undefined;
        const app = createApp(ctx, { knownProxies: await resolveKnownProxies(ctx) });
        app.listen({
          port: config.port,
          hostname: config.host,
          // Elysia's default lets a second server share a busy port and take part of its traffic.
          reusePort: false,
          maxRequestBodySize: MAX_REQUEST_BODY,
          idleTimeout: idleTimeoutOf(config),
          // Never the runtime's development error page (working directory, paths, source lines).
          development: false,
          error: lastResortErrorHandler(ctx.log),
          tls,
        });
        server = app.server;
      } catch (err) {
        throw listenFailure(err, config.host, config.port);
      }
      listener.port = server!.port!;
      listener.url = localUrl(config.host, listener.port, config.tls !== null);
      ctx.log.info('listening', { url: listener.url, dataDir: config.dataDir, storage: ctx.driver.location });
      announceSetupCode(ctx, listener.port);
    },
    async stop(graceMs) {
      if (!server) return;
      const graceful = server.stop(false);
      const timer = setTimeout(() => server?.stop(true), graceMs);
      await graceful;
      clearTimeout(timer);
    },
  };
  return listener;
}
