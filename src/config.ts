import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseSize } from './contract/size.ts';
import { StartupError } from './errors.ts';
import { isCidr, isIpAddress } from './lib/ip.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
/** `json`: one JSON object per line; `journald`: the same behind a syslog priority prefix (`<3>` for errors). */
export type LogFormat = 'json' | 'journald';

/** A secret given in a variable, or in a file its *_FILE variable names (read when the server starts). */
export type SecretSetting = { source: 'env'; text: string } | { source: 'file'; path: string };

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** Master key text from COFFER_MASTER_KEY, or the path of COFFER_MASTER_KEY_FILE; else the secrets file. */
  masterKey: SecretSetting | { source: 'secrets' };
  jwtSecret: string | null;
  defaultStorageLimit: number | null;
  trashRetentionDays: number;
  /** Libraries: minutes between full rescans (0 = none but the one after start), and whether inotify watches them. */
  libraries: { rescanMinutes: number; watch: boolean };
  auditRetentionDays: number;
  /** Days the change log keeps its rows (CHANGES_RETENTION_DAYS); the daily maintenance job thins older ones. */
  changesRetentionDays: number;
  metricsAllowedIps: string[];
  queueMetricsIntervalSeconds: number;
  updateFeedUrl: string | null;
  workerConcurrency: number;
  /** Requests each rate limiter allows per window (docs/api.md › Limits by default); the windows are that table's. */
  rateLimits: RateLimits;
  /** Seconds a connection may send and receive nothing before it is closed (idle keep-alive, stalled upload). */
  idleTimeoutSeconds: number;
  /** Requests one client address may have in progress at once; 0 = no cap. */
  maxConnectionsPerIp: number;
  /** ZIP downloads made at once: on the instance (COFFER_MAX_ZIPS) and per account (COFFER_MAX_ZIPS_PER_ACCOUNT). */
  zips: { instance: number; perAccount: number };
  /** Free bytes kept on the data directory's disk for the database: uploads stop below it. */
  minFreeBytes: number;
  /** Built-in HTTPS: PEM certificate chain and private key files; null serves plain HTTP. */
  tls: { cert: string; key: string } | null;
  /** The configuration file read (COFFER_CONFIG, else /etc/coffer/coffer.env), whether or not it exists. */
  configFile: string;
  /** Hours a resumable upload may go without receiving bytes before it is deleted (and its reservation freed). */
  tusExpiryHours: number;
  /** Webhooks: hosts allowed although they resolve to a refused address (WEBHOOK_ALLOWED_HOSTS), and a delivery's time limit. */
  webhooks: { allowedHosts: string[]; timeoutMs: number };
  /** Content search: text kept per file (SEARCH_MAX_TEXT_BYTES), the largest file read (SEARCH_MAX_FILE_BYTES), extraction threads (SEARCH_WORKERS). */
  search: { maxTextBytes: number; maxFileBytes: number; workers: number };
  /** Thumbnails made at once (worker threads); default half the cores, at least 1. */
  thumbnailConcurrency: number;
  /** Images with more pixels than this get no thumbnail (refused from the header, before decoding). */
  thumbnailMaxPixels: number;
  /** The ffmpeg that makes videos' first-frame thumbnails (FFMPEG_PATH, else one on PATH); null: videos get none. */
  ffmpegPath: string | null;
  /** Where file contents are stored (`--storage`/COFFER_STORAGE). */
  storage: StorageConfig;
  /** How often open documents are force-saved through the document server (whole minutes dividing an hour). */
  docserverAutosaveIntervalMs: number;
  /** The origin the document server reaches Coffer at; null: the share base URL, else the request's origin. */
  docserverBackendUrl: string | null;
  /** MAP_TILE_URL: a tile server's URL template ({z}/{x}/{y}) for the small map of a photo's place; null: no map, no request. */
  mapTileUrl: string | null;
  /** COFFER_PUBLIC_URL: the origin browsers use (passkeys' relying party, the document server's way in, the sign-on redirect); null: the request's. */
  publicUrl: string | null;
  /** Problems with values that fall back to a default instead of stopping the start; logged by the server. */
  warnings: string[];
  /** Single sign-on through an OpenID Connect provider; null when OIDC_ISSUER_URL is not set. */
  idp: IdpConfig | null;
  /** Scheduled backups (BACKUP_*) and the passphrase full backups are encrypted with. */
  backup: BackupConfig;
  /** Continuous replication of the database (REPLICATE_*); null destination: off. */
  replication: ReplicationConfig;
}

/** Where a replica lives: a directory, or a bucket (`s3://bucket/prefix`). */
export type ReplicaDestination = { kind: 'dir'; dir: string } | { kind: 's3'; s3: S3Config };

export interface ReplicationConfig {
  /** REPLICATE_TO; null: replication is off. */
  destination: ReplicaDestination | null;
  /** Longest time between a commit and its segment being written (REPLICATE_INTERVAL_MS). */
  intervalMs: number;
  /** How long older generations are kept (REPLICATE_RETENTION). */
  retentionMs: number;
  /** The most sealed bytes kept on disk waiting for the destination (REPLICATE_MAX_LAG_BYTES). */
  maxLagBytes: number;
}

/** When scheduled backups run, in server-local time. */
export type BackupSchedule =
  | { kind: 'off' }
  | { kind: 'hourly' }
  | { kind: 'daily'; hour: number; minute: number }
  | { kind: 'weekly'; day: number; hour: number; minute: number };

export interface BackupConfig {
  schedule: BackupSchedule;
  /** Archives kept at the destination; older ones are deleted after a successful run. */
  keep: number;
  /** A local directory, or a bucket (then the passphrase is required). */
  destination: { kind: 'dir'; dir: string } | { kind: 's3'; s3: S3Config };
  /** BACKUP_PASSPHRASE_FILE: every backup, full or not, is encrypted with the passphrase it holds. */
  passphraseFile: string | null;
}

/** The OIDC_* variables: all three of issuer, client id and secret, or none. */
export interface IdpConfig {
  issuerUrl: string;
  clientId: string;
  /** OIDC_CLIENT_SECRET or OIDC_CLIENT_SECRET_FILE. */
  clientSecret: SecretSetting;
  /** OIDC_REDIRECT_URL; null: the origin of the request that starts the sign-in, plus /api/idp/callback. */
  redirectUrl: string | null;
  scopes: string;
  providerName: string;
  autoCreate: boolean;
  disablePasswordLogin: boolean;
  /** OIDC_ALLOW_HTTP: plain http to a provider that is not on loopback (a LAN test set-up). */
  allowHttp: boolean;
  /** OIDC_GROUPS_CLAIM: the claim naming the person's groups; each sign-on sets the provider's groups from it. Null: groups are not synced. */
  groupsClaim: string | null;
  /** OIDC_GROUPS_CREATE: a group named in the claim and unknown here is created. */
  groupsCreate: boolean;
}

export interface RateLimits {
  general: number;
  auth: number;
  upload: number;
  mfa: number;
  backupCodes: number;
  passwordHashes: number;
  memberLookups: number;
}

/** Each limiter's variable and its default (docs/api.md › Limits, for the limiters it lists); the table in docs/configuration.md names the same. */
const RATE_LIMIT_VARS: Record<keyof RateLimits, [variable: string, fallback: number]> = {
  general: ['COFFER_GENERAL_RATE_LIMIT', 10_000],
  auth: ['COFFER_AUTH_RATE_LIMIT', 25],
  upload: ['COFFER_UPLOAD_RATE_LIMIT', 20_000],
  mfa: ['COFFER_MFA_RATE_LIMIT', 5],
  backupCodes: ['COFFER_BACKUP_CODES_RATE_LIMIT', 3],
  // Above what one household's devices and people need; each check costs a core ~80 ms and 19 MiB.
  passwordHashes: ['COFFER_PASSWORD_HASH_RATE_LIMIT', 60],
  // Adding a member tells whether an email has an account: few per account, so emails cannot be probed in bulk.
  memberLookups: ['COFFER_MEMBER_LOOKUP_RATE_LIMIT', 30],
};

export type StorageConfig = { driver: 'local' } | S3Config;

export interface S3Config {
  driver: 's3';
  bucket: string;
  /** Null: AWS. */
  endpoint: string | null;
  region: string;
  /** '' or ending in '/'. */
  prefix: string;
  accessKeyId: string;
  /** The secret itself, or the file holding it (read when the driver is built). */
  secretAccessKey: SecretSetting;
  forcePathStyle: boolean;
  partSize: number;
  /** Longest wait for one call to the bucket, retries included, and for silence while a body streams. */
  timeoutMs: number;
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
  storage?: string;
}

export class ConfigError extends Error {}

/** Every environment variable Coffer reads, for --help. */
export const ENVIRONMENT_HELP = `Environment (flags win over environment, environment over the configuration file, that over defaults):
  COFFER_CONFIG                   configuration file of VAR=value lines, read by every command (default
                                  /etc/coffer/coffer.env when it exists, as install.sh writes it)
  PORT                            port to listen on (default 3000)
  HOST                            address to bind (default 0.0.0.0)
  COFFER_DATA_DIR                 data directory (default ./data)
  COFFER_MASTER_KEY               master encryption key (base64 or hex, 32 bytes); overrides the secrets file
  COFFER_MASTER_KEY_FILE          file holding the master key
  JWT_SECRET                      token signing secret; overrides the secrets file
  COFFER_DEFAULT_STORAGE_LIMIT    per-account storage limit, e.g. 50G (default unlimited)
  LOG_LEVEL                       debug, info, warn, error or silent (default info)
  LOG_FORMAT                      json, or journald: each line behind its syslog priority, so that
                                  journalctl -p err finds the errors (default json)
  TRASH_RETENTION_DAYS            purge trash older than this (default 30; 0 = never)
  LIBRARY_RESCAN_MINUTES          rescan every library this often, beside the one after start (default 60;
                                  0 = only after start)
  LIBRARY_WATCH                   1 (default) follows changes to libraries as they happen (inotify); 0 leaves
                                  them to the rescans
  AUDIT_RETENTION_DAYS            keep audit events this long (default 90)
  CHANGES_RETENTION_DAYS          keep the change log this long (default 30)
  METRICS_ALLOWED_IPS             comma-separated IPs/CIDRs allowed to read /metrics (default loopback)
  QUEUE_METRICS_INTERVAL_SECONDS  refresh interval of the queue gauges (default 60)
  UPDATE_FEED_URL                 update feed proxied by /api/version/latest
  COFFER_WORKER_CONCURRENCY       background jobs run at once (default 2)
  COFFER_GENERAL_RATE_LIMIT       general requests per 15 minutes per login or IP (default 10000)
  COFFER_AUTH_RATE_LIMIT          sign-up, sign-in and password-change attempts per 15 minutes per IP and
                                  email (default 25)
  COFFER_UPLOAD_RATE_LIMIT        uploads (and upload checks) per 30 minutes per login (default 20000)
  COFFER_MFA_RATE_LIMIT           two-factor verify or disable attempts per minute per IP and login (default 5)
  COFFER_BACKUP_CODES_RATE_LIMIT  backup-code regenerations per 10 minutes per IP and login (default 3)
  COFFER_PASSWORD_HASH_RATE_LIMIT password checks per minute per IP, whatever the email: sign-in, sign-up,
                                  password change, sub-user creation, WebDAV (default 60)
  COFFER_MEMBER_LOOKUP_RATE_LIMIT members added (each looks an email up) per 15 minutes per account, its
                                  sub-users included (default 30)
  COFFER_IDLE_TIMEOUT_SECONDS     close a connection silent this long: idle keep-alive, stalled upload or
                                  download (default 30, at most 255; event streams are exempt, a thumbnail being made waits 150)
  COFFER_MAX_CONNECTIONS_PER_IP   requests one address may have in progress at once, beyond which it gets
                                  429 (default 64; 0 = no cap)
  COFFER_MAX_ZIPS                 ZIP downloads made at once on the instance, beyond which one gets 503
                                  (default 4)
  COFFER_MAX_ZIPS_PER_ACCOUNT     ZIP downloads made at once of one account's files, beyond which one gets
                                  429 (default 2)
  COFFER_MIN_FREE_BYTES           disk space kept free for the database; uploads and copies get 507 below it
                                  (default 512M)
  COFFER_TLS_CERT                 PEM certificate (full chain) for built-in HTTPS; needs COFFER_TLS_KEY
  COFFER_TLS_KEY                  PEM private key of that certificate
  TUS_EXPIRY_HOURS                hours a resumable upload may receive nothing before it is deleted (default 24;
                                  fractions allowed)
  WEBHOOK_ALLOWED_HOSTS           comma-separated host names webhooks may reach although they resolve to a
                                  loopback, private, link-local or other refused address (default none)
  WEBHOOK_TIMEOUT_MS              how long a webhook receiver has to answer (default 10000)
  THUMBNAIL_CONCURRENCY           thumbnails made at once, each in its own worker thread (default half the
                                  cores, at least 1)
  THUMBNAIL_MAX_PIXELS            images with more pixels, and PDFs whose first page draws images of more
                                  pixels in all, get no thumbnail (default 100000000)
  FFMPEG_PATH                     the ffmpeg executable that makes videos' first-frame thumbnails (default:
                                  ffmpeg on PATH; none found: videos get no thumbnail)
  SEARCH_MAX_TEXT_BYTES           text content search keeps per file, when it is on, e.g. 512K (default 1M)
  SEARCH_MAX_FILE_BYTES           larger files are not read by content search (default 100M)
  SEARCH_WORKERS                  documents content search extracts at once, each in its own worker thread,
                                  1 to 64 (default one per core but one, at least one)
  DOCSERVER_AUTOSAVE_INTERVAL_MS  how often open documents are force-saved: 1 to 60 whole minutes that divide
                                  an hour, in milliseconds (default 300000; other values: a warning and the default)
  DOCSERVER_BACKEND_URL           the URL the document server reaches Coffer at, for the file and callback URLs
                                  it is given (default: the share base URL, else COFFER_PUBLIC_URL, else the URL
                                  the browser used)
  MAP_TILE_URL                    a map tile server's URL template, e.g. https://tiles.example.com/{z}/{x}/{y}.png:
                                  the photo details show the place on one tile of it (default: none, no map
                                  and no request to any other server; not a template: a warning and none)
  COFFER_PUBLIC_URL               the URL people open Coffer at, e.g. https://files.example.com; passkeys are
                                  bound to its host name; the document server and single sign-on's redirect
                                  are sent there (default: the host each request names)
  COFFER_STORAGE                  where file contents go: local (default, <data dir>/blobs) or s3
  S3_BUCKET                       bucket name (required for s3; it must exist)
  S3_ENDPOINT                     e.g. http://127.0.0.1:9000 for MinIO or Garage (default AWS)
  S3_REGION                       region (default us-east-1)
  S3_PREFIX                       key prefix inside the bucket, so one bucket can hold several installs
  S3_ACCESS_KEY_ID                access key (required for s3)
  S3_SECRET_ACCESS_KEY            secret key (required for s3), or S3_SECRET_ACCESS_KEY_FILE naming a file
  S3_FORCE_PATH_STYLE             path-style addressing (default true when S3_ENDPOINT is set)
  S3_PART_SIZE                    multipart part size, 5M to 512M (default 8M)
  S3_TIMEOUT_SECONDS              seconds a call to the bucket may take before the request fails with 503 (default 30)

Backups (see docs/backup.md):
  BACKUP_SCHEDULE                 off (default), hourly, "daily HH:MM" or "weekly DAY HH:MM" (server-local time)
  BACKUP_KEEP                     archives kept at the destination; older ones go after a successful run (default 7)
  BACKUP_DIR                      where scheduled backups go (default <data dir>/../backups)
  BACKUP_S3_BUCKET                send scheduled backups to this bucket instead (needs BACKUP_PASSPHRASE_FILE);
                                  BACKUP_S3_PREFIX (default coffer-backups/), BACKUP_S3_ENDPOINT, _REGION,
                                  _ACCESS_KEY_ID, _SECRET_ACCESS_KEY(_FILE) default to the S3_* settings
  BACKUP_PASSPHRASE_FILE          a file holding the passphrase every backup is encrypted with

Replication (see docs/replication.md):
  REPLICATE_TO                    a directory or s3://bucket/prefix the database is replicated to, sealed with
                                  BACKUP_PASSPHRASE_FILE's passphrase (required); a bucket's endpoint and keys
                                  come from BACKUP_S3_* then S3_*
  REPLICATE_INTERVAL_MS           longest time from a commit to its shipment (default 1000)
  REPLICATE_RETENTION             how long older generations are kept, e.g. 7d or 36h (default 7d)
  REPLICATE_MAX_LAG_BYTES         sealed changes kept on disk while the destination is unreachable; beyond
                                  it they are dropped and a new generation starts once it is back (default 1G)

Single sign-on (OpenID Connect; issuer, client id and secret turn it on together):
  OIDC_ISSUER_URL                 the provider's issuer URL (https://, or http:// on loopback)
  OIDC_CLIENT_ID                  the client id registered for Coffer at the provider
  OIDC_CLIENT_SECRET              its client secret
  OIDC_CLIENT_SECRET_FILE         a file holding the client secret (instead of OIDC_CLIENT_SECRET)
  OIDC_REDIRECT_URL               callback URL to register at the provider (default
                                  <origin of the request>/api/idp/callback; set it behind a reverse proxy)
  OIDC_SCOPES                     scopes to ask for (default "openid email profile")
  OIDC_PROVIDER_NAME              the sign-in button says "Sign in with <name>" (default "Single sign-on")
  OIDC_AUTO_CREATE                true: create accounts on first sign-in even when sign-up is closed
                                  (default false)
  OIDC_DISABLE_PASSWORD_LOGIN     true: only the provider signs people in; the CLI still works (default false)
  OIDC_ALLOW_HTTP                 true: accept an http:// issuer that is not on loopback (LAN tests only)
  OIDC_GROUPS_CLAIM               the claim listing a person's groups (e.g. groups): each sign-on sets their
                                  membership in the provider's groups from it (default: not synced)
  OIDC_GROUPS_CREATE              true: create a group named in the claim on first sight (default false)`;

export type Env = Record<string, string | undefined>;

/** Where install.sh writes the service's configuration; every command reads it too. */
export const DEFAULT_CONFIG_FILE = '/etc/coffer/coffer.env';

/** The S3 settings a bucket takes; a backup or replica bucket's are the same names behind BACKUP_. */
const BUCKET_SETTINGS = [
  'ENDPOINT',
  'REGION',
  'ACCESS_KEY_ID',
  'SECRET_ACCESS_KEY',
  'SECRET_ACCESS_KEY_FILE',
  'FORCE_PATH_STYLE',
  'PART_SIZE',
  'TIMEOUT_SECONDS',
] as const;

/**
 * Every variable Coffer reads, as ENVIRONMENT_HELP lists them (each at the start of its line), and the backup
 * bucket's settings it names only in short; a configuration file may set these.
 */
export const SETTING_NAMES: ReadonlySet<string> = new Set([
  ...[...ENVIRONMENT_HELP.matchAll(/^ {2}([A-Z][A-Z0-9_]+)\s/gm)].map((m) => m[1]!),
  'BACKUP_S3_PREFIX',
  ...BUCKET_SETTINGS.flatMap((name) => [`S3_${name}`, `BACKUP_S3_${name}`]),
]);

/** The runtime's own variables a systemd EnvironmentFile may also set for the service (time zone, locale, proxy, CA certificates). */
const PROCESS_VARIABLE =
  /^(TZ|LANG|LANGUAGE|LC_[A-Z]+|TMPDIR|NODE_ENV|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|(HTTPS?|NO|ALL)_PROXY|BUN_[A-Z0-9_]+)$/i;

/** Levenshtein distance, for the nearest known name to a mistyped one. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length]!;
}

/** "unknown setting X" with the nearest known name when it is close enough to be a typo. */
function unknownSetting(name: string): string {
  let best = '';
  let distance = Number.POSITIVE_INFINITY;
  for (const known of SETTING_NAMES) {
    const d = editDistance(name.toUpperCase(), known);
    if (d < distance) [best, distance] = [known, d];
  }
  const hint = distance <= Math.max(2, Math.floor(name.length / 3)) ? `did you mean ${best}?` : '`coffer serve --help` lists them';
  return `unknown setting ${name} (${hint})`;
}

/** COFFER_* variables of the process's environment that Coffer does not read: likely typos, left at their defaults. */
export function unknownCofferVariables(env: Env): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith('COFFER_') && !SETTING_NAMES.has(name))
    .map((name) => `environment variable ${name} is ignored: ${unknownSetting(name)}`);
}

/**
 * A systemd EnvironmentFile: VAR=value lines, `#` and `;` comments, values optionally in single or double
 * quotes. Any other line, an unknown name or a quote left open is a ConfigError naming `file` and the line.
 */
export function parseEnvFile(text: string, file: string): Record<string, string> {
  const { values, problems } = readEnvFile(text, file);
  if (problems.length) throw new ConfigError(problems[0]!.text);
  return values;
}

/** A line of the configuration file and what is wrong with it, in a sentence naming the file and the line. */
interface LineProblem {
  line: number;
  text: string;
}

/** The file's readable lines (each value and its line number), and each line `parseEnvFile` refuses. */
function readEnvFile(
  text: string,
  file: string,
): { values: Record<string, string>; lines: Record<string, number>; problems: LineProblem[] } {
  const values: Record<string, string> = {};
  const lines: Record<string, number> = {};
  const problems: LineProblem[] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const read = readEnvLine(line);
    if (typeof read === 'string') problems.push({ line: index + 1, text: `configuration file ${file}, line ${index + 1}: ${read}` });
    else {
      values[read.name] = read.value;
      lines[read.name] = index + 1;
    }
  }
  return { values, lines, problems };
}

/** One VAR=value line's name and value, or what is wrong with it. */
function readEnvLine(line: string): { name: string; value: string } | string {
  const m = /^(?:export\s+)?([^=\s]+)\s*=\s*(.*)$/.exec(line);
  if (!m) return `"${line}" is not a VAR=value line`;
  const name = m[1]!;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `"${name}" is not a variable name`;
  if (!SETTING_NAMES.has(name) && !PROCESS_VARIABLE.test(name)) return unknownSetting(name);
  const value = m[2]!;
  const open = /^["']/.exec(value)?.[0];
  if (open) {
    const quoted = open === '"' ? /^"((?:[^"\\]|\\.)*)"$/.exec(value) : /^'([^']*)'$/.exec(value);
    if (!quoted) return `the value of ${name} opens a ${open} quote that does not close at the end of the line`;
    return { name, value: open === '"' ? quoted[1]!.replace(/\\(["\\])/g, '$1') : quoted[1]! };
  }
  if (/["']/.test(value)) return `the value of ${name} has a stray quote: put the whole value in quotes ("…")`;
  return { name, value };
}

/**
 * The environment with the configuration file's values under it: `COFFER_CONFIG` names the file (it must
 * exist), else /etc/coffer/coffer.env is read when it exists. The process's own variables win, so
 * `sudo -u coffer coffer users list` finds the service's data directory and keys without flags.
 */
export function withConfigFile(env: Env, defaultFile = DEFAULT_CONFIG_FILE): Env {
  const checked = checkConfigFile(env, defaultFile);
  if (checked.problems.length) throw new ConfigError(checked.problems[0]!.text);
  return checked.env;
}

/**
 * What `withConfigFile` reads, without refusing the lines it would refuse: the environment the readable
 * lines give, the file read (null: none), its readable values and the line each is on, and each refused line.
 */
function checkConfigFile(
  env: Env,
  defaultFile = DEFAULT_CONFIG_FILE,
): { env: Env; file: string | null; values: Record<string, string>; lines: Record<string, number>; problems: LineProblem[] } {
  const named = env.COFFER_CONFIG?.trim();
  const file = named || defaultFile;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!named && code === 'ENOENT') return { env, file: null, values: {}, lines: {}, problems: [] };
    throw new ConfigError(
      `cannot read the configuration file ${file} (${code ?? err})${named ? ' named by COFFER_CONFIG' : ''}: run as the service's user (sudo -u coffer coffer …) or set COFFER_CONFIG`,
    );
  }
  const { values, lines, problems } = readEnvFile(text, file);
  return { env: { ...values, ...env }, file, values, lines, problems };
}

/**
 * What `coffer doctor` diagnoses with, refusing nothing the file holds: the environment of the file's lines and
 * values the server takes, the file read (null: none), and each of its problems naming its line: a line every
 * command refuses, a value the server refuses (left out, so the rest still loads), a data directory that is not
 * there. The values are checked as the service sees them, from the file alone.
 */
export function checkConfiguration(env: Env, defaultFile = DEFAULT_CONFIG_FILE): { env: Env; file: string | null; problems: string[] } {
  const checked = checkConfigFile(env, defaultFile);
  const problems = [...checked.problems];
  const where = (line: number) => `configuration file ${checked.file}${line ? `, line ${line}` : ''}`;
  const values = { ...checked.values };
  let config: Config | null = null;
  while (config === null) {
    try {
      config = loadConfig({}, values);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      // Each refusal names the settings at fault: those are left out and the rest loaded again.
      const named = Object.keys(values).filter((name) => new RegExp(`\\b${name}\\b`).test(err.message));
      const line = named.length ? checked.lines[named[0]!]! : 0;
      problems.push({ line, text: `${where(line)}: ${err.message}` });
      if (named.length === 0) break;
      for (const name of named) delete values[name];
    }
  }
  if (config && values.COFFER_DATA_DIR !== undefined && !fs.existsSync(config.dataDir)) {
    const line = checked.lines.COFFER_DATA_DIR!;
    problems.push({
      line,
      text: `${where(line)}: COFFER_DATA_DIR names ${config.dataDir}, which does not exist (moved or removed?): the server would start a new, empty instance there; point it at the instance's data directory`,
    });
  }
  return { env: { ...values, ...env }, file: checked.file, problems: problems.sort((a, b) => a.line - b.line).map((p) => p.text) };
}

const DEFAULT_AUTOSAVE_MS = 5 * 60_000;

/** docs/api.md › Limits: 1 to 60 whole minutes that divide an hour evenly, so saves fall on the same minutes every hour. */
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

/** FFMPEG_PATH when it names an executable (else a warning: videos get no thumbnail), or ffmpeg found on PATH. */
function ffmpegPath(configured: string | undefined, searchPath: string | undefined, warnings: string[]): string | null {
  // An environment without PATH (a test's) searches the process's own.
  const where = searchPath === undefined ? undefined : { PATH: searchPath };
  if (configured === undefined || configured.trim() === '') return Bun.which('ffmpeg', where);
  const found = Bun.which(configured.trim(), where);
  if (!found) warnings.push(`FFMPEG_PATH "${configured}" is not an executable; videos get no thumbnail`);
  return found;
}

/** MAP_TILE_URL when it is an http(s) URL template naming {z}, {x} and {y}; else a warning and none. */
function mapTileUrl(configured: string | undefined, warnings: string[]): string | null {
  const template = configured?.trim();
  if (!template) return null;
  const sample = template.replace(/\{[zxy]\}/g, '0');
  const ok = ['{z}', '{x}', '{y}'].every((p) => template.includes(p)) && URL.canParse(sample) && /^https?:$/.test(new URL(sample).protocol);
  if (ok) return template;
  warnings.push(`MAP_TILE_URL "${template}" is not an http(s) URL with {z}, {x} and {y}; photo details show no map`);
  return null;
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

/** Loopback hosts, where plain http never leaves the machine. */
function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::1';
}

function idpConfig(env: Env, cwd: string): IdpConfig | null {
  const text = (name: string) => env[name]?.trim() || undefined;
  const issuer = text('OIDC_ISSUER_URL');
  const clientId = text('OIDC_CLIENT_ID');
  const secret = env.OIDC_CLIENT_SECRET || undefined;
  const secretFile = text('OIDC_CLIENT_SECRET_FILE');
  if (secret && secretFile) throw new ConfigError('set OIDC_CLIENT_SECRET or OIDC_CLIENT_SECRET_FILE, not both');
  const present = { OIDC_ISSUER_URL: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: secret ?? secretFile };
  const missing = Object.entries(present).filter(([, v]) => v === undefined);
  if (missing.length === 3) {
    if (booleanVar('OIDC_DISABLE_PASSWORD_LOGIN', env.OIDC_DISABLE_PASSWORD_LOGIN, false)) {
      throw new ConfigError('OIDC_DISABLE_PASSWORD_LOGIN needs single sign-on: set OIDC_ISSUER_URL, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET');
    }
    return null;
  }
  if (missing.length > 0) {
    const names = missing.map(([k]) => (k === 'OIDC_CLIENT_SECRET' ? 'OIDC_CLIENT_SECRET (or OIDC_CLIENT_SECRET_FILE)' : k));
    const set = Object.keys(present).filter((k) => !missing.some(([m]) => m === k));
    throw new ConfigError(
      `single sign-on is half configured: ${set.join(' and ')} ${set.length > 1 ? 'are' : 'is'} set but ${names.join(' and ')} ${names.length > 1 ? 'are' : 'is'} missing`,
    );
  }
  const allowHttp = booleanVar('OIDC_ALLOW_HTTP', env.OIDC_ALLOW_HTTP, false);
  if (!URL.canParse(issuer!)) throw new ConfigError(`OIDC_ISSUER_URL is not a valid URL: "${issuer}"`);
  const url = new URL(issuer!);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !allowHttp) {
    throw new ConfigError(
      `OIDC_ISSUER_URL must use https:// (http:// is accepted on loopback addresses, or with OIDC_ALLOW_HTTP=true for a LAN test set-up), got "${issuer}"`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError(`OIDC_ISSUER_URL must be an https:// URL, got "${issuer}"`);
  const redirect = text('OIDC_REDIRECT_URL') ?? null;
  if (redirect !== null && !/^https?:\/\//.test(redirect)) {
    throw new ConfigError(
      `OIDC_REDIRECT_URL must be a full http(s) URL such as https://files.example.com/api/idp/callback, got "${redirect}"`,
    );
  }
  if (redirect !== null && !URL.canParse(redirect)) throw new ConfigError(`OIDC_REDIRECT_URL is not a valid URL: "${redirect}"`);
  const scopes = (text('OIDC_SCOPES') ?? 'openid email profile').split(/[\s,]+/).filter(Boolean);
  if (!scopes.includes('openid')) throw new ConfigError(`OIDC_SCOPES must include "openid", got "${env.OIDC_SCOPES}"`);
  const providerName = text('OIDC_PROVIDER_NAME') ?? 'Single sign-on';
  const groupsClaim = text('OIDC_GROUPS_CLAIM');
  if (groupsClaim !== undefined && !/^[\w.:/-]{1,100}$/.test(groupsClaim)) {
    throw new ConfigError(`OIDC_GROUPS_CLAIM must be a claim name such as groups, got "${groupsClaim}"`);
  }
  if (providerName.length > 60) throw new ConfigError('OIDC_PROVIDER_NAME must be at most 60 characters');
  return {
    issuerUrl: issuer!,
    clientId: clientId!,
    clientSecret: secret ? { source: 'env', text: secret } : { source: 'file', path: path.resolve(cwd, secretFile!) },
    redirectUrl: redirect,
    scopes: scopes.join(' '),
    providerName,
    autoCreate: booleanVar('OIDC_AUTO_CREATE', env.OIDC_AUTO_CREATE, false),
    disablePasswordLogin: booleanVar('OIDC_DISABLE_PASSWORD_LOGIN', env.OIDC_DISABLE_PASSWORD_LOGIN, false),
    allowHttp,
    groupsClaim: groupsClaim ?? null,
    groupsCreate: booleanVar('OIDC_GROUPS_CREATE', env.OIDC_GROUPS_CREATE, false),
  };
}

/** Pure: flags, then environment, then defaults. Throws ConfigError with a one-line message. */
export function loadConfig(flags: ConfigFlags, env: Env, cwd = process.cwd()): Config {
  const port = integer('port (--port/PORT)', pick(flags.port, env.PORT), 3000, 0, 65535);
  // An IPv6 address written as in a URL ([::1]) is bound as the address itself.
  const host = (pick(flags.host, env.HOST) ?? '0.0.0.0').replace(/^\[(.*:.*)\]$/, '$1');
  const dataDir = path.resolve(cwd, pick(flags.dataDir, env.COFFER_DATA_DIR) ?? './data');

  const levelText = (pick(flags.logLevel, env.LOG_LEVEL) ?? 'info').toLowerCase();
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(levelText)) {
    throw new ConfigError(`LOG_LEVEL must be one of debug, info, warn, error, silent, got "${levelText}"`);
  }

  const logFormat = (env.LOG_FORMAT?.trim() || 'json').toLowerCase();
  if (logFormat !== 'json' && logFormat !== 'journald') throw new ConfigError(`LOG_FORMAT must be json or journald, got "${logFormat}"`);

  let masterKey: Config['masterKey'] = { source: 'secrets' };
  if (env.COFFER_MASTER_KEY) masterKey = { source: 'env', text: env.COFFER_MASTER_KEY };
  else if (env.COFFER_MASTER_KEY_FILE) masterKey = { source: 'file', path: path.resolve(cwd, env.COFFER_MASTER_KEY_FILE) };

  const limitText = pick(flags.defaultStorageLimit, env.COFFER_DEFAULT_STORAGE_LIMIT);
  let defaultStorageLimit: number | null = null;
  if (limitText !== undefined && limitText.toLowerCase() !== 'none') {
    defaultStorageLimit = parseSize(limitText);
    if (defaultStorageLimit === null || defaultStorageLimit <= 0) {
      throw new ConfigError(
        `default storage limit (--default-storage-limit/COFFER_DEFAULT_STORAGE_LIMIT) must be a size such as 50G or 500M, got "${limitText}"`,
      );
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
  const expiryText = env.TUS_EXPIRY_HOURS?.trim();
  const tusExpiryHours = expiryText ? Number(expiryText) : 24;
  if (!/^\d*\.?\d+$/.test(expiryText ?? '24') || !(tusExpiryHours > 0 && tusExpiryHours <= 8760)) {
    throw new ConfigError(`TUS_EXPIRY_HOURS must be a number of hours above 0 and at most 8760 (a year), got "${expiryText}"`);
  }
  const storage = storageConfig(pick(flags.storage, env.COFFER_STORAGE), env, cwd);
  const search = {
    maxTextBytes: sizeVar('SEARCH_MAX_TEXT_BYTES', env.SEARCH_MAX_TEXT_BYTES, 1024 ** 2),
    maxFileBytes: sizeVar('SEARCH_MAX_FILE_BYTES', env.SEARCH_MAX_FILE_BYTES, 100 * 1024 ** 2),
    // A core left to requests and the index writer: a second extraction thread on two cores added 10% to the rate and tripled GET /api/files' p99.
    workers: integer('SEARCH_WORKERS', env.SEARCH_WORKERS, Math.max(1, os.availableParallelism() - 1), 1, 64),
  };

  const feed = env.UPDATE_FEED_URL?.trim() || null;
  if (feed !== null && !URL.canParse(feed)) throw new ConfigError(`UPDATE_FEED_URL is not a valid URL: "${feed}"`);

  const backend = env.DOCSERVER_BACKEND_URL?.trim() || null;
  if (backend !== null && !(URL.canParse(backend) && /^https?:$/.test(new URL(backend).protocol))) {
    throw new ConfigError(`DOCSERVER_BACKEND_URL must be an http:// or https:// URL, got "${backend}"`);
  }
  const publicUrl = originOnly('COFFER_PUBLIC_URL', env.COFFER_PUBLIC_URL?.trim() || null);
  const warnings = unknownCofferVariables(env);

  return Object.freeze({
    port,
    host,
    dataDir,
    logLevel: levelText as LogLevel,
    logFormat,
    masterKey,
    jwtSecret: env.JWT_SECRET || null,
    defaultStorageLimit,
    trashRetentionDays: integer('TRASH_RETENTION_DAYS', env.TRASH_RETENTION_DAYS, 30, 0, 36500),
    libraries: {
      rescanMinutes: integer('LIBRARY_RESCAN_MINUTES', env.LIBRARY_RESCAN_MINUTES, 60, 0, 525600),
      watch: integer('LIBRARY_WATCH', env.LIBRARY_WATCH, 1, 0, 1) === 1,
    },
    auditRetentionDays: integer('AUDIT_RETENTION_DAYS', env.AUDIT_RETENTION_DAYS, 90, 1, 36500),
    changesRetentionDays: integer('CHANGES_RETENTION_DAYS', env.CHANGES_RETENTION_DAYS, 30, 1, 36500),
    metricsAllowedIps: addressList('METRICS_ALLOWED_IPS', env.METRICS_ALLOWED_IPS ?? '127.0.0.1,::1,::ffff:127.0.0.1'),
    queueMetricsIntervalSeconds: integer('QUEUE_METRICS_INTERVAL_SECONDS', env.QUEUE_METRICS_INTERVAL_SECONDS, 60, 1, 86400),
    updateFeedUrl: feed,
    workerConcurrency: integer('COFFER_WORKER_CONCURRENCY', env.COFFER_WORKER_CONCURRENCY, 2, 1, 64),
    rateLimits: Object.fromEntries(
      Object.entries(RATE_LIMIT_VARS).map(([name, [variable, fallback]]) => [
        name,
        integer(variable, env[variable], fallback, 1, 1_000_000_000),
      ]),
    ) as unknown as RateLimits,
    // The runtime's own limit is 255 seconds.
    idleTimeoutSeconds: integer('COFFER_IDLE_TIMEOUT_SECONDS', env.COFFER_IDLE_TIMEOUT_SECONDS, 30, 1, 255),
    maxConnectionsPerIp: integer('COFFER_MAX_CONNECTIONS_PER_IP', env.COFFER_MAX_CONNECTIONS_PER_IP, 64, 0, 1_000_000),
    zips: {
      instance: integer('COFFER_MAX_ZIPS', env.COFFER_MAX_ZIPS, 4, 1, 1000),
      perAccount: integer('COFFER_MAX_ZIPS_PER_ACCOUNT', env.COFFER_MAX_ZIPS_PER_ACCOUNT, 2, 1, 1000),
    },
    minFreeBytes,
    tls,
    configFile: env.COFFER_CONFIG?.trim() ? path.resolve(cwd, env.COFFER_CONFIG.trim()) : DEFAULT_CONFIG_FILE,
    tusExpiryHours,
    webhooks: {
      allowedHosts: (env.WEBHOOK_ALLOWED_HOSTS ?? '')
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean),
      timeoutMs: integer('WEBHOOK_TIMEOUT_MS', env.WEBHOOK_TIMEOUT_MS, 10_000, 100, 60_000),
    },
    search,
    thumbnailConcurrency: integer(
      'THUMBNAIL_CONCURRENCY',
      env.THUMBNAIL_CONCURRENCY,
      Math.max(1, Math.floor(os.availableParallelism() / 2)),
      1,
      64,
    ),
    thumbnailMaxPixels: integer('THUMBNAIL_MAX_PIXELS', env.THUMBNAIL_MAX_PIXELS, 100_000_000, 1, 1_000_000_000),
    ffmpegPath: ffmpegPath(env.FFMPEG_PATH, env.PATH, warnings),
    storage,
    docserverAutosaveIntervalMs: autosaveInterval(env.DOCSERVER_AUTOSAVE_INTERVAL_MS, warnings),
    docserverBackendUrl: backend === null ? null : new URL(backend).href.replace(/\/+$/, ''),
    mapTileUrl: mapTileUrl(env.MAP_TILE_URL, warnings),
    publicUrl,
    warnings,
    idp: idpConfig(env, cwd),
    backup: backupConfig(env, cwd, dataDir),
    replication: replicationConfig(env, cwd),
  });
}

/** The address people open Coffer at, as its origin; a path is refused, as Coffer is served at the root of its address. */
function originOnly(name: string, text: string | null): string | null {
  if (text === null) return null;
  const url = URL.canParse(text) ? new URL(text) : null;
  if (!url || !/^https?:$/.test(url.protocol)) {
    throw new ConfigError(`${name} must be an http:// or https:// URL such as https://files.example.com, got "${text}"`);
  }
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(
      `${name} takes only the scheme, host and port people open Coffer at (${url.origin}): Coffer is served at the root of its address, got "${text}"`,
    );
  }
  return url.origin;
}

/** Comma-separated IP addresses and CIDR ranges; any other entry is refused by name, as it would match nobody. */
function addressList(name: string, text: string): string[] {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = entries.find((e) => !isIpAddress(e) && !isCidr(e));
  if (bad !== undefined) {
    throw new ConfigError(`${name} takes IP addresses and CIDR ranges separated by commas (e.g. 127.0.0.1,10.0.0.0/8), got "${bad}"`);
  }
  return entries;
}

function sizeVar(name: string, text: string | undefined, fallback: number): number {
  const t = text?.trim();
  if (!t) return fallback;
  const bytes = parseSize(t);
  if (bytes === null || bytes <= 0) throw new ConfigError(`${name} must be a size such as 1M or 100M, got "${text}"`);
  return bytes;
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

export function parseBackupSchedule(text: string | undefined): BackupSchedule {
  const t = (text ?? '').trim().toLowerCase().replace(/\s+/g, ' ');
  if (t === '' || t === 'off') return { kind: 'off' };
  if (t === 'hourly') return { kind: 'hourly' };
  const m = /^(daily|weekly ([a-z]+)) (\d{1,2}):(\d{2})$/.exec(t);
  const hour = Number(m?.[3]);
  const minute = Number(m?.[4]);
  const day = m?.[2] ? WEEKDAYS.findIndex((d) => d === m[2] || d.slice(0, 3) === m[2]) : 0;
  if (!m || hour > 23 || minute > 59 || day < 0) {
    throw new ConfigError(
      `BACKUP_SCHEDULE must be off, hourly, "daily HH:MM" or "weekly DAY HH:MM" (e.g. "weekly sun 03:30"), got "${text}"`,
    );
  }
  return m[2] ? { kind: 'weekly', day, hour, minute } : { kind: 'daily', hour, minute };
}

function backupConfig(env: Env, cwd: string, dataDir: string): BackupConfig {
  const schedule = parseBackupSchedule(env.BACKUP_SCHEDULE);
  const keep = integer('BACKUP_KEEP', env.BACKUP_KEEP, 7, 1, 10_000);
  const passphraseFile = env.BACKUP_PASSPHRASE_FILE?.trim() ? path.resolve(cwd, env.BACKUP_PASSPHRASE_FILE.trim()) : null;
  if (!env.BACKUP_S3_BUCKET?.trim()) {
    const dir = env.BACKUP_DIR?.trim() ? path.resolve(cwd, env.BACKUP_DIR.trim()) : path.resolve(dataDir, '..', 'backups');
    return { schedule, keep, destination: { kind: 'dir', dir }, passphraseFile };
  }
  // A backup that leaves the machine holds the master key: it goes encrypted or not at all.
  if (!passphraseFile)
    throw new ConfigError('BACKUP_PASSPHRASE_FILE is required when BACKUP_S3_BUCKET is set: backups sent to a bucket are encrypted');
  const s3 = backupBucket(env.BACKUP_S3_BUCKET!, env.BACKUP_S3_PREFIX ?? 'coffer-backups/', env, cwd, 'BACKUP_S3_BUCKET is set');
  return { schedule, keep, destination: { kind: 's3', s3 }, passphraseFile };
}

function replicationConfig(env: Env, cwd: string): ReplicationConfig {
  const text = env.REPLICATE_TO?.trim();
  const retention = (env.REPLICATE_RETENTION ?? '7d').trim();
  const m = /^(\d+)\s*([dhm])$/i.exec(retention);
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;
  const retentionMs = m ? Number(m[1]) * unit[m[2]!.toLowerCase() as keyof typeof unit] : Number.NaN;
  if (!(retentionMs >= 60_000 && retentionMs <= 3650 * 86_400_000)) {
    throw new ConfigError(`REPLICATE_RETENTION must be a duration such as 7d, 36h or 90m (at least 1m), got "${env.REPLICATE_RETENTION}"`);
  }
  const destination = text ? parseReplicaDestination(text, env, cwd, 'REPLICATE_TO') : null;
  if (destination && !env.BACKUP_PASSPHRASE_FILE?.trim()) {
    throw new ConfigError('BACKUP_PASSPHRASE_FILE is required when REPLICATE_TO is set: a replica is always encrypted');
  }
  return {
    destination,
    intervalMs: integer('REPLICATE_INTERVAL_MS', env.REPLICATE_INTERVAL_MS, 1000, 50, 3_600_000),
    retentionMs,
    maxLagBytes: sizeVar('REPLICATE_MAX_LAG_BYTES', env.REPLICATE_MAX_LAG_BYTES, 1024 ** 3),
  };
}

/** REPLICATE_TO or a command's DEST: `s3://bucket/prefix` (endpoint and keys from BACKUP_S3_*, then S3_*), else a directory. */
export function parseReplicaDestination(text: string, env: Env, cwd: string, what = 'DEST'): ReplicaDestination {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/i.exec(text.trim());
  if (!m) {
    // A bucket or URL mistyped would otherwise be replicated into a directory named like it, under the working directory.
    if (/^(s3:|[a-z][a-z0-9+.-]*:\/\/)/i.test(text.trim()))
      throw new ConfigError(`${what} must be a directory or s3://bucket/prefix, got "${text.trim()}"`);
    return { kind: 'dir', dir: path.resolve(cwd, text.trim()) };
  }
  const prefix = m[2] ? m[2].replace(/\/*$/, '/') : '';
  const s3 = backupBucket(m[1]!, prefix, env, cwd, `${what} names a bucket`);
  return { kind: 's3', s3 };
}

/**
 * A bucket of backups or replicas: BACKUP_S3_* first, then the storage's S3_* settings, so one store can hold
 * both; errors name the setting a value was read from (`S3_REGION (read for BACKUP_S3_REGION)`) and `why` the
 * bucket is needed.
 */
function backupBucket(bucket: string, prefix: string, env: Env, cwd: string, why: string): S3Config {
  const s3Env: Env = { S3_BUCKET: bucket, S3_PREFIX: prefix };
  for (const name of BUCKET_SETTINGS) {
    s3Env[`S3_${name}`] = env[`BACKUP_S3_${name}`] ?? env[`S3_${name}`];
  }
  const readFrom = (name: string) =>
    (BUCKET_SETTINGS as readonly string[]).includes(name) && env[`BACKUP_S3_${name}`] === undefined && env[`S3_${name}`] !== undefined
      ? `S3_${name} (read for BACKUP_S3_${name})`
      : `BACKUP_S3_${name}`;
  let s3: StorageConfig;
  try {
    s3 = storageConfig('s3', s3Env, cwd);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(err.message.replace(/\bS3_([A-Z_]+)/g, (_, name: string) => readFrom(name)).replace('COFFER_STORAGE=s3', why));
  }
  // storageConfig('s3') always answers a bucket; this narrows its type.
  if (s3.driver !== 's3') throw new ConfigError(`${why}: not a bucket`);
  return s3;
}

function booleanVar(name: string, text: string | undefined, fallback: boolean): boolean {
  const t = text?.trim().toLowerCase();
  if (!t) return fallback;
  if (['true', '1', 'yes'].includes(t)) return true;
  if (['false', '0', 'no'].includes(t)) return false;
  throw new ConfigError(`${name} must be true or false, got "${text}"`);
}

function storageConfig(driverText: string | undefined, env: Env, cwd: string): StorageConfig {
  const driver = (driverText ?? 'local').trim().toLowerCase();
  if (driver === 'local') return { driver: 'local' };
  if (driver !== 's3') throw new ConfigError(`COFFER_STORAGE (--storage) must be local or s3, got "${driverText}"`);
  const required = (name: string) => {
    const v = env[name]?.trim();
    if (!v) throw new ConfigError(`${name} is required when COFFER_STORAGE=s3`);
    return v;
  };
  const bucket = required('S3_BUCKET');
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{1,254}$/.test(bucket)) {
    throw new ConfigError(`S3_BUCKET must be a bucket name (letters, digits, dots, hyphens and underscores), got "${bucket}"`);
  }
  const endpoint = env.S3_ENDPOINT?.trim().replace(/\/+$/, '') || null;
  if (endpoint !== null && !/^https?:\/\/[^/]/.test(endpoint)) {
    throw new ConfigError(`S3_ENDPOINT must be an http:// or https:// URL such as http://127.0.0.1:9000, got "${endpoint}"`);
  }
  const region = env.S3_REGION?.trim() || 'us-east-1';
  if (!/^[a-z0-9-]+$/i.test(region)) throw new ConfigError(`S3_REGION must be a region name such as us-east-1, got "${region}"`);
  const rawPrefix = (env.S3_PREFIX ?? '').trim().replace(/^\/+/, '');
  if (/[\x00-\x1f\x7f\\]/.test(rawPrefix) || rawPrefix.split('/').some((part) => part === '.' || part === '..')) {
    throw new ConfigError(
      `S3_PREFIX must be a plain key prefix such as coffer/ (no control characters, backslashes, . or ..), got "${env.S3_PREFIX}"`,
    );
  }
  const prefix = rawPrefix === '' || rawPrefix.endsWith('/') ? rawPrefix : `${rawPrefix}/`;
  const accessKeyId = required('S3_ACCESS_KEY_ID');
  let secretAccessKey: S3Config['secretAccessKey'];
  if (env.S3_SECRET_ACCESS_KEY?.trim()) secretAccessKey = { source: 'env', text: env.S3_SECRET_ACCESS_KEY.trim() };
  else if (env.S3_SECRET_ACCESS_KEY_FILE?.trim())
    secretAccessKey = { source: 'file', path: path.resolve(cwd, env.S3_SECRET_ACCESS_KEY_FILE.trim()) };
  else throw new ConfigError('S3_SECRET_ACCESS_KEY (or S3_SECRET_ACCESS_KEY_FILE) is required when COFFER_STORAGE=s3');
  const partText = env.S3_PART_SIZE?.trim();
  const partSize = partText ? parseSize(partText) : 8 * 1024 * 1024;
  if (partSize === null || partSize < 5 * 1024 * 1024 || partSize > 512 * 1024 * 1024) {
    throw new ConfigError(`S3_PART_SIZE must be a size from 5M to 512M, got "${partText}"`);
  }
  return {
    driver: 's3',
    bucket,
    endpoint,
    region,
    prefix,
    accessKeyId,
    secretAccessKey,
    forcePathStyle: booleanVar('S3_FORCE_PATH_STYLE', env.S3_FORCE_PATH_STYLE, endpoint !== null),
    partSize,
    timeoutMs: integer('S3_TIMEOUT_SECONDS', env.S3_TIMEOUT_SECONDS, 30, 1, 3600) * 1000,
  };
}

/**
 * The files the configuration reads secrets from, each with what it holds: the master key, a bucket's key, the
 * provider's client secret, the backup passphrase and the TLS private key.
 */
export function secretFilesOf(config: Config): Array<{ path: string; what: string }> {
  const out: Array<{ path: string; what: string }> = [];
  const file = (secret: SecretSetting | { source: 'secrets' }, what: string) => {
    if (secret.source === 'file') out.push({ path: secret.path, what });
  };
  file(config.masterKey, 'master key file');
  if (config.storage.driver === 's3') file(config.storage.secretAccessKey, 'S3 secret key file');
  if (config.backup.destination.kind === 's3') file(config.backup.destination.s3.secretAccessKey, 'backup bucket secret key file');
  if (config.replication.destination?.kind === 's3')
    file(config.replication.destination.s3.secretAccessKey, 'replica bucket secret key file');
  if (config.idp) file(config.idp.clientSecret, 'single sign-on client secret file');
  if (config.backup.passphraseFile) out.push({ path: config.backup.passphraseFile, what: 'backup passphrase file' });
  if (config.tls) out.push({ path: config.tls.key, what: 'TLS private key' });
  return out;
}

/** The text of a secret setting; a file that cannot be read or is empty is a one-line StartupError naming `fileVariable`. */
export function secretText(secret: SecretSetting, fileVariable: string): string {
  if (secret.source === 'env') return secret.text;
  let text: string;
  try {
    text = fs.readFileSync(secret.path, 'utf8').trim();
  } catch (err) {
    throw new StartupError(`cannot read ${fileVariable} ${secret.path} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  if (!text) throw new StartupError(`${fileVariable} ${secret.path} is empty`);
  return text;
}
