import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';

/** Instance settings with their defaults (COMPAT.md "Instance defaults"). */
export interface InstanceSettings {
  signupEnabled: boolean;
  hideFileExtensions: boolean;
  desktopOnlyAccess: boolean;
  allowPasswordChange: boolean;
  maxUploadBytes: number;
  shareBaseUrl: string | null;
  docserver: { url: string; jwtSecret: string } | null;
  knownProxies: string[];
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
};

export type SettingKey = keyof InstanceSettings;

/**
 * Reads and writes the settings table. Reads are cached and the cache is dropped whenever SQLite's
 * data_version says another connection (the CLI beside the server) committed, so no read goes stale.
 */
export class SettingsService {
  private readonly sqlite: Database;
  private cache: InstanceSettings | null = null;
  private cachedVersion = -1;

  constructor(private readonly ctx: CoreContext) {
    this.sqlite = ctx.db.$client;
  }

  all(): InstanceSettings {
    const version = this.sqlite.query<{ data_version: number }, []>('PRAGMA data_version').get()!.data_version;
    if (this.cache && version === this.cachedVersion) return this.cache;
    const values: Record<string, unknown> = { ...SETTING_DEFAULTS };
    for (const row of this.sqlite.query<{ key: string; value: string }, []>('SELECT key, value FROM settings').all()) {
      if (row.key in SETTING_DEFAULTS) values[row.key] = JSON.parse(row.value);
    }
    this.cache = Object.freeze(values) as unknown as InstanceSettings;
    this.cachedVersion = version;
    return this.cache;
  }

  get<K extends SettingKey>(key: K): InstanceSettings[K] {
    return this.all()[key];
  }

  set<K extends SettingKey>(key: K, value: InstanceSettings[K]): void {
    this.sqlite
      .query('INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at')
      .run(key, JSON.stringify(value), this.ctx.clock.now());
    // Our own writes do not change data_version for this connection.
    this.cache = null;
  }
}
