import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { generate } from 'otplib';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { json } from '../helpers/client.ts';
import * as seed from '../helpers/seed.ts';
import { parseJson, runCli } from '../helpers/cli.ts';
import { type Command, CommanderError } from 'commander';
import { buildProgram } from '../../cli/program.ts';
import { DAY, rowWithoutObject, storeFile, strayObject } from '../helpers/stored-files.ts';
import { eventually } from '../helpers/eventually.ts';
import { upload } from '../helpers/files.ts';
import { SETTINGS_RECHECK_MS } from '../../src/services/admin/settings.ts';

let t: TestServer;
let admin: seed.SeededLogin;
const dirs: string[] = [];

beforeAll(async () => {
  t = await startTestServer();
  admin = await seed.admin(t);
});
afterAll(async () => {
  await t.stop();
  dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
});

/**
 * `coffer <args>` parsed by the program `src/main.ts` builds, in this process, for what it writes to stdout and
 * the code it exits with: a help screen starts no runtime of its own (test/cli/startup.test.ts runs help as a process).
 */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string }> {
  const argv = ['bun', 'coffer', ...args];
  let stdout = '';
  const quiet = (command: Command) => {
    command.exitOverride().configureOutput({ writeOut: (text) => (stdout += text), writeErr: () => {} });
    command.commands.forEach(quiet);
  };
  const program = buildProgram(argv);
  quiet(program);
  try {
    await program.parseAsync(argv);
    return { code: 0, stdout };
  } catch (err) {
    if (err instanceof CommanderError) return { code: err.exitCode, stdout };
    throw err;
  }
}

/** `coffer <args> --data-dir <the running server's dir>` */
const cli = (args: string[], stdin?: string) => runCli([...args, '--data-dir', t.dataDir], { stdin });

describe('--help everywhere', () => {
  test.each([
    'users list',
    'users create',
    'users invite',
    'users reset-password',
    'users reset-mfa',
    'users set-limit',
    'users disable',
    'users enable',
    'users delete',
    'setup-code',
    'init',
    'settings get',
    'settings set',
    'orphans scan',
    'orphans delete',
    'backup',
    'keys rotate',
    'keys status',
    'doctor',
    'audit list',
    'shares list',
    'shares revoke',
  ])('coffer %s --help', async (command) => {
    const r = await inProcess([...command.split(' '), '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: coffer ${command}`);
    expect(r.stdout).toContain('--data-dir');
    expect(r.stdout).toContain('--json');
    expect(r.stdout).toContain('Exit codes');
  });
});

describe('coffer shares, beside the running server', () => {
  test('list shows links with their options (per account with --user); revoke ends a link', async () => {
    const o = await seed.owner(t);
    const up = await o.client.post('/api/files/folder', { name: 'CLI drop' });
    const { id } = await json(up);
    const shared = await json(
      await o.client.post('/api/files/share', { ids: [id], shared: true, mode: 'upload', password: 'secret words', maxDownloads: 9 }),
    );
    const token = /\/s\/([\w-]+)/.exec(shared.links[id])![1]!;

    const mine = parseJson(await cli(['shares', 'list', '--user', o.email, '--json'])).links;
    expect(mine).toEqual([
      expect.objectContaining({
        token,
        itemId: id,
        itemName: 'CLI drop',
        mode: 'upload',
        hasPassword: true,
        maxDownloads: 9,
        downloads: 0,
      }),
    ]);
    expect(JSON.stringify(mine)).not.toContain('secret words');
    const human = await cli(['shares', 'list']);
    expect(human.stdout).toMatch(new RegExp(`${token}\\s+CLI drop\\s+upload\\s+yes\\s+0/9`));
    expect((await cli(['shares', 'list', '--user', 'nobody@example.test'])).code).toBe(1);

    expect((await t.client().get(`/s/${token}`, { accept: 'application/json' })).status).toBe(401);
    const revoked = await cli(['shares', 'revoke', token]);
    expect(revoked.code).toBe(0);
    expect((await t.client().get(`/s/${token}`, { accept: 'application/json' })).status).toBe(404);
    expect(parseJson(await cli(['shares', 'list', '--user', o.email, '--json'])).links).toEqual([]);
    const again = await cli(['shares', 'revoke', token]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Share link not found');
    // One token in 64 begins with "-" (base64url): still a token, not an option.
    const dashed = await cli(['shares', 'revoke', '-8gcZCmUJlWvQoRmaNvQq6LRTBpjiuaO']);
    expect(dashed.code).toBe(1);
    expect(dashed.stderr).toContain('Share link not found');
  });

  test('revoke of a folder’s link records a link.removed (details.joined) for each item that joined it, the change the server announces', async () => {
    const o = await seed.owner(t);
    const album = await json(await o.client.post('/api/files/folder', { name: 'CLI album' }));
    const shared = await json(await o.client.post('/api/files/share', { ids: [album.id], shared: true }));
    const token = /\/s\/([\w-]+)/.exec(shared.links[album.id])![1]!;
    const file = await upload(o.client, 'a.jpg', 'a', { parentId: album.id });
    expect((await o.client.post('/api/files/link-parent-share', { ids: [file.id] })).status).toBe(200);
    const from = t.server.ctx.services.changes.latestSeq();
    expect((await cli(['shares', 'revoke', token])).code).toBe(0);
    const removed = t.server.ctx.repos.changes
      .pageOfAccounts([o.id], from, 100)
      .filter((r) => r.kind === 'link.removed')
      .map((r) => [r.itemId, JSON.parse(r.details!).joined]);
    expect(removed).toEqual([
      [album.id, undefined],
      [file.id, true],
    ]);
  });

  test('a server on an IPv6 address: the links listed open on it; with COFFER_PUBLIC_URL they are at that address', async () => {
    const v6 = await startTestServer({ host: '::1' });
    try {
      await seed.admin(v6);
      const o = await seed.owner(v6);
      const { id } = await json(await o.client.post('/api/files/folder', { name: 'Over IPv6' }));
      await o.client.post('/api/files/share', { ids: [id], shared: true });
      const env = { HOST: '::1', PORT: String(v6.server.port) };
      const [link] = parseJson(await runCli(['shares', 'list', '--json', '--data-dir', v6.dataDir], { env })).links;
      expect(link.url).toStartWith(`${v6.url}/s/`);
      expect((await fetch(link.url, { headers: { accept: 'application/json' } })).status).toBe(200);
      const [named] = parseJson(
        await runCli(['shares', 'list', '--json', '--data-dir', v6.dataDir], {
          env: { ...env, COFFER_PUBLIC_URL: 'https://files.example.test' },
        }),
      ).links;
      expect(named.url).toBe(`https://files.example.test/s/${link.token}`);
    } finally {
      await v6.stop();
    }
  });
});

describe('coffer users, beside the running server', () => {
  test('list shows every account, owners followed by their sub-users', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.download']);
    const r = await cli(['users', 'list', '--json']);
    expect(r.code).toBe(0);
    const emails = parseJson(r).users.map((u: { email: string }) => u.email);
    expect(emails).toContain(admin.email);
    expect(emails.indexOf(sub.email)).toBe(emails.indexOf(o.email) + 1);
    const human = await cli(['users', 'list']);
    expect(human.stdout).toMatch(new RegExp(`${admin.email.replace(/[.]/g, '\\.')}\\s+Admin\\s+admin`));
    expect(human.stdout).toContain('sub-user');
  });

  test('create makes an owner who can sign in to the server; bad input exits 1 with one line', async () => {
    const email = seed.uniqueEmail('cli');
    const r = await cli(['users', 'create', email, '--name', 'From CLI', '--json'], 'a good password\n');
    expect(r.code).toBe(0);
    expect(parseJson(r).user).toMatchObject({ email, name: 'From CLI', admin: false });
    await seed.login(t, email, 'a good password');

    for (const [args, stdin, message] of [
      [['users', 'create', 'not-an-email'], 'password\n', /not a valid email/],
      [['users', 'create', seed.uniqueEmail()], 'abc\n', /6 to 128 characters/],
      [['users', 'create', email], 'a good password\n', /Email already in use/],
      [['users', 'create', seed.uniqueEmail(), '--admin'], 'a good password\n', /admin already exists/],
    ] as const) {
      const bad = await cli([...args], stdin);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(message);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  test('invite prints a one-time link that the running server accepts once; bad input exits 1', async () => {
    const email = seed.uniqueEmail('cli-invite');
    const r = await cli(['users', 'invite', email, '--name', 'Invited', '--storage-limit', '1G']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`invitation for ${email}, valid until`);
    const url = r.stdout.trim().split('\n').at(-1)!;
    expect(url).toMatch(/^http:\/\/.+\/invite#[\w-]{40,}$/);
    const token = new URL(url).hash.slice(1);
    const guest = t.client();
    const accepted = await guest.post('/api/invitations/accept', { token, password: 'a good password' });
    expect(accepted.status).toBe(201);
    expect((await json(await guest.get('/api/user/storage'))).total).toBe(2 ** 30);
    expect((await t.client().post('/api/invitations/accept', { token, password: 'a good password' })).status).toBe(410);

    const asJson = parseJson(await cli(['users', 'invite', seed.uniqueEmail('cli-invite'), '--json']));
    expect(asJson.url).toContain('/invite#');
    expect(asJson.invitation.expiresAt).toBeString();
    for (const [args, message] of [
      [['users', 'invite', 'not-an-email'], /not a valid email/],
      [['users', 'invite', email], /Email already in use/],
      [['users', 'invite', seed.uniqueEmail(), '--storage-limit', 'lots'], /not a size/],
    ] as const) {
      const bad = await cli([...args]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(message);
    }
  });

  test('reset-password signs the user out everywhere and the new password works', async () => {
    const o = await seed.owner(t);
    expect((await o.client.get('/api/profile')).status).toBe(200);
    const r = await cli(['users', 'reset-password', o.email], 'brand new secret\n');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('signed out');
    expect((await o.client.get('/api/profile')).status).toBe(401);
    await seed.login(t, o.email, 'brand new secret');
    expect((await cli(['users', 'reset-password', 'nobody@example.test'], 'whatever1\n')).code).toBe(1);
    expect((await cli(['users', 'reset-password', o.email], 'short\n')).stderr).toMatch(/6 to 128/);
  });

  test('reset-mfa lets a user who lost their authenticator sign in with the password alone', async () => {
    const o = await seed.owner(t);
    const { secret } = await json(await o.client.post('/api/mfa/setup'));
    await o.client.post('/api/mfa/verify', { code: await generate({ secret }) });
    expect((await t.client().post('/api/login', { email: o.email, password: o.password })).status).toBe(400);
    const r = await cli(['users', 'reset-mfa', o.email, '--json']);
    expect(r.code).toBe(0);
    expect(parseJson(r)).toMatchObject({ email: o.email, mfaEnabled: false, wasEnabled: true });
    await seed.login(t, o.email);
  });

  test('set-limit takes 10G, 500M or none; the server applies it at once', async () => {
    const o = await seed.owner(t);
    expect((await cli(['users', 'set-limit', o.email, '10G'])).code).toBe(0);
    expect((await json(await o.client.get('/api/user/storage'))).total).toBe(10 * 1024 ** 3);
    expect((await cli(['users', 'set-limit', o.email, '500M'])).code).toBe(0);
    expect((await json(await o.client.get('/api/user/storage'))).total).toBe(500 * 1024 ** 2);
    expect((await cli(['users', 'set-limit', o.email, 'none'])).code).toBe(0);
    expect((await json(await o.client.get('/api/user/storage'))).total).toBeNull();
    const bad = await cli(['users', 'set-limit', o.email, 'lots']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('not a size');
  });
});

describe('coffer users disable, enable and delete, beside the running server', () => {
  test('disable signs the account out at once and refuses sign-in; enable lets it back in', async () => {
    const o = await seed.owner(t);
    // Signed in and served first, so the session is held in the server's cache when another process disables it.
    expect((await o.client.get('/api/profile')).status).toBe(200);
    let r = await cli(['users', 'disable', o.email, '--json']);
    expect(r.code).toBe(0);
    expect(parseJson(r)).toEqual({ id: o.id, email: o.email, disabled: true });
    expect((await o.client.get('/api/profile')).status).toBe(401);
    expect((await t.client().post('/api/login', { email: o.email, password: o.password })).status).toBe(403);
    expect((await cli(['users', 'list'])).stdout).toMatch(new RegExp(`${o.email.replace(/[.]/g, '\\.')}\\s+Owner\\s+owner\\s+disabled`));
    r = await cli(['users', 'enable', o.email]);
    expect(r.stdout).toContain(`${o.email} enabled`);
    expect((await seed.login(t, o.email)).cookies.size).toBe(1);
  });

  test('delete asks for the email again; a mismatch or no terminal deletes nothing; the server then removes the account', async () => {
    const o = await seed.owner(t);
    await storeFile(t.server.ctx, o.id, { size: 2000 });
    let r = await cli(['users', 'delete', o.email]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('pass --confirm');
    r = await cli(['users', 'delete', o.email, '--confirm', 'someone-else@example.test']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('does not match; nothing was deleted');
    expect(t.server.ctx.services.accounts.findById(o.id)!.disabledAt).toBeNull();

    r = await cli(['users', 'delete', o.email, '--confirm', o.email.toUpperCase(), '--json']);
    expect(r.code).toBe(0);
    expect(parseJson(r)).toMatchObject({ id: o.id, email: o.email, queued: true });
    expect((await o.client.get('/api/profile')).status).toBe(401);
    await eventually(() => !t.server.ctx.services.accounts.findById(o.id), { timeoutMs: 10_000 });
    expect(t.server.ctx.services.accounts.findById(o.id)).toBeNull();

    r = await cli(['users', 'delete', admin.email, '--confirm', admin.email]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('The first admin cannot be disabled or deleted');
    r = await cli(['users', 'disable', admin.email]);
    expect(r.code).toBe(1);
  });
});

describe("the service's configuration file", () => {
  test('every command reads it: users list needs no --data-dir; the environment and flags still win', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = path.join(dir, 'coffer.env');
    fs.writeFileSync(file, `# as install.sh writes it\nPORT=3000\nHOST=0.0.0.0\nCOFFER_DATA_DIR=${t.dataDir}\nLOG_LEVEL=info\n`);
    const r = await runCli(['users', 'list', '--json'], { env: { COFFER_CONFIG: file } });
    expect(r.code).toBe(0);
    expect(parseJson(r).users.map((u: { email: string }) => u.email)).toContain(admin.email);
    const elsewhere = path.join(dir, 'elsewhere');
    let other = await runCli(['users', 'list'], { env: { COFFER_CONFIG: file, COFFER_DATA_DIR: elsewhere } });
    expect(other.stderr).toContain(`data directory ${elsewhere} does not exist`);
    other = await runCli(['users', 'list', '--data-dir', elsewhere], { env: { COFFER_CONFIG: file } });
    expect(other.stderr).toContain(`data directory ${elsewhere} does not exist`);
    const missing = await runCli(['users', 'list'], { env: { COFFER_CONFIG: path.join(dir, 'nope.env') } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read the configuration file');
  });
});

describe('a COFFER_* environment variable Coffer does not read', () => {
  test('every command warns of it in one line on stderr naming the nearest setting; --json stdout stays JSON', async () => {
    const warning =
      'coffer: warning: environment variable COFFER_DATADIR is ignored: unknown setting COFFER_DATADIR (did you mean COFFER_DATA_DIR?)';
    for (const args of [
      ['users', 'list', '--json', '--data-dir', t.dataDir],
      ['doctor', '--json', '--data-dir', t.dataDir],
      ['settings', 'get', '--data-dir', t.dataDir],
    ]) {
      const r = await runCli(args, { env: { COFFER_DATADIR: '/srv/typo' } });
      expect({ args, stderr: r.stderr.trim() }).toEqual({ args, stderr: warning });
      if (args.includes('--json')) expect(() => parseJson(r)).not.toThrow();
    }
    // The backup names it too, before its own answer (a destination it cannot write here).
    const backup = await runCli(['backup', '/proc/no-such-dir/coffer.tar', '--data-dir', t.dataDir], {
      env: { COFFER_DATADIR: '/srv/typo' },
    });
    expect(backup.code).toBe(1);
    expect(backup.stderr.split('\n')[0]).toBe(warning);
    const clean = await runCli(['users', 'list', '--json', '--data-dir', t.dataDir]);
    expect(clean.stderr).toBe('');
  });
});

describe('coffer init, then users create --admin', () => {
  test('creates the data dir and the admin; the server then starts with signup closed and the admin signs in', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const dataDir = path.join(dir, 'data');
    expect((await runCli(['init', '--data-dir', dataDir])).code).toBe(0);
    const r = await runCli(['users', 'create', 'root@example.test', '--admin', '--data-dir', dataDir], { stdin: 'admin password\n' });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('created admin root@example.test');
    const s = await startTestServer({ dataDir });
    try {
      expect(await json(await s.client().get('/api/signup-status'))).toMatchObject({
        signupEnabled: false,
        firstUser: false,
        setupCodeRequired: false,
      });
      const c = await seed.login(s, 'root@example.test', 'admin password');
      expect((await c.get('/api/user/all')).status).toBe(200);
    } finally {
      await s.server.stop();
    }
  });
});

describe('coffer settings', () => {
  test('get prints every setting; set changes what the running server answers', async () => {
    const all = parseJson(await cli(['settings', 'get', '--json']));
    expect(Object.keys(all).sort()).toEqual(
      [
        'allowPasswordChange',
        'contentSearch',
        'davAccountPasswords',
        'desktopOnlyAccess',
        'docserver',
        'hideFileExtensions',
        'knownProxies',
        'maxUploadBytes',
        'peopleSharing',
        'shareBaseUrl',
        'signupEnabled',
        'versionsEnabled',
        'versionsMaxPerFile',
        'versionsRetentionDays',
      ].sort(),
    );
    const cases: Array<[string, string, unknown]> = [
      ['signupEnabled', 'true', true],
      ['hideFileExtensions', 'on', true],
      ['desktopOnlyAccess', 'false', false],
      ['allowPasswordChange', 'no', false],
      ['maxUploadBytes', '2G', 2 * 1024 ** 3],
      ['shareBaseUrl', 'https://share.example.test', 'https://share.example.test'],
      ['knownProxies', '10.0.0.1, 10.1.0.0/16,proxy.lan', ['10.0.0.1', '10.1.0.0/16', 'proxy.lan']],
      ['davAccountPasswords', 'yes', true],
      ['versionsEnabled', 'false', false],
      ['versionsRetentionDays', '60', 60],
      ['versionsMaxPerFile', '10', 10],
      ['peopleSharing', 'off', false],
    ];
    for (const [key, value, expected] of cases) {
      const r = await cli(['settings', 'set', key, value, '--json']);
      expect(r.code).toBe(0);
      expect(parseJson(r)[key]).toEqual(expected);
    }
    // What each set stored, read back by one get of every setting (a process each would add a dozen starts).
    expect(parseJson(await cli(['settings', 'get', '--json']))).toMatchObject(
      Object.fromEntries(cases.map(([key, , expected]) => [key, expected])),
    );
    const again = await cli(['settings', 'set', 'peopleSharing', 'on', '--json']);
    expect(again.code).toBe(0);
    expect(parseJson(again).peopleSharing).toBe(true);
    expect(parseJson(await cli(['settings', 'get', 'peopleSharing', '--json']))).toBe(true);
    // The server sees another process's change within SETTINGS_RECHECK_MS (it asks SQLite at most that often).
    await Bun.sleep(SETTINGS_RECHECK_MS + 1);
    expect(await json(await t.client().get('/api/signup-status'))).toMatchObject({
      signupEnabled: true,
      firstUser: false,
      setupCodeRequired: false,
    });
    expect(await json(await admin.client.get('/api/user/max-upload-size-config'))).toEqual({ maxBytes: 2 * 1024 ** 3 });
    expect(await json(await admin.client.get('/api/user/password-change-config'))).toEqual({ allowPasswordChange: false });

    const doc = await cli(['settings', 'set', 'docserver', 'https://docs.example.test', '--json'], 'jwt-secret-from-stdin\n');
    expect(doc.code).toBe(0);
    expect(parseJson(doc).docserver).toEqual({ url: 'https://docs.example.test', jwtSecretSet: true });
    await Bun.sleep(SETTINGS_RECHECK_MS + 1);
    expect(await json(await admin.client.get('/api/user/docserver-config'))).toEqual({
      jwtSecretSet: true,
      url: 'https://docs.example.test',
    });
    expect((await cli(['settings', 'get', 'docserver'])).stdout).not.toContain('jwt-secret-from-stdin');

    for (const key of ['docserver', 'shareBaseUrl', 'knownProxies']) expect((await cli(['settings', 'set', key, 'none'])).code).toBe(0);
    expect((await cli(['settings', 'set', 'allowPasswordChange', 'true'])).code).toBe(0);
    expect(parseJson(await cli(['settings', 'get', '--json']))).toMatchObject({ docserver: null, shareBaseUrl: null, knownProxies: [] });
    // About thirty CLI processes, each starting the runtime and opening the database.
  }, 180_000);

  test('invalid values exit 1 naming the problem', async () => {
    for (const [args, message] of [
      [['settings', 'set', 'maxUploadBytes', '1K'], /at least 1048576/],
      [['settings', 'set', 'signupEnabled', 'maybe'], /true or false/],
      [['settings', 'set', 'shareBaseUrl', 'ftp://x'], /valid http/],
      [['settings', 'set', 'shareBaseUrl', 'https://example.com/share/'], /only the scheme, host and port.*not under a path/],
      [['settings', 'set', 'knownProxies', 'not a host!'], /IP address, a CIDR range or a hostname/],
      [['settings', 'set', 'colour', 'blue'], /unknown setting/],
      [['settings', 'get', 'colour'], /unknown setting/],
    ] as const) {
      const r = await cli([...args]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(message);
    }
  });
});

describe('coffer orphans, beside the running server', () => {
  test('scan reports what the API reports; delete removes a reviewed entry and skips, with exit 3, what no longer qualifies', async () => {
    const ctx = t.server.ctx;
    const o = await seed.owner(t);
    await storeFile(ctx, o.id, { createdAt: ctx.clock.now() - 2 * DAY });
    const stray = await strayObject(ctx, { ageMs: 2 * DAY });
    const lost = rowWithoutObject(ctx, o.id, { createdAt: ctx.clock.now() - 2 * DAY });

    const scan = await cli(['orphans', 'scan', '--json']);
    expect(scan.code).toBe(0);
    const report = parseJson(scan);
    expect(report.storageOrphans.items.map((i: { key: string }) => i.key)).toContain(stray);
    expect(report.databaseOrphans.items.map((i: { id: string }) => i.id)).toContain(lost.id);
    const human = await cli(['orphans', 'scan', '--grace-minutes', '60']);
    expect(human.stdout).toContain('grace window 60 minutes');
    expect(human.stdout).toContain(stray);
    expect(human.stdout).toContain('Nothing was deleted');
    expect((await cli(['orphans', 'scan', '--grace-minutes', '5'])).code).toBe(1);

    const reportFile = path.join(t.dataDir, '..', `report-${Date.now()}.json`);
    dirs.push(reportFile);
    fs.writeFileSync(reportFile, scan.stdout);
    expect((await cli(['orphans', 'delete', '--from-report', reportFile])).stderr).toContain('--yes');
    expect((await cli(['orphans', 'delete', '--yes'])).stderr).toContain('Select at least one orphan to delete');

    const single = await cli(['orphans', 'delete', '--storage-key', stray, '--yes', '--json']);
    expect(single.code).toBe(0);
    expect(parseJson(single).storage).toEqual({ results: [{ key: stray, deleted: true }], deleted: 1, skipped: 0 });
    expect(await ctx.driver.head(stray)).toBeNull();

    const fromReport = await cli(['orphans', 'delete', '--from-report', reportFile, '--yes']);
    expect(fromReport.code).toBe(3);
    expect(fromReport.stdout).toContain(`object ${stray}: skipped (Object no longer exists)`);
    expect(fromReport.stdout).toContain(`row ${lost.id}: deleted`);
    expect(ctx.db.$client.query('SELECT 1 FROM items WHERE id = ?').get(lost.id)).toBeNull();
  });
});

describe('coffer audit list', () => {
  test("filters by action group, user and time; the CLI's own actions are there too", async () => {
    const o = await seed.owner(t);
    await t.client().post('/api/login', { email: o.email, password: 'wrong' });
    const r = await cli(['audit', 'list', '--action', 'auth', '--user', o.email, '--since', '1h', '--json']);
    expect(r.code).toBe(0);
    const evs = parseJson(r).events as Array<{ action: string; status: string; email: string }>;
    expect(evs.map((e) => `${e.action}:${e.status}`).sort()).toEqual(['auth.sign_in:failure', 'auth.sign_in:success']);
    expect(evs.every((e) => e.email === o.email)).toBe(true);
    const cliActions = parseJson(await cli(['audit', 'list', '--action', 'user', '--json'])).events;
    expect(cliActions.some((e: { action: string; actor: string }) => e.action === 'user.create' && e.actor === 'cli')).toBe(true);
    const human = await cli(['audit', 'list', '--limit', '5']);
    expect(human.stdout.split('\n')[0]).toMatch(/^TIME\s+ACTION\s+STATUS\s+WHO/);
    expect((await cli(['audit', 'list', '--since', 'yesterdayish'])).code).toBe(1);
    expect((await cli(['audit', 'list', '--since', '2999-01-01', '--json'])).stdout).toContain('"events": []');
  });
});
