import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../../src/db/client.ts';
import { SettingsRepo } from '../../../src/db/repos/settings.ts';
import { SETTINGS_RECHECK_MS } from '../../../src/services/admin/settings.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';

let t: TestServer;
let adminLogin: seed.SeededLogin;
let user: seed.SeededLogin;
beforeAll(async () => {
  t = await startTestServer();
  expect(await json(await t.client().get('/api/signup-status'))).toEqual({
    signupEnabled: true,
    firstUser: true,
    setupCodeRequired: false,
    passwordLogin: true,
    idp: { enabled: false, name: null },
  });
  adminLogin = await seed.admin(t);
  user = await seed.owner(t);
});
afterAll(() => t.stop());

const ADMIN_PUTS: Array<[string, string, unknown]> = [
  ['POST', '/api/user/signup-toggle', { enabled: true }],
  ['PUT', '/api/user/docserver-config', { url: 'https://docs.lan', jwtSecret: 's3cret' }],
  ['PUT', '/api/user/share-base-url-config', { url: 'https://share.example.com' }],
  ['PUT', '/api/user/max-upload-size-config', { maxBytes: 1048576 }],
  ['PUT', '/api/user/known-proxies-config', { knownProxies: ['10.0.0.1'] }],
  ['PUT', '/api/user/hide-file-extensions-config', { hidden: true }],
  ['PUT', '/api/user/desktop-only-access-config', { enabled: false }],
  ['PUT', '/api/user/password-change-config', { enabled: true }],
];

describe('instance settings', () => {
  test('defaults, and the public signup status closes once the admin exists', async () => {
    expect(await json(await t.client().get('/api/signup-status'))).toMatchObject({
      signupEnabled: false,
      firstUser: false,
      setupCodeRequired: false,
    });
    const status = await json(await user.client.get('/api/user/signup-status'));
    expect(status).toEqual({
      signupEnabled: false,
      canToggle: false,
      hideFileExtensions: false,
      canToggleHideFileExtensions: false,
      desktopOnlyAccess: false,
      canToggleDesktopOnlyAccess: false,
      allowPasswordChange: true,
      canToggleAllowPasswordChange: false,
    });
    const adminStatus = await json(await adminLogin.client.get('/api/user/signup-status'));
    expect(adminStatus).toMatchObject({
      canToggle: true,
      canToggleHideFileExtensions: true,
      canToggleDesktopOnlyAccess: true,
      canToggleAllowPasswordChange: true,
    });
    expect(adminStatus.totalUsers).toBeGreaterThanOrEqual(2);
    expect(adminStatus.additionalUsers).toBe(adminStatus.totalUsers - 1);
    expect(await json(await user.client.get('/api/user/max-upload-size-config'))).toEqual({ maxBytes: 10737418240 });
    expect(await json(await user.client.get('/api/user/docserver-configured'))).toEqual({
      configured: false,
      extensions: expect.arrayContaining(['docx']),
    });
  });

  test('every setting change is admin-only: 403 for others', async () => {
    for (const [method, path, body] of ADMIN_PUTS) {
      const res = await user.client.send(method, path, body);
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual(errors.adminOnly);
    }
    for (const path of ['/api/user/docserver-config', '/api/user/share-base-url-config', '/api/user/known-proxies-config']) {
      expect((await user.client.get(path)).status).toBe(403);
    }
  });

  test('the admin sets each setting and reads it back', async () => {
    const a = adminLogin.client;
    expect(await json(await a.post('/api/user/signup-toggle', { enabled: true }))).toEqual({ signupEnabled: true });
    expect(await json(await t.client().get('/api/signup-status'))).toMatchObject({
      signupEnabled: true,
      firstUser: false,
      setupCodeRequired: false,
    });
    await a.post('/api/user/signup-toggle', { enabled: false });

    expect(await json(await a.put('/api/user/docserver-config', { url: 'https://docs.lan/', jwtSecret: 's3cret' }))).toEqual({
      jwtSecretSet: true,
      url: 'https://docs.lan',
    });
    const docs = await json(await a.get('/api/user/docserver-config'));
    expect(docs).toEqual({ jwtSecretSet: true, url: 'https://docs.lan' });
    expect(JSON.stringify(docs)).not.toContain('s3cret');
    expect(await json(await user.client.get('/api/user/docserver-configured'))).toEqual({
      configured: true,
      extensions: expect.arrayContaining(['docx']),
    });
    expect(await json(await a.put('/api/user/docserver-config', { url: null, jwtSecret: null }))).toEqual({ jwtSecretSet: false, url: '' });

    expect(await json(await a.put('/api/user/share-base-url-config', { url: 'https://share.example.com' }))).toEqual({
      url: 'https://share.example.com',
    });
    expect(await json(await a.put('/api/user/share-base-url-config', { url: 'https://Share.Example.com:8443/' }))).toEqual({
      url: 'https://share.example.com:8443',
    });
    expect(await json(await a.put('/api/user/share-base-url-config', { url: null }))).toEqual({ url: null });

    expect(await json(await a.put('/api/user/max-upload-size-config', { maxBytes: 1048576 }))).toEqual({ maxBytes: 1048576 });
    expect(await json(await user.client.get('/api/user/max-upload-size-config'))).toEqual({ maxBytes: 1048576 });

    const proxies = ['10.0.0.1', '192.168.0.0/16', '::1', 'proxy.lan'];
    expect(await json(await a.put('/api/user/known-proxies-config', { knownProxies: proxies }))).toEqual({
      knownProxies: proxies,
      restartRequired: true,
    });
    expect(await json(await a.get('/api/user/known-proxies-config'))).toEqual({ knownProxies: proxies });
    await a.put('/api/user/known-proxies-config', { knownProxies: [] });

    expect(await json(await a.put('/api/user/hide-file-extensions-config', { hidden: true }))).toEqual({ hideFileExtensions: true });
    expect(await json(await user.client.get('/api/user/hide-file-extensions-config'))).toEqual({ hideFileExtensions: true });
    expect(await json(await a.put('/api/user/password-change-config', { enabled: false }))).toEqual({ allowPasswordChange: false });
    expect(await json(await user.client.get('/api/user/password-change-config'))).toEqual({ allowPasswordChange: false });
    await a.put('/api/user/password-change-config', { enabled: true });
    expect(await json(await user.client.get('/api/user/desktop-only-access-config'))).toEqual({ desktopOnlyAccess: false });
  });

  test.each([
    ['/api/user/max-upload-size-config', { maxBytes: 1048575 }, 'maxBytes'],
    ['/api/user/max-upload-size-config', { maxBytes: 107374182401 }, 'maxBytes'],
    ['/api/user/max-upload-size-config', { maxBytes: '10G' }, 'maxBytes'],
    ['/api/user/max-upload-size-config', {}, 'maxBytes'],
    ['/api/user/known-proxies-config', { knownProxies: Array.from({ length: 101 }, (_, i) => `10.0.0.${i % 250}`) }, 'knownProxies'],
    ['/api/user/known-proxies-config', { knownProxies: ['not a host!'] }, 'knownProxies.0'],
    ['/api/user/known-proxies-config', { knownProxies: [`${'a'.repeat(250)}.com`] }, 'knownProxies.0'],
    ['/api/user/known-proxies-config', { knownProxies: '10.0.0.1' }, 'knownProxies'],
    ['/api/user/share-base-url-config', { url: 'ftp://files' }, 'url'],
    ['/api/user/share-base-url-config', { url: 'not a url' }, 'url'],
    // Behind a proxy's sub-path links would still go to the origin: refused, as COFFER_PUBLIC_URL's path is.
    ['/api/user/share-base-url-config', { url: 'https://example.com/share' }, 'url'],
    ['/api/user/share-base-url-config', { url: 'https://example.com/?x=1' }, 'url'],
    ['/api/user/docserver-config', { url: 'https://docs.lan' }, 'jwtSecret'],
    ['/api/user/docserver-config', { jwtSecret: 'only-secret' }, 'url'],
    ['/api/user/docserver-config', { url: 'nope', jwtSecret: 'x' }, 'url'],
    ['/api/user/hide-file-extensions-config', { hidden: 'yes' }, 'hidden'],
    ['/api/user/desktop-only-access-config', {}, 'enabled'],
  ])('PUT %s %p → 422 naming %s, nothing stored', async (path, body, field) => {
    const before = t.server.ctx.services.settings.all();
    const res = await adminLogin.client.put(path, body);
    expect(res.status).toBe(422);
    const b = await json(res);
    expect(b.message).toBe('Validation failed');
    expect(b.details.map((d: { field: string }) => d.field)).toContain(field);
    expect(t.server.ctx.services.settings.all()).toEqual(before);
  });
});

describe('desktop-only access', () => {
  test('blocks browsers (JSON or an HTML page) but not desktop clients, share links or /health', async () => {
    await adminLogin.client.put('/api/user/desktop-only-access-config', { enabled: true });
    try {
      const blocked = await user.client.get('/api/profile');
      expect(blocked.status).toBe(403);
      expect(await json(blocked)).toEqual(errors.desktopOnly);
      const page = await t.client().get('/api/profile', { accept: 'text/html' });
      expect(page.status).toBe(403);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(await page.text()).toContain('desktop app access only');
      expect((await user.client.get('/api/profile', { 'x-desktop-client': '1' })).status).toBe(200);
      expect((await t.client().get('/health')).status).toBe(200);
      expect((await t.client().get('/s/sometoken')).status).not.toBe(403);
    } finally {
      await adminLogin.client.put('/api/user/desktop-only-access-config', { enabled: false }, { 'x-desktop-client': '1' });
    }
    expect((await user.client.get('/api/profile')).status).toBe(200);
  });
});

describe('known proxies', () => {
  test('are applied at start-up: X-Forwarded-For from a listed proxy names the client after a restart', async () => {
    const s = await startTestServer();
    try {
      const a = await seed.admin(s);
      await a.client.post('/api/sessions/heartbeat', undefined, { 'x-forwarded-for': '203.0.113.7' });
      let { sessions } = await json(await a.client.get('/api/sessions?refreshIp=true'));
      expect(sessions[0].ip_address).toBe('127.0.0.1');
      await a.client.put('/api/user/known-proxies-config', { knownProxies: ['127.0.0.1'] });
      await s.restart();
      const again = await seed.login(s, a.email);
      await again.post('/api/sessions/heartbeat', undefined, { 'x-forwarded-for': '203.0.113.7' });
      ({ sessions } = await json(await again.get('/api/sessions?refreshIp=true')));
      expect(sessions.find((x: { isCurrent: boolean }) => x.isCurrent).ip_address).toBe('203.0.113.7');
    } finally {
      await s.stop();
    }
  });
});

describe('settings changed by another process (the CLI beside the server)', () => {
  test('are seen within SETTINGS_RECHECK_MS, without asking SQLite data_version on every read', async () => {
    const { settings } = t.server.ctx.services;
    const { database } = t.server.ctx.repos;
    const dataVersion = database.dataVersion.bind(database);
    let asked = 0;
    database.dataVersion = () => {
      asked++;
      return dataVersion();
    };
    const other = openDatabase(path.join(t.dataDir, 'coffer.db'));
    try {
      const before = settings.get('hideFileExtensions');
      await Bun.sleep(SETTINGS_RECHECK_MS + 1);
      asked = 0;
      for (let i = 0; i < 1000; i++) settings.get('hideFileExtensions');
      expect(asked).toBe(1);
      new SettingsRepo(other).set('hideFileExtensions', JSON.stringify(!before), Date.now());
      await Bun.sleep(SETTINGS_RECHECK_MS + 1);
      expect(settings.get('hideFileExtensions')).toBe(!before);
      expect(await json(await user.client.get('/api/user/hide-file-extensions-config'))).toEqual({ hideFileExtensions: !before });
    } finally {
      database.dataVersion = dataVersion;
      closeDatabase(other);
    }
  });
});
