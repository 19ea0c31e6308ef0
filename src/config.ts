import path from 'node:path';
import { parseSize } from './lib/size.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  logLevel: LogLevel;
  /** Master key text from COFFER_MASTER_KEY, or the path of COFFER_MASTER_KEY_FILE; else the secrets file. */
  masterKey: { source: 'env'; text: string } | { source: 'file'; path: string } | { source: 'secrets' };
  jwtSecret: string | null;
  defaultStorageLimit: number | null;
  trashRetentionDays: number;
  auditRetentionDays: number;
  metricsAllowedIps: string[];
  queueMetricsIntervalSeconds: number;
  updateFeedUrl: string | null;
  workerConcurrency: number;
  /** General rate limit per 15 minutes (SPEC: 10000); raised for load benchmarks. */
  generalRateLimit: number;
  /** Seconds a connection may send and receive nothing before it is closed (idle keep-alive, stalled upload). */
  idleTimeoutSeconds: number;
  /** Requests one client address may have in progress at once; 0 = no cap. */
  maxConnectionsPerIp: number;
  /** Free bytes kept on the data directory's disk for the database: uploads stop below it. */
  minFreeBytes: number;
  /** Built-in HTTPS: PEM certificate chain and private key files; null serves plain HTTP. */
  tls: { cert: string; key: string } | null;
  /** How often open documents are force-saved through the document server (whole minutes dividing an hour). */
  docserverAutosaveIntervalMs: number;
  /** The origin the document server reaches Coffer at; null: the share base URL, else the request's origin. */
  docserverBackendUrl: string | null;
  /** Problems with values that fall back to a default instead of stopping the start; logged by the server. */
  warnings: string[];
}

/** Options the `serve` command (and other commands) take as flags; each wins over its env var. */
export interface ConfigFlags {
  port?: string | number;
  host?: string;
  dataDir?: string;
  defaultStorageLimit?: string;
  logLevel?: string;
  tlsCert?: string;
  tlsKey?: string;
}

export class ConfigError extends Error {}

/** Every environment variable Coffer reads, for --help. */
export const ENVIRONMENT_HELP = `Environment (flags win over environment, environment over defaults):
  PORT                            port to listen on (default 3000)
  HOST                            address to bind (default 0.0.0.0)
  COFFER_DATA_DIR                 data directory (default ./data)
  COFFER_MASTER_KEY               master encryption key (base64 or hex, 32 bytes); overrides the secrets file
  COFFER_MASTER_KEY_FILE          file holding the master key
  JWT_SECRET                      token signing secret; overrides the secrets file
  COFFER_DEFAULT_STORAGE_LIMIT    per-account storage limit, e.g. 50G (default unlimited)
  LOG_LEVEL                       debug, info, warn, error or silent (default info)
  TRASH_RETENTION_DAYS            purge trash older than this (default 30; 0 = never)
  AUDIT_RETENTION_DAYS            keep audit events this long (default 90)
  METRICS_ALLOWED_IPS             comma-separated IPs/CIDRs allowed to read /metrics (default loopback)
  QUEUE_METRICS_INTERVAL_SECONDS  refresh interval of the queue gauges (default 60)
  UPDATE_FEED_URL                 update feed proxied by /api/version/latest
  COFFER_WORKER_CONCURRENCY       background jobs run at once (default 2)
  COFFER_GENERAL_RATE_LIMIT       general requests per 15 minutes per login or IP (default 10000)
  COFFER_IDLE_TIMEOUT_SECONDS     close a connection silent this long: idle keep-alive, stalled upload or
                                  download (default 30, at most 255; event streams are exempt)
  COFFER_MAX_CONNECTIONS_PER_IP   requests one address may have in progress at once, beyond which it gets
                                  429 (default 64; 0 = no cap)
  COFFER_MIN_FREE_BYTES           disk space kept free for the database; uploads and copies get 507 below it
                                  (default 512M)
  COFFER_TLS_CERT                 PEM certificate (full chain) for built-in HTTPS; needs COFFER_TLS_KEY
  COFFER_TLS_KEY                  PEM private key of that certificate
  DOCSERVER_AUTOSAVE_INTERVAL_MS  how often open documents are force-saved: 1 to 60 whole minutes that divide
                                  an hour, in milliseconds (default 300000; other values: a warning and the default)
  DOCSERVER_BACKEND_URL           the URL the document server reaches Coffer at, for the file and callback URLs
                                  it is given (default: the share base URL, else the URL the browser used)`;

type Env = Record<string, string | undefined>;

const DEFAULT_AUTOSAVE_MS = 5 * 60_000;

/** SPEC: 1 to 60 whole minutes that divide an hour evenly, so saves fall on the same minutes every hour. */
function autosaveInterval(text: string | undefined, warnings: string[]): number {
  if (text === undefined || text.trim() === '') return DEFAULT_AUTOSAVE_MS;
  const ms = Number(text.trim());
  const minutes = ms / 60_000;
  if (/^\d+$/.test(text.trim()) && Number.isInteger(minutes) && minutes >= 1 && minutes <= 60 && 60 % minutes === 0) return ms;
  warnings.push(
    `DOCSERVER_AUTOSAVE_INTERVAL_MS must be 1 to 60 whole minutes that divide an hour (60000, 120000, 180000, 240000, 300000, ` +
      `360000, 600000, 720000, 900000, 1200000, 1800000 or 3600000), got "${text}"; using ${DEFAULT_AUTOSAVE_MS} (5 minutes)`,
  );
  return DEFAULT_AUTOSAVE_MS;
}

function pick(flag: string | number | undefined, envValue: string | undefined): string | undefined {
  if (flag !== undefined && flag !== '') return String(flag);
  if (envValue !== undefined && envValue !== '') return envValue;
  return undefined;
}

function integer(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text.trim())) throw new ConfigError(`${name} must be a whole number, got "${text}"`);
  const n = Number(text);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** Pure: flags, then environment, then defaults. Throws ConfigError with a one-line message. */
export function loadConfig(flags: ConfigFlags, env: Env, cwd = process.cwd()): Config {
  const port = integer('port (--port/PORT)', pick(flags.port, env.PORT), 3000, 0, 65535);
  const host = pick(flags.host, env.HOST) ?? '0.0.0.0';
  const dataDir = path.resolve(cwd, pick(flags.dataDir, env.COFFER_DATA_DIR) ?? './data');

  const levelText = (pick(flags.logLevel, env.LOG_LEVEL) ?? 'info').toLowerCase();
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(levelText)) {
    throw new ConfigError(`LOG_LEVEL must be one of debug, info, warn, error, silent, got "${levelText}"`);
  }

  let masterKey: Config['masterKey'] = { source: 'secrets' };
  if (env.COFFER_MASTER_KEY) masterKey = { source: 'env', text: env.COFFER_MASTER_KEY };
  else if (env.COFFER_MASTER_KEY_FILE) masterKey = { source: 'file', path: path.resolve(cwd, env.COFFER_MASTER_KEY_FILE) };

  const limitText = pick(flags.defaultStorageLimit, env.COFFER_DEFAULT_STORAGE_LIMIT);
  let defaultStorageLimit: number | null = null;
  if (limitText !== undefined && limitText.toLowerCase() !== 'none') {
    defaultStorageLimit = parseSize(limitText);
    if (defaultStorageLimit === null || defaultStorageLimit <= 0) {
      throw new ConfigError(`default storage limit must be a size such as 50G or 500M, got "${limitText}"`);
    }
  }

  const reserveText = env.COFFER_MIN_FREE_BYTES?.trim();
  const minFreeBytes = reserveText ? parseSize(reserveText) : 512 * 1024 ** 2;
  if (minFreeBytes === null) throw new ConfigError(`COFFER_MIN_FREE_BYTES must be a size such as 512M or 2G, got "${reserveText}"`);

  const tlsCert = pick(flags.tlsCert, env.COFFER_TLS_CERT);
  const tlsKey = pick(flags.tlsKey, env.COFFER_TLS_KEY);
  if ((tlsCert === undefined) !== (tlsKey === undefined)) {
    throw new ConfigError(
      'built-in HTTPS needs both a certificate and its key: --tls-cert and --tls-key (COFFER_TLS_CERT, COFFER_TLS_KEY)',
    );
  }
  const tls = tlsCert && tlsKey ? { cert: path.resolve(cwd, tlsCert), key: path.resolve(cwd, tlsKey) } : null;

  const feed = env.UPDATE_FEED_URL?.trim() || null;
  if (feed !== null && !URL.canParse(feed)) throw new ConfigError(`UPDATE_FEED_URL is not a valid URL: "${feed}"`);

  const backend = env.DOCSERVER_BACKEND_URL?.trim() || null;
  if (backend !== null && !(URL.canParse(backend) && /^https?:$/.test(new URL(backend).protocol))) {
    throw new ConfigError(`DOCSERVER_BACKEND_URL must be an http:// or https:// URL, got "${backend}"`);
  }
  const warnings: string[] = [];

  return Object.freeze({
    port,
    host,
    dataDir,
    logLevel: levelText as LogLevel,
    masterKey,
    jwtSecret: env.JWT_SECRET || null,
    defaultStorageLimit,
    trashRetentionDays: integer('TRASH_RETENTION_DAYS', env.TRASH_RETENTION_DAYS, 30, 0, 36500),
    auditRetentionDays: integer('AUDIT_RETENTION_DAYS', env.AUDIT_RETENTION_DAYS, 90, 1, 36500),
    metricsAllowedIps: (env.METRICS_ALLOWED_IPS ?? '127.0.0.1,::1,::ffff:127.0.0.1')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    queueMetricsIntervalSeconds: integer('QUEUE_METRICS_INTERVAL_SECONDS', env.QUEUE_METRICS_INTERVAL_SECONDS, 60, 1, 86400),
    updateFeedUrl: feed,
    workerConcurrency: integer('COFFER_WORKER_CONCURRENCY', env.COFFER_WORKER_CONCURRENCY, 2, 1, 64),
    generalRateLimit: integer('COFFER_GENERAL_RATE_LIMIT', env.COFFER_GENERAL_RATE_LIMIT, 10_000, 1, 1_000_000_000),
    // The runtime's own limit is 255 seconds.
    idleTimeoutSeconds: integer('COFFER_IDLE_TIMEOUT_SECONDS', env.COFFER_IDLE_TIMEOUT_SECONDS, 30, 1, 255),
    maxConnectionsPerIp: integer('COFFER_MAX_CONNECTIONS_PER_IP', env.COFFER_MAX_CONNECTIONS_PER_IP, 64, 0, 1_000_000),
    minFreeBytes,
    tls,
    docserverAutosaveIntervalMs: autosaveInterval(env.DOCSERVER_AUTOSAVE_INTERVAL_MS, warnings),
    docserverBackendUrl: backend === null ? null : new URL(backend).href.replace(/\/+$/, ''),
    warnings,
  });
}
