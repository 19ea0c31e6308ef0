import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import type { DatabaseRepo } from '../../db/repos/database.ts';
import type { SettingsRepo } from '../../db/repos/settings.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { validationFailed } from '../../errors.ts';
import { isCidr, isHostname, isIpAddress } from '../../lib/ip.ts';
import { actorFields, AuditActions, type Actor, type AuditService } from './audit.ts';
import type { Principal } from '../identity/principal.ts';
import type { VersionsConfig } from '../../contract/admin.ts';

/** Instance settings with their defaults (docs/compatibility.md › Instance defaults). */
export interface InstanceSettings {
  signupEnabled: boolean;
  hideFileExtensions: boolean;
  desktopOnlyAccess: boolean;
  allowPasswordChange: boolean;
  maxUploadBytes: number;
  shareBaseUrl: string | null;
  docserver: { url: string; jwtSecret: string } | null;
  knownProxies: string[];
  /** WebDAV accepts an account's own password (logins without two-step verification); else app passwords only. */
  davAccountPasswords: boolean;
  /** Words of file contents are indexed for search (docs/search.md); off deletes the index. */
  contentSearch: boolean;
  /** Overwrites keep the replaced content as a version. */
  versionsEnabled: boolean;
  /** Past the first day, one version per day is kept up to this many days (VERSIONS_RETENTION_DAYS). */
  versionsRetentionDays: number;
  /** At most this many versions per file; the oldest goes first (VERSIONS_MAX_PER_FILE). */
  versionsMaxPerFile: number;
  /** Owners may share items with other accounts of this instance (members); off, existing member shares stop working. */
  peopleSharing: boolean;
}

export const SETTING_DEFAULTS: InstanceSettings = {
  signupEnabled: true,
  hideFileExtensions: false,
  desktopOnlyAccess: false,
  allowPasswordChange: true,
  maxUploadBytes: 10 * 1024 ** 3,
  shareBaseUrl: null,
  docserver: null,
  knownProxies: [],
  davAccountPasswords: false,
  contentSearch: false,
  versionsEnabled: true,
  versionsRetentionDays: 30,
  versionsMaxPerFile: 100,
  peopleSharing: true,
};

export type SettingKey = keyof InstanceSettings;

const MIN_UPLOAD_BYTES = 1048576;
const MAX_UPLOAD_BYTES = 107374182400;

const httpUrl = z
  .string()
  .trim()
  .max(2048, 'URL must be at most 2048 characters')
  .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'Enter a valid http:// or https:// URL')
  .transform((u) => u.replace(/\/+$/, ''));

/** As COFFER_PUBLIC_URL: share links are served at the root of their address, so a path (one a reverse proxy adds) is refused, not dropped. */
const originUrl = httpUrl
  .refine((u) => {
    const url = new URL(u);
    return url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  }, 'Enter only the scheme, host and port, such as https://share.example.com: Coffer serves share links at the root of their address, not under a path')
  .transform((u) => new URL(u).origin);

const proxyEntry = z
  .string()
  .trim()
  .min(1, 'A proxy entry cannot be empty')
  .max(253, 'Each proxy entry must be at most 253 characters')
  .refine((e) => isIpAddress(e) || isCidr(e) || isHostname(e), 'Each entry must be an IP address, a CIDR range or a hostname');

/** What each setting accepts; the API and `coffer settings set` validate through these. */
const SETTING_SCHEMAS: { [K in SettingKey]: z.ZodType<InstanceSettings[K]> } = {
  signupEnabled: z.boolean(),
  hideFileExtensions: z.boolean(),
  desktopOnlyAccess: z.boolean(),
  allowPasswordChange: z.boolean(),
  maxUploadBytes: z
    .number()
    .int('maxBytes must be a whole number of bytes')
    .min(MIN_UPLOAD_BYTES, `maxBytes must be at least ${MIN_UPLOAD_BYTES} (1 MiB)`)
    .max(MAX_UPLOAD_BYTES, `maxBytes must be at most ${MAX_UPLOAD_BYTES} (100 GiB)`),
  shareBaseUrl: originUrl.nullable(),
  docserver: z.object({ url: httpUrl, jwtSecret: z.string().min(1).max(1024) }).nullable(),
  knownProxies: z.array(proxyEntry).max(100, 'At most 100 known proxies'),
  davAccountPasswords: z.boolean(),
  contentSearch: z.boolean({ error: 'enabled must be true or false' }),
  versionsEnabled: z.boolean(),
  versionsRetentionDays: z
    .number()
    .int('retentionDays must be a whole number of days')
    .min(1, 'retentionDays must be at least 1')
    .max(3650, 'retentionDays must be at most 3650 (10 years)'),
  versionsMaxPerFile: z
    .number()
    .int('maxPerFile must be a whole number')
    .min(1, 'maxPerFile must be at least 1')
    .max(1000, 'maxPerFile must be at most 1000'),
  peopleSharing: z.boolean(),
};

/** How stale a read may be after another process (the CLI) commits: data_version is asked at most this often. */
export const SETTINGS_RECHECK_MS = 100;

/**
 * Reads and writes the settings table. Reads are cached and the cache is dropped when SQLite's
 * data_version says another connection (the CLI beside the server) committed; that is asked at most once
 * per SETTINGS_RECHECK_MS (every request reads settings; the query was a third of a profile request's CPU).
 */
export class SettingsService {
  private cache: InstanceSettings | null = null;
  private cachedVersion = -1;
  private checkedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly repo: SettingsRepo,
    private readonly database: DatabaseRepo,
    private readonly users: UsersRepo,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  /**
   * GET /api/user/signup-status: the flags every signed-in user sees; the admin also sees that it may
   * change them and how many logins exist.
   */
  signupStatus(principal: Principal) {
    const s = this.all();
    const can = principal.isAdmin;
    const base = {
      signupEnabled: s.signupEnabled,
      canToggle: can,
      hideFileExtensions: s.hideFileExtensions,
      canToggleHideFileExtensions: can,
      desktopOnlyAccess: s.desktopOnlyAccess,
      canToggleDesktopOnlyAccess: can,
      allowPasswordChange: s.allowPasswordChange,
      canToggleAllowPasswordChange: can,
    };
    if (!can) return base;
    const totalUsers = this.users.count();
    return { ...base, totalUsers, additionalUsers: Math.max(0, totalUsers - 1) };
  }

  /**
   * Values an earlier version stored that this one reads differently, each with what to do (the start-up log and
   * `coffer doctor` name them): a share base URL with a path, of which links use only the origin.
   */
  storedNotices(): string[] {
    const base = this.get('shareBaseUrl');
    if (!base || !URL.canParse(base)) return [];
    const url = new URL(base);
    if (url.pathname === '/' && !url.search && !url.hash) return [];
    return [
      `the share base URL ${base} has a path, which Coffer ignores: share links are ${url.origin}/s/…; serve Coffer's links at the root of ${url.origin} (or another address's root), then set it there: Admin → Settings → Share base URL, or coffer settings set shareBaseUrl ${url.origin}`,
    ];
  }

  /** The document server as the admin's settings page shows it: whether a secret is set, never the secret. */
  docserverView(): { jwtSecretSet: boolean; url: string } {
    const value = this.get('docserver');
    return { jwtSecretSet: value !== null, url: value?.url ?? '' };
  }

  all(): InstanceSettings {
    // Real monotonic time, not the injected clock: a test's frozen clock must not hide another process's change.
    const now = performance.now();
    if (this.cache && now - this.checkedAt < SETTINGS_RECHECK_MS) return this.cache;
    const version = this.database.dataVersion();
    this.checkedAt = now;
    if (this.cache && version === this.cachedVersion) return this.cache;
    const values: Record<string, unknown> = { ...SETTING_DEFAULTS };
    for (const row of this.repo.all()) {
      if (row.key in SETTING_DEFAULTS) values[row.key] = JSON.parse(row.value);
    }
    this.cache = Object.freeze(values) as unknown as InstanceSettings;
    this.cachedVersion = version;
    return this.cache;
  }

  get<K extends SettingKey>(key: K): InstanceSettings[K] {
    return this.all()[key];
  }

  /** Validates and stores a setting; bad values are 422 with details naming `field` (the API's field name). `by` is audited. */
  update<K extends SettingKey>(key: K, value: unknown, field: string = key, by?: Actor): InstanceSettings[K] {
    const parsed = SETTING_SCHEMAS[key].safeParse(value);
    if (!parsed.success) {
      throw validationFailed(parsed.error.issues.map((i) => ({ field: [field, ...i.path.map(String)].join('.'), message: i.message })));
    }
    this.set(key, parsed.data);
    if (by) this.recordChange(key, parsed.data, by);
    return parsed.data;
  }

  /** File versions as Admin → Instance shows them. */
  versionsView(): VersionsConfig {
    const s = this.all();
    return { enabled: s.versionsEnabled, retentionDays: s.versionsRetentionDays, maxPerFile: s.versionsMaxPerFile };
  }

  /** PUT /api/user/versions-config: any of the three, all checked (422 naming each bad field) before any is stored. */
  updateVersions(input: Partial<Record<keyof VersionsConfig, unknown>>, by?: Actor): VersionsConfig {
    const fields = { enabled: 'versionsEnabled', retentionDays: 'versionsRetentionDays', maxPerFile: 'versionsMaxPerFile' } as const;
    const issues: Array<{ field: string; message: string }> = [];
    const parsed: Array<[SettingKey, unknown]> = [];
    for (const [field, key] of Object.entries(fields) as Array<[keyof VersionsConfig, SettingKey]>) {
      if (input[field] === undefined) continue;
      const r = SETTING_SCHEMAS[key].safeParse(input[field]);
      if (r.success) parsed.push([key, r.data]);
      else issues.push(...r.error.issues.map((i) => ({ field, message: i.message })));
    }
    if (issues.length) throw validationFailed(issues);
    for (const [key, value] of parsed) {
      this.set(key, value as never);
      if (by) this.recordChange(key, value as never, by);
    }
    return this.versionsView();
  }

  /** The document server needs its URL and JWT secret together; both empty (or null) turns it off. */
  setDocserver(input: { url?: string | null; jwtSecret?: string | null }, by?: Actor): InstanceSettings['docserver'] {
    const url = input.url?.trim() || null;
    const jwtSecret = input.jwtSecret || null;
    if (!url && !jwtSecret) return this.update('docserver', null, 'docserver', by);
    if (!url || !jwtSecret) {
      const missing = url ? 'jwtSecret' : 'url';
      throw validationFailed([
        { field: missing, message: 'Give the document server URL and JWT secret together, or neither to disable it' },
      ]);
    }
    const parsed = SETTING_SCHEMAS.docserver.safeParse({ url, jwtSecret });
    if (!parsed.success) {
      throw validationFailed(parsed.error.issues.map((i) => ({ field: i.path.map(String).join('.') || 'url', message: i.message })));
    }
    this.set('docserver', parsed.data);
    if (by) this.recordChange('docserver', parsed.data, by);
    return parsed.data;
  }

  private recordChange<K extends SettingKey>(key: K, value: InstanceSettings[K], by: Actor): void {
    // The document server's JWT secret never reaches the audit log.
    const shown = key === 'docserver' ? (value ? { url: (value as { url: string }).url, jwtSecretSet: true } : null) : value;
    this.audit.record({
      action: AuditActions.settingsUpdate,
      ...actorFields(by),
      targetType: 'setting',
      targetId: key,
      details: { value: shown },
    });
  }

  set<K extends SettingKey>(key: K, value: InstanceSettings[K]): void {
    this.repo.set(key, JSON.stringify(value), this.clock.now());
    // Our own writes do not change data_version for this connection.
    this.cache = null;
  }
}
