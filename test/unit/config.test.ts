import { describe, expect, test } from 'bun:test';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { ConfigError, ENVIRONMENT_HELP, loadConfig, parseEnvFile, SETTING_NAMES, withConfigFile } from '../../src/config.ts';
import { tempDir } from '../helpers/run-root.ts';

describe('loadConfig', () => {
  test('REPLICATE_*: off by default; a directory or s3://bucket/prefix with the backup bucket settings; the passphrase required; bad values named', () => {
    expect(loadConfig({}, {}, '/srv').replication).toEqual({
      destination: null,
      intervalMs: 1000,
      retentionMs: 7 * 86_400_000,
      maxLagBytes: 1024 ** 3,
    });
    const pass = { BACKUP_PASSPHRASE_FILE: '/etc/coffer/pass' };
    expect(loadConfig({}, { ...pass, REPLICATE_TO: 'replica' }, '/srv').replication.destination).toEqual({
      kind: 'dir',
      dir: '/srv/replica',
    });
    const bucket = loadConfig(
      {},
      { ...pass, REPLICATE_TO: 's3://box/one', BACKUP_S3_ENDPOINT: 'http://nas:3900', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' },
      '/srv',
    ).replication.destination;
    expect(bucket).toMatchObject({ kind: 's3', s3: { bucket: 'box', prefix: 'one/', endpoint: 'http://nas:3900', accessKeyId: 'k' } });
    expect(loadConfig({}, { ...pass, REPLICATE_TO: 'r', REPLICATE_RETENTION: '36h' }).replication.retentionMs).toBe(36 * 3_600_000);
    expect(() => loadConfig({}, { REPLICATE_TO: '/mnt/replica' })).toThrow(/BACKUP_PASSPHRASE_FILE is required when REPLICATE_TO is set/);
    expect(() => loadConfig({}, { ...pass, REPLICATE_TO: 'r', REPLICATE_RETENTION: 'a week' })).toThrow(
      /REPLICATE_RETENTION must be a duration/,
    );
    expect(() => loadConfig({}, { ...pass, REPLICATE_TO: 'r', REPLICATE_INTERVAL_MS: '10' })).toThrow(
      /REPLICATE_INTERVAL_MS must be between 50/,
    );
    expect(() => loadConfig({}, { ...pass, REPLICATE_TO: 's3://box/one' })).toThrow(/BACKUP_S3_ACCESS_KEY_ID/);
  });

  test('defaults: port 3000, host 0.0.0.0, ./data', () => {
    const c = loadConfig({}, {}, '/srv');
    expect(c.port).toBe(3000);
    expect(c.host).toBe('0.0.0.0');
    expect(c.dataDir).toBe(path.resolve('/srv/data'));
    expect(c.masterKey).toEqual({ source: 'secrets' });
    expect(c.defaultStorageLimit).toBeNull();
    expect(c.trashRetentionDays).toBe(30);
  });

  test("every rate limiter defaults to the contract's count (the password-hash budget to 60) and is set by its own variable; a bad value names it", () => {
    expect(loadConfig({}, {}).rateLimits).toEqual({
      general: 10_000,
      auth: 25,
      upload: 20_000,
      mfa: 5,
      backupCodes: 3,
      passwordHashes: 60,
      memberLookups: 30,
    });
    const env = {
      COFFER_GENERAL_RATE_LIMIT: '1',
      COFFER_AUTH_RATE_LIMIT: '2',
      COFFER_UPLOAD_RATE_LIMIT: '3',
      COFFER_MFA_RATE_LIMIT: '4',
      COFFER_BACKUP_CODES_RATE_LIMIT: '5',
      COFFER_PASSWORD_HASH_RATE_LIMIT: '6',
      COFFER_MEMBER_LOOKUP_RATE_LIMIT: '7',
    };
    expect(loadConfig({}, env).rateLimits).toEqual({
      general: 1,
      auth: 2,
      upload: 3,
      mfa: 4,
      backupCodes: 5,
      passwordHashes: 6,
      memberLookups: 7,
    });
    expect(() => loadConfig({}, { COFFER_UPLOAD_RATE_LIMIT: 'lots' })).toThrow(/COFFER_UPLOAD_RATE_LIMIT must be a whole number/);
    expect(() => loadConfig({}, { COFFER_AUTH_RATE_LIMIT: '0' })).toThrow(/COFFER_AUTH_RATE_LIMIT must be between 1 and/);
  });

  test('environment overrides defaults, flags override environment', () => {
    const env = { PORT: '4000', HOST: '127.0.0.1', COFFER_DATA_DIR: '/var/lib/coffer' };
    expect(loadConfig({}, env).port).toBe(4000);
    expect(loadConfig({}, env).dataDir).toBe('/var/lib/coffer');
    const c = loadConfig({ port: '5000', host: '::1', dataDir: '/tmp/x' }, env);
    expect([c.port, c.host, c.dataDir]).toEqual([5000, '::1', '/tmp/x']);
  });

  test('master key from env wins over the key file, which wins over the secrets file', () => {
    expect(loadConfig({}, { COFFER_MASTER_KEY: 'abc', COFFER_MASTER_KEY_FILE: '/k' }).masterKey).toEqual({ source: 'env', text: 'abc' });
    expect(loadConfig({}, { COFFER_MASTER_KEY_FILE: '/k' }, '/').masterKey).toEqual({ source: 'file', path: '/k' });
  });

  test('storage limit accepts sizes', () => {
    expect(loadConfig({ defaultStorageLimit: '10G' }, {}).defaultStorageLimit).toBe(10 * 1024 ** 3);
    expect(loadConfig({}, { COFFER_DEFAULT_STORAGE_LIMIT: '500M' }).defaultStorageLimit).toBe(500 * 1024 ** 2);
    expect(loadConfig({}, { COFFER_DEFAULT_STORAGE_LIMIT: 'none' }).defaultStorageLimit).toBeNull();
  });

  test('idle timeout and the per-address cap: defaults that keep LAN use smooth, both configurable', () => {
    const d = loadConfig({}, {});
    expect(d.idleTimeoutSeconds).toBe(30);
    expect(d.maxConnectionsPerIp).toBe(64);
    const c = loadConfig({}, { COFFER_IDLE_TIMEOUT_SECONDS: '90', COFFER_MAX_CONNECTIONS_PER_IP: '0' });
    expect(c.idleTimeoutSeconds).toBe(90);
    expect(c.maxConnectionsPerIp).toBe(0);
  });

  test('SEARCH_WORKERS: one extraction thread per core but one by default (at least one), 1 to 64; anything else is refused by name', () => {
    expect(loadConfig({}, {}).search.workers).toBe(Math.max(1, os.availableParallelism() - 1));
    expect(loadConfig({}, { SEARCH_WORKERS: '1' }).search.workers).toBe(1);
    expect(() => loadConfig({}, { SEARCH_WORKERS: '0' })).toThrow(/SEARCH_WORKERS must be between 1 and 64/);
    expect(() => loadConfig({}, { SEARCH_WORKERS: 'all' })).toThrow(/SEARCH_WORKERS must be a whole number/);
  });

  test('the disk reserve: 512 MiB by default, any size', () => {
    expect(loadConfig({}, {}).minFreeBytes).toBe(512 * 1024 ** 2);
    expect(loadConfig({}, { COFFER_MIN_FREE_BYTES: '2G' }).minFreeBytes).toBe(2 * 1024 ** 3);
    expect(loadConfig({}, { COFFER_MIN_FREE_BYTES: '0' }).minFreeBytes).toBe(0);
  });

  test('resumable uploads expire after 24 hours by default; TUS_EXPIRY_HOURS takes fractions', () => {
    expect(loadConfig({}, {}).tusExpiryHours).toBe(24);
    expect(loadConfig({}, { TUS_EXPIRY_HOURS: '72' }).tusExpiryHours).toBe(72);
    expect(loadConfig({}, { TUS_EXPIRY_HOURS: '0.25' }).tusExpiryHours).toBe(0.25);
  });

  test.each([
    [{}, { TUS_EXPIRY_HOURS: '0' }, /TUS_EXPIRY_HOURS must be a number of hours above 0/],
    [{}, { TUS_EXPIRY_HOURS: 'a day' }, /TUS_EXPIRY_HOURS/],
    [{}, { TUS_EXPIRY_HOURS: '9000' }, /at most 8760/],
    [{}, { COFFER_IDLE_TIMEOUT_SECONDS: '300' }, /COFFER_IDLE_TIMEOUT_SECONDS must be between 1 and 255/],
    [{}, { COFFER_MAX_CONNECTIONS_PER_IP: 'many' }, /COFFER_MAX_CONNECTIONS_PER_IP/],
    [{}, { COFFER_MIN_FREE_BYTES: 'plenty' }, /COFFER_MIN_FREE_BYTES must be a size/],
    [{ port: 'abc' }, {}, /port/],
    [{ port: '70000' }, {}, /between 0 and 65535/],
    [{}, { LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ defaultStorageLimit: 'lots' }, {}, /storage limit/],
    [{}, { TRASH_RETENTION_DAYS: '-1' }, /TRASH_RETENTION_DAYS/],
    [{}, { UPDATE_FEED_URL: 'not a url' }, /UPDATE_FEED_URL/],
    [{}, { DOCSERVER_BACKEND_URL: 'ftp://coffer.lan' }, /DOCSERVER_BACKEND_URL/],
  ] as const)('bad input %p %p is a one-line ConfigError', (flags, env, pattern) => {
    let err: unknown;
    try {
      loadConfig(flags, env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(pattern);
    expect((err as Error).message).not.toContain('\n');
  });

  test('DOCSERVER_AUTOSAVE_INTERVAL_MS: whole minutes 1 to 60 that divide an hour; anything else warns and keeps 5 minutes', () => {
    expect(loadConfig({}, {}).docserverAutosaveIntervalMs).toBe(300_000);
    expect(loadConfig({}, {}).warnings).toEqual([]);
    for (const minutes of [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60]) {
      const c = loadConfig({}, { DOCSERVER_AUTOSAVE_INTERVAL_MS: String(minutes * 60_000) });
      expect([c.docserverAutosaveIntervalMs, c.warnings]).toEqual([minutes * 60_000, []]);
    }
    for (const bad of ['0', '30000', '90000', '420000', '2700000', '7200000', '-60000', '5m', '60000.0']) {
      const c = loadConfig({}, { DOCSERVER_AUTOSAVE_INTERVAL_MS: bad });
      expect(c.docserverAutosaveIntervalMs).toBe(300_000);
      expect(c.warnings).toHaveLength(1);
      expect(c.warnings[0]).toContain(`got "${bad}"`);
    }
  });

  test('DOCSERVER_BACKEND_URL: kept without its trailing slash, path included', () => {
    expect(loadConfig({}, {}).docserverBackendUrl).toBeNull();
    expect(loadConfig({}, { DOCSERVER_BACKEND_URL: 'https://files.lan/coffer/' }).docserverBackendUrl).toBe('https://files.lan/coffer');
  });
});

describe('the configuration file', () => {
  test('is read as systemd reads an EnvironmentFile: comments, blank lines, quotes', () => {
    const text =
      '# comment\n\nPORT=4000\nHOST = 127.0.0.1\nexport LOG_LEVEL=warn\nOIDC_PROVIDER_NAME="quoted \\"x\\" value"\nS3_PREFIX=\'single\'\n; other comment\nTZ=UTC\n';
    expect(parseEnvFile(text, 'f')).toEqual({
      PORT: '4000',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      OIDC_PROVIDER_NAME: 'quoted "x" value',
      S3_PREFIX: 'single',
      TZ: 'UTC',
    });
  });

  test('a line that is not VAR=value, an unknown name or a stray quote is refused, naming the file and line', () => {
    const at = (line: string) => () => parseEnvFile(`# ok\n${line}\n`, '/etc/coffer/coffer.env');
    expect(at('not a line')).toThrow('configuration file /etc/coffer/coffer.env, line 2: "not a line" is not a VAR=value line');
    expect(at('PROT=4000')).toThrow('line 2: unknown setting PROT (did you mean PORT?)');
    expect(at('FAVOURITE_COLOUR=blue')).toThrow('line 2: unknown setting FAVOURITE_COLOUR (`coffer serve --help` lists them)');
    expect(at('COFFER-DATA-DIR=/srv')).toThrow('line 2: "COFFER-DATA-DIR" is not a variable name');
    expect(at("HOST='127.0.0.1")).toThrow("line 2: the value of HOST opens a ' quote that does not close at the end of the line");
    expect(at("OIDC_PROVIDER_NAME=Bob's cloud")).toThrow('line 2: the value of OIDC_PROVIDER_NAME has a stray quote');
  });

  test('every variable the code reads is a known setting (so the help explains it), and COFFER_* variables that are not give a warning', async () => {
    const named = [...ENVIRONMENT_HELP.matchAll(/^ {2}([A-Z][A-Z0-9_]+) /gm)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(60);
    expect(named.filter((n) => !SETTING_NAMES.has(n))).toEqual([]);
    // The process's own variables, which are not Coffer's settings.
    const processVariables = new Set(['PATH', 'NOTIFY_SOCKET', 'NODE_ENV']);
    const read = new Set<string>();
    for (const dir of ['src', 'cli'])
      for (const file of new Bun.Glob('**/*.ts').scanSync(path.join(import.meta.dir, '../..', dir)))
        for (const m of (await Bun.file(path.join(import.meta.dir, '../..', dir, file)).text()).matchAll(/\benv\.([A-Z][A-Z0-9_]+)\b/g))
          read.add(m[1]!);
    expect(read.size).toBeGreaterThan(60);
    expect([...read].filter((n) => !SETTING_NAMES.has(n) && !processVariables.has(n))).toEqual([]);
    expect(loadConfig({}, { COFFER_DATADIR: '/srv' }).warnings).toEqual([
      'environment variable COFFER_DATADIR is ignored: unknown setting COFFER_DATADIR (did you mean COFFER_DATA_DIR?)',
    ]);
  });

  test('sits under the environment; COFFER_CONFIG names it; a missing default is no error, a missing named file is', () => {
    const dir = tempDir('coffer-config-');
    try {
      const file = path.join(dir, 'coffer.env');
      fs.writeFileSync(file, 'COFFER_DATA_DIR=/var/lib/coffer\nPORT=4000\n');
      expect(loadConfig({}, withConfigFile({ PORT: '5000' }, file))).toMatchObject({ dataDir: '/var/lib/coffer', port: 5000 });
      expect(withConfigFile({ COFFER_CONFIG: file }, '/nonexistent').COFFER_DATA_DIR).toBe('/var/lib/coffer');
      expect(withConfigFile({ PORT: '1' }, path.join(dir, 'missing.env'))).toEqual({ PORT: '1' });
      expect(() => withConfigFile({ COFFER_CONFIG: path.join(dir, 'missing.env') })).toThrow(ConfigError);
      expect(() => withConfigFile({ COFFER_CONFIG: path.join(dir, 'missing.env') })).toThrow(
        /cannot read the configuration file .* named by COFFER_CONFIG/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('single sign-on (OIDC_*)', () => {
  const base = { OIDC_ISSUER_URL: 'https://id.example.com/realms/home', OIDC_CLIENT_ID: 'coffer', OIDC_CLIENT_SECRET: 's3cret' };

  test('off unless set; on with issuer, client id and secret, with the documented defaults', () => {
    expect(loadConfig({}, {}).idp).toBeNull();
    expect(loadConfig({}, base).idp).toEqual({
      issuerUrl: 'https://id.example.com/realms/home',
      clientId: 'coffer',
      clientSecret: { source: 'env', text: 's3cret' },
      redirectUrl: null,
      scopes: 'openid email profile',
      providerName: 'Single sign-on',
      autoCreate: false,
      disablePasswordLogin: false,
      allowHttp: false,
      groupsClaim: null,
      groupsCreate: false,
    });
  });

  test('groups: OIDC_GROUPS_CLAIM names the claim, OIDC_GROUPS_CREATE creates unknown groups; a claim name with spaces is refused', () => {
    const c = loadConfig({}, { ...base, OIDC_GROUPS_CLAIM: 'groups', OIDC_GROUPS_CREATE: 'true' }).idp!;
    expect([c.groupsClaim, c.groupsCreate]).toEqual(['groups', true]);
    expect(() => loadConfig({}, { ...base, OIDC_GROUPS_CLAIM: 'my groups' })).toThrow(/OIDC_GROUPS_CLAIM must be a claim name/);
    expect(() => loadConfig({}, { ...base, OIDC_GROUPS_CREATE: 'maybe' })).toThrow(/OIDC_GROUPS_CREATE must be true or false/);
  });

  test('every variable is read: the secret from a file, redirect URL, scopes, name and the switches', () => {
    const { OIDC_CLIENT_SECRET: _, ...withoutSecret } = base;
    const c = loadConfig(
      {},
      {
        ...withoutSecret,
        OIDC_CLIENT_SECRET_FILE: 'oidc-secret',
        OIDC_REDIRECT_URL: 'https://files.example.com/api/idp/callback',
        OIDC_SCOPES: 'openid email profile groups',
        OIDC_PROVIDER_NAME: 'Authentik',
        OIDC_AUTO_CREATE: 'true',
        OIDC_DISABLE_PASSWORD_LOGIN: '1',
      },
      '/etc/coffer',
    ).idp!;
    expect(c.clientSecret).toEqual({ source: 'file', path: '/etc/coffer/oidc-secret' });
    expect([c.redirectUrl, c.scopes, c.providerName, c.autoCreate, c.disablePasswordLogin]).toEqual([
      'https://files.example.com/api/idp/callback',
      'openid email profile groups',
      'Authentik',
      true,
      true,
    ]);
  });

  test('plain http: accepted on loopback, elsewhere only with OIDC_ALLOW_HTTP=true', () => {
    for (const issuer of ['http://localhost:9000', 'http://127.0.0.1:9000/app', 'http://[::1]:9000']) {
      expect(loadConfig({}, { ...base, OIDC_ISSUER_URL: issuer }).idp!.issuerUrl).toBe(issuer);
    }
    const lan = { ...base, OIDC_ISSUER_URL: 'http://192.168.1.10:9000' };
    expect(() => loadConfig({}, lan)).toThrow(/OIDC_ISSUER_URL must use https:\/\/ .*OIDC_ALLOW_HTTP=true/);
    expect(loadConfig({}, { ...lan, OIDC_ALLOW_HTTP: 'true' }).idp!.allowHttp).toBe(true);
  });

  test.each([
    [
      { OIDC_ISSUER_URL: 'https://id.example.com' },
      /OIDC_ISSUER_URL is set but OIDC_CLIENT_ID and OIDC_CLIENT_SECRET \(or OIDC_CLIENT_SECRET_FILE\) are missing/,
    ],
    [{ OIDC_CLIENT_ID: 'coffer', OIDC_CLIENT_SECRET: 'x' }, /OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set but OIDC_ISSUER_URL is missing/],
    [
      { OIDC_ISSUER_URL: 'https://id.example.com', OIDC_CLIENT_ID: 'coffer' },
      /OIDC_CLIENT_SECRET \(or OIDC_CLIENT_SECRET_FILE\) is missing/,
    ],
    [{ ...base, OIDC_CLIENT_SECRET_FILE: '/s' }, /OIDC_CLIENT_SECRET or OIDC_CLIENT_SECRET_FILE, not both/],
    [{ ...base, OIDC_ISSUER_URL: 'id.example.com' }, /OIDC_ISSUER_URL is not a valid URL/],
    [{ ...base, OIDC_ISSUER_URL: 'ftp://id.example.com' }, /OIDC_ISSUER_URL must be an https:\/\/ URL/],
    [{ ...base, OIDC_REDIRECT_URL: '/api/idp/callback' }, /OIDC_REDIRECT_URL must be a full http\(s\) URL/],
    [{ ...base, OIDC_SCOPES: 'email profile' }, /OIDC_SCOPES must include "openid"/],
    [{ ...base, OIDC_AUTO_CREATE: 'sometimes' }, /OIDC_AUTO_CREATE must be true or false/],
    [{ OIDC_DISABLE_PASSWORD_LOGIN: 'true' }, /OIDC_DISABLE_PASSWORD_LOGIN needs single sign-on/],
  ] as const)('misconfiguration %p is a one-line ConfigError naming what is wrong', (env, pattern) => {
    expect(() => loadConfig({}, env)).toThrow(ConfigError);
    expect(() => loadConfig({}, env)).toThrow(pattern);
  });
});

describe('FFMPEG_PATH', () => {
  test('an executable is used; a name is looked up on PATH; nothing there is a warning and no video thumbnails', () => {
    const dir = tempDir('coffer-ffmpeg-');
    const exe = path.join(dir, 'ffmpeg');
    fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'not-executable'), '', { mode: 0o644 });
    expect(loadConfig({}, { FFMPEG_PATH: exe }).ffmpegPath).toBe(exe);
    expect(loadConfig({}, { PATH: dir }).ffmpegPath).toBe(exe);
    expect(loadConfig({}, { PATH: path.join(dir, 'empty') }).ffmpegPath).toBeNull();
    for (const bad of [path.join(dir, 'missing'), path.join(dir, 'not-executable')]) {
      const c = loadConfig({}, { FFMPEG_PATH: bad, PATH: dir });
      expect(c.ffmpegPath).toBeNull();
      expect(c.warnings).toEqual([`FFMPEG_PATH "${bad}" is not an executable; videos get no thumbnail`]);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('MAP_TILE_URL', () => {
  test('none by default; an http(s) template with {z}, {x} and {y} is kept; anything else is a warning and none', () => {
    expect(loadConfig({}, {}).mapTileUrl).toBeNull();
    const template = 'https://tiles.example.com/{z}/{x}/{y}.png';
    expect(loadConfig({}, { MAP_TILE_URL: ` ${template} ` }).mapTileUrl).toBe(template);
    for (const bad of ['https://tiles.example.com/{z}/{x}.png', 'ftp://tiles.example.com/{z}/{x}/{y}.png', 'not a url {z}{x}{y}']) {
      const c = loadConfig({}, { MAP_TILE_URL: bad });
      expect(c.mapTileUrl).toBeNull();
      expect(c.warnings).toEqual([`MAP_TILE_URL "${bad}" is not an http(s) URL with {z}, {x} and {y}; photo details show no map`]);
    }
  });
});
