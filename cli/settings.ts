import type { Command } from 'commander';
import type { AppContext } from '../src/context.ts';
import { parseSize } from '../src/contract/size.ts';
import type { InstanceSettings, SettingKey } from '../src/services/admin/settings.ts';
import { action, adminCommand, print, printJson, readSecret, UsageError, withContext } from './common.ts';

interface Flags {
  dataDir?: string;
  json?: boolean;
}

// Loaded when a settings command runs: help and the other commands start without the settings service (and zod).
async function settingKeys(): Promise<SettingKey[]> {
  const { SETTING_DEFAULTS } = await import('../src/services/admin/settings.ts');
  return Object.keys(SETTING_DEFAULTS) as SettingKey[];
}

const VALUE_HELP = `Settings and the values they take:
  signupEnabled        true | false          public signup
  hideFileExtensions   true | false          show names without extensions
  desktopOnlyAccess    true | false          only the desktop app may use the instance
  allowPasswordChange  true | false          users may change their own password
  maxUploadBytes       size (10G, 500M, or bytes; 1M to 100G)
  shareBaseUrl         URL | none            origin used in share links
  docserver            URL | none            document server; its JWT secret is prompted for, or read from stdin
  knownProxies         list | none           comma-separated IPs, CIDR ranges or hostnames (restart to apply)
  davAccountPasswords  true | false          WebDAV also takes account passwords (logins without two-step verification)
  contentSearch        true | false          index words of file contents for search; false deletes the index
  versionsEnabled      true | false          overwrites keep the replaced content as a version
  versionsRetentionDays  days (1 to 3650)    how long daily versions are kept (default 30)
  versionsMaxPerFile   number (1 to 1000)    versions kept per file, the oldest goes first (default 100)
  peopleSharing        true | false          owners may share items with other accounts of the instance`;

async function settingKey(name: string): Promise<SettingKey> {
  const keys = await settingKeys();
  const key = keys.find((k) => k.toLowerCase() === name.toLowerCase());
  if (!key) throw new UsageError(`unknown setting "${name}"; one of: ${keys.join(', ')}`);
  return key;
}

/** What `get` shows: everything but the document server's secret. */
function shown<K extends SettingKey>(key: K, value: InstanceSettings[K]): unknown {
  if (key !== 'docserver') return value;
  const d = value as InstanceSettings['docserver'];
  return d ? { url: d.url, jwtSecretSet: true } : null;
}

function booleanOf(text: string): boolean {
  if (/^(true|on|yes|1)$/i.test(text)) return true;
  if (/^(false|off|no|0)$/i.test(text)) return false;
  throw new UsageError(`expected true or false, got "${text}"`);
}

async function apply(ctx: AppContext, key: SettingKey, text: string): Promise<unknown> {
  const { settings } = ctx.services;
  const none = /^(none|null)$/i.test(text.trim()) || text.trim() === '';
  switch (key) {
    case 'signupEnabled':
    case 'hideFileExtensions':
    case 'desktopOnlyAccess':
    case 'allowPasswordChange':
    case 'davAccountPasswords':
    case 'versionsEnabled':
    case 'peopleSharing':
      return settings.update(key, booleanOf(text), key, 'cli');
    case 'contentSearch':
      return ctx.services.contentSearch.setEnabled(booleanOf(text), key, 'cli').enabled;
    case 'versionsRetentionDays':
    case 'versionsMaxPerFile': {
      const n = Number(text.trim());
      if (!/^\d+$/.test(text.trim())) throw new UsageError(`expected a whole number, got "${text}"`);
      return settings.update(key, n, key, 'cli');
    }
    case 'maxUploadBytes': {
      const bytes = parseSize(text);
      if (bytes === null) throw new UsageError(`not a size: "${text}" (use e.g. 10G, 500M, or a number of bytes)`);
      return settings.update(key, bytes, key, 'cli');
    }
    case 'shareBaseUrl':
      return settings.update(key, none ? null : text, key, 'cli');
    case 'knownProxies':
      return settings.update(
        key,
        none
          ? []
          : text
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
        key,
        'cli',
      );
    case 'docserver': {
      if (none) return shown('docserver', settings.setDocserver({ url: null, jwtSecret: null }, 'cli'));
      const jwtSecret = await readSecret('Document server JWT secret');
      return shown('docserver', settings.setDocserver({ url: text, jwtSecret }, 'cli'));
    }
  }
}

export function registerSettings(program: Command): void {
  const settings = program.command('settings').description('read or change the instance settings the admin edits in the web app');

  adminCommand(
    settings.command('get [key]').description('print one setting, or all of them').addHelpText('after', `\n${VALUE_HELP}`),
  ).action(
    action((name: string | undefined, opts: Flags) =>
      withContext(opts, async (ctx) => {
        const all = ctx.services.settings.all();
        const keys = name ? [await settingKey(name)] : await settingKeys();
        const values = Object.fromEntries(keys.map((k) => [k, shown(k, all[k])]));
        if (opts.json) return printJson(name ? values[keys[0]!] : values);
        for (const k of keys) print(`${k} = ${JSON.stringify(values[k])}`);
      }),
    ),
  );

  adminCommand(
    settings
      .command('set <key> <value>')
      .description('change a setting; the server sees it on its next request')
      .addHelpText('after', `\n${VALUE_HELP}`),
  ).action(
    action((name: string, text: string, opts: Flags) =>
      withContext(opts, async (ctx) => {
        const key = await settingKey(name);
        const value = await apply(ctx, key, text);
        if (opts.json) return printJson({ [key]: value, ...(key === 'knownProxies' ? { restartRequired: true } : {}) });
        print(`${key} = ${JSON.stringify(value)}`);
        if (key === 'knownProxies') print('restart the server for the new list to take effect');
      }),
    ),
  );
}
