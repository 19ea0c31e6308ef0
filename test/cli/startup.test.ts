import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { tempDir } from '../helpers/server.ts';
import { parseJson, runCli, serveCli } from '../helpers/cli.ts';

const MAIN = path.resolve(import.meta.dir, '../../src/main.ts');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function dir(): string {
  const d = tempDir('coffer-cli-');
  dirs.push(d);
  return d;
}

/** Runs `coffer <args>` from source; serve is stopped as soon as it reports listening (or `enough` says so). */
async function coffer(args: string[], env: Record<string, string> = {}, enough = (out: string) => out.includes('"msg":"listening"')) {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'info', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
  let stdout = '';
  const reader = proc.stdout.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    stdout += new TextDecoder().decode(value);
    if (enough(stdout)) proc.kill('SIGTERM');
  }
  const code = await proc.exited;
  clearTimeout(timer);
  return { code, stdout, stderr: await new Response(proc.stderr).text() };
}

const oneLine = (text: string) => text.trim().split('\n').length === 1;

describe('coffer serve start-up', () => {
  test('first start creates the database and a 0600 secrets file; SIGTERM exits 0', async () => {
    const d = dir();
    const r = await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', d]);
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(d, 'coffer.db'))).toBe(true);
    expect(fs.statSync(path.join(d, 'secrets.json')).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(d, 'coffer.lock'))).toBe(false);
  });

  test('serve collects what loading the modules left before it starts; once listening, it sets the JIT back to its normal policy, then has the runtime let go of the code start-up compiled', async () => {
    const d = dir();
    const marker = path.join(d, 'shrunk');
    const preload = path.join(d, 'preload.ts');
    fs.writeFileSync(
      preload,
      [
        `const note = (what) => require('node:fs').appendFileSync(${JSON.stringify(marker)}, what + ';');`,
        'const setJITPolicy = Bun.unsafe.setJITPolicy;',
        'Bun.unsafe.setJITPolicy = (scale) => { note(`policy ${scale}`); setJITPolicy(scale); };',
        'const shrink = Bun.shrink;',
        "Bun.shrink = () => { note('shrink'); shrink(); };",
        'const gc = Bun.gc;',
        'Bun.gc = (sync) => { note(`gc ${sync}`); return gc(sync); };',
      ].join('\n'),
    );
    const proc = Bun.spawn(
      [process.execPath, '--preload', preload, MAIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', path.join(d, 'data')],
      {
        env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'warn' },
        stdout: 'ignore',
        stderr: 'ignore',
      },
    );
    try {
      for (let i = 0; i < 300 && !(fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').includes('shrink')); i++) await Bun.sleep(50);
      await Bun.sleep(200);
      const noted = fs.readFileSync(marker, 'utf8');
      // Elysia asks for young collections (`gc false`) as it compiles its handler: not serve's doing.
      expect(noted.replaceAll('gc false;', '')).toBe('gc true;policy 1;shrink;');
    } finally {
      proc.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    }
  });

  test("an idle server has made no Intl formatter (each reads the runtime's ICU data), nor does a share page to say its link's last day", async () => {
    const d = dir();
    const marker = path.join(d, 'intl');
    const preload = path.join(d, 'preload.ts');
    fs.writeFileSync(
      preload,
      [
        `const note = (what) => require('node:fs').appendFileSync(${JSON.stringify(marker)}, what + ';');`,
        'for (const name of Object.getOwnPropertyNames(Intl))',
        "  if (typeof Intl[name] === 'function' && /^[A-Z]/.test(name))",
        '    Intl[name] = new Proxy(Intl[name], { construct: (target, args, newTarget) => (note(name), Reflect.construct(target, args, newTarget)) });',
      ].join('\n'),
    );
    const server = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', path.join(d, 'data')], {
      preload,
      env: { LOG_LEVEL: 'info' },
    });
    const noted = () => (fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '');
    try {
      const { url } = server;
      const account = { email: 'idle@example.test', password: 'an idle password' };
      const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      expect((await post('/api/signup', { ...account, name: 'Idle' })).status).toBe(200);
      const login = await post('/api/login', account);
      expect(login.status).toBe(200);
      const cookie = { cookie: `token=${/token=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1]}` };
      expect(noted()).toBe('');

      const day = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
      const inAWeek = () => day.format(Date.now() + 7 * 86_400_000);
      const form = new FormData();
      form.append('file', new File(['the report'], 'report.txt'));
      const uploaded = await fetch(`${url}/api/files/upload`, { method: 'POST', headers: cookie, body: form });
      const { id } = (await uploaded.json()) as { id: string };
      const weekBefore = inAWeek();
      const shared = (await (await post('/api/files/share', { ids: [id], shared: true, expiry: '7d' }, cookie)).json()) as {
        links: Record<string, string>;
      };
      const token = /\/s\/([A-Za-z0-9_-]+)/.exec(shared.links[id]!)![1];
      for (let i = 0; i < 2; i++) {
        const html = await (await fetch(`${url}/s/${token}`, { headers: { accept: 'text/html' } })).text();
        // The server's clock may pass midnight between the two readings of the test's.
        expect([weekBefore, inAWeek()]).toContain(/ &middot; until (\d{1,2} \w+ \d{4})/.exec(html)?.[1] ?? '');
      }
      expect(noted()).toBe('');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test('an unwritable data dir: one line on stderr, exit 1', async () => {
    const file = path.join(dir(), 'a-file');
    fs.writeFileSync(file, '');
    const r = await coffer(['serve', '--port', '0', '--data-dir', path.join(file, 'data')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/data directory .* is not writable/);
    expect(oneLine(r.stderr)).toBe(true);
  });

  test('a file where blobs/ belongs: serve and doctor name it in one line, exit 1, no stack', async () => {
    const d = dir();
    expect((await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', d])).code).toBe(0);
    const blobs = path.join(d, 'blobs');
    fs.rmSync(blobs, { recursive: true });
    fs.writeFileSync(blobs, 'not a folder');
    const served = await coffer(['serve', '--port', '0', '--data-dir', d]);
    expect(served.code).toBe(1);
    expect(served.stderr).toContain(`${blobs} is in the way`);
    expect(oneLine(served.stderr)).toBe(true);
    const checked = await runCli(['doctor', '--data-dir', d]);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain(`cannot use ${blobs} to store files`);
    expect(oneLine(checked.stderr)).toBe(true);
    expect(fs.readFileSync(blobs, 'utf8')).toBe('not a folder');
  });

  test('output piped into a reader that stopped (coffer doctor | head -1): the command ends quietly, no stack, with the SIGPIPE status 141', async () => {
    const d = dir();
    expect((await coffer(['init', '--data-dir', d])).code).toBe(0);
    const proc = Bun.spawn([process.execPath, MAIN, 'doctor', '--data-dir', d], {
      env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    // The reader goes before the command's first line: every write meets a closed pipe (EPIPE).
    await proc.stdout.cancel();
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stderr }).toEqual({ code: 141, stderr: '' });
  });

  test('a port in use: one line, exit 1', async () => {
    const blocker = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('x') });
    try {
      const r = await coffer(['serve', '--port', String(blocker.port), '--host', '127.0.0.1', '--data-dir', dir()]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/port \d+ .*already in use/);
      expect(oneLine(r.stderr)).toBe(true);
    } finally {
      blocker.stop(true);
    }
  });

  test("an address to bind that is not one of this machine's (another machine's, a name that does not resolve, link-local without its interface): one line naming it, exit 1", async () => {
    for (const host of ['192.0.2.7', 'no-such-host.invalid', 'fe80::1']) {
      const r = await coffer(['serve', '--port', '0', '--host', host, '--data-dir', dir()]);
      expect({ host, code: r.code }).toEqual({ host, code: 1 });
      expect(r.stderr).toStartWith(`coffer: cannot listen on ${host} (`);
      expect(r.stderr).toContain("the address to bind (--host/HOST) must be one of this machine's");
      expect(oneLine(r.stderr)).toBe(true);
    }
  });

  test('HOST=[::1], an IPv6 address written as in a URL: the server listens on it and says where once', async () => {
    const r = await coffer(['serve', '--port', '0', '--data-dir', dir()], { HOST: '[::1]' });
    expect(r.code).toBe(0);
    const [, url] = r.stdout.match(/"msg":"listening","url":"([^"]+)"/) ?? [];
    expect(url).toMatch(/^http:\/\/\[::1\]:\d+$/);
  });

  test('a second Coffer server on the port of a running one is refused, and the first keeps all traffic', async () => {
    const first = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', dir()]);
    try {
      const { url } = first;
      const port = new URL(url).port;
      const r = await coffer(['serve', '--port', port, '--host', '127.0.0.1', '--data-dir', dir()]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`port ${port} .*already in use`));
      expect(oneLine(r.stderr)).toBe(true);
      const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(`${url}/health`).then((res) => res.status)));
      expect(answers).toEqual(Array(10).fill(200));
    } finally {
      await first.stop();
    }
  });

  test('a missing master key beside an existing database: one line, exit 1', async () => {
    const d = dir();
    expect((await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', d])).code).toBe(0);
    fs.rmSync(path.join(d, 'secrets.json'));
    const r = await coffer(['serve', '--port', '0', '--data-dir', d]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/master key missing/);
    expect(oneLine(r.stderr)).toBe(true);
  });

  test('an unreadable key file and a malformed key: one line, exit 1', async () => {
    let r = await coffer(['serve', '--port', '0', '--data-dir', dir()], { COFFER_MASTER_KEY_FILE: '/nonexistent/key' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot read COFFER_MASTER_KEY_FILE/);
    r = await coffer(['serve', '--port', '0', '--data-dir', dir()], { COFFER_MASTER_KEY: 'short' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/invalid master key/);
    expect(oneLine(r.stderr)).toBe(true);
  });

  test('single sign-on half configured, or its secret file unreadable: one line naming what is missing, exit 1', async () => {
    let r = await coffer(['serve', '--port', '0', '--data-dir', dir()], { OIDC_ISSUER_URL: 'https://id.example.com' });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'coffer: single sign-on is half configured: OIDC_ISSUER_URL is set but OIDC_CLIENT_ID and OIDC_CLIENT_SECRET (or OIDC_CLIENT_SECRET_FILE) are missing',
    );
    r = await coffer(['serve', '--port', '0', '--data-dir', dir()], {
      OIDC_ISSUER_URL: 'https://id.example.com',
      OIDC_CLIENT_ID: 'coffer',
      OIDC_CLIENT_SECRET_FILE: '/nonexistent/oidc-secret',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot read OIDC_CLIENT_SECRET_FILE \/nonexistent\/oidc-secret \(ENOENT\)/);
    expect(oneLine(r.stderr)).toBe(true);
  });

  test('METRICS_ALLOWED_IPS with an entry that is not an address or range (a range typo, a host name): one line naming it, exit 1', async () => {
    for (const entry of ['10.0.0.0/abc', 'prometheus.lan', '10.0.0.0/40']) {
      const r = await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir()], {
        METRICS_ALLOWED_IPS: `127.0.0.1, ${entry}`,
      });
      expect({ entry, code: r.code }).toEqual({ entry, code: 1 });
      expect(r.stderr.trim()).toBe(
        `coffer: METRICS_ALLOWED_IPS takes IP addresses and CIDR ranges separated by commas (e.g. 127.0.0.1,10.0.0.0/8), got "${entry}"`,
      );
    }
  });

  test('COFFER_PUBLIC_URL with a path (Coffer is served at the root of its address): one line naming it, exit 1', async () => {
    const r = await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir()], {
      COFFER_PUBLIC_URL: 'https://files.example.com/coffer/',
    });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'coffer: COFFER_PUBLIC_URL takes only the scheme, host and port people open Coffer at (https://files.example.com): Coffer is served at the root of its address, got "https://files.example.com/coffer/"',
    );
  });

  test('a configuration file (COFFER_CONFIG) with a line that is not VAR=value, an unknown name or a quote left open: one line naming the file, the line and the nearest setting, exit 1, nothing created', async () => {
    const conf = path.join(dir(), 'coffer.env');
    const cases: Array<[string, string]> = [
      ['PORT 4000', '"PORT 4000" is not a VAR=value line'],
      ['COFFER_DATADIR=/srv/coffer', 'unknown setting COFFER_DATADIR (did you mean COFFER_DATA_DIR?)'],
      ['LOG_LEVEL="warn', 'the value of LOG_LEVEL opens a " quote that does not close at the end of the line'],
    ];
    for (const [bad, what] of cases) {
      const data = path.join(dir(), 'data');
      fs.writeFileSync(conf, `# Coffer settings\n\nHOST=127.0.0.1\n${bad}\nTZ=Europe/Berlin\n`);
      const r = await coffer(['serve', '--port', '0', '--data-dir', data], { COFFER_CONFIG: conf });
      expect({ bad, code: r.code, stderr: r.stderr.trim() }).toEqual({
        bad,
        code: 1,
        stderr: `coffer: configuration file ${conf}, line 4: ${what}`,
      });
      expect(fs.existsSync(data)).toBe(false);
    }
  }, 60_000);

  test('a COFFER_* environment variable Coffer does not read: the server starts and warns, naming the nearest setting', async () => {
    const warned =
      '"level":"warn","msg":"environment variable COFFER_PUBLIC_URI is ignored: unknown setting COFFER_PUBLIC_URI (did you mean COFFER_PUBLIC_URL?)"';
    const r = await coffer(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir()],
      { COFFER_PUBLIC_URI: 'https://files.example.com' },
      (out) => out.includes('"msg":"listening"') && out.includes(warned),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(warned);
  });

  test('a share base URL with a path an earlier version stored: serve starts and warns, doctor names it, both with what to do', async () => {
    const d = dir();
    expect((await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', d])).code).toBe(0);
    const db = new Database(path.join(d, 'coffer.db'));
    db.run("INSERT INTO settings (key, value, updated_at) VALUES ('shareBaseUrl', ?, ?)", [
      JSON.stringify('https://share.example.com/files'),
      Date.now(),
    ]);
    db.close();
    const notice =
      'the share base URL https://share.example.com/files has a path, which Coffer ignores: share links are https://share.example.com/s/…';
    const r = await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', d], {}, (out) => out.includes(notice));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"level":"warn"');
    expect(r.stdout).toContain('coffer settings set shareBaseUrl https://share.example.com');
    const doctor = await runCli(['doctor', '--data-dir', d]);
    expect(doctor.code).toBe(3);
    expect(doctor.stdout).toContain(`settings: ${notice}`);
    const json = parseJson(await runCli(['doctor', '--json', '--data-dir', d]));
    expect(json.settings).toEqual([expect.stringContaining(notice)]);
    // Once set to the origin alone, nothing more is said.
    expect((await runCli(['settings', 'set', 'shareBaseUrl', 'https://share.example.com', '--data-dir', d])).code).toBe(0);
    const fixed = await runCli(['doctor', '--json', '--data-dir', d]);
    expect({ code: fixed.code, settings: parseJson(fixed).settings }).toEqual({ code: 0, settings: [] });
  });

  test("serve and init on a directory of someone's files (a home, a folder of documents): one line naming it, exit 1, nothing written there", async () => {
    const home = dir();
    fs.mkdirSync(path.join(home, 'Documents'));
    fs.writeFileSync(path.join(home, 'notes.txt'), 'mine');
    fs.writeFileSync(path.join(home, '.bashrc'), '');
    const before = fs.readdirSync(home).sort();
    for (const args of [['serve', '--port', '0', '--host', '127.0.0.1'], ['init']]) {
      const r = await coffer([...args, '--data-dir', home]);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(r.stderr.trim()).toBe(
        `coffer: data directory ${home} is not empty and holds no Coffer data (.bashrc, Documents, notes.txt): Coffer keeps its database, secrets and files in a directory of its own; point --data-dir (COFFER_DATA_DIR) at a new or empty one, such as ${path.join(home, 'coffer-data')}`,
      );
      expect(fs.readdirSync(home).sort()).toEqual(before);
    }
    // A new disk's mount point, with what a first start stopped early left: a new data directory.
    const mount = dir();
    fs.mkdirSync(path.join(mount, 'lost+found'));
    fs.mkdirSync(path.join(mount, 'blobs'));
    const r = await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', mount]);
    expect(r.code).toBe(0);
    // Coffer's own directory, as every version left it, starts again.
    expect((await coffer(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', mount])).code).toBe(0);
  }, 60_000);

  test('a provider that cannot be reached at start-up: a warning, and the server serves', async () => {
    const warned = '"level":"warn","msg":"single sign-on provider discovery failed; retrying later"';
    const r = await coffer(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir()],
      { OIDC_ISSUER_URL: 'http://127.0.0.1:9/unreachable', OIDC_CLIENT_ID: 'coffer', OIDC_CLIENT_SECRET: 'x' },
      (out) => out.includes('"msg":"listening"') && out.includes(warned),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(warned);
    expect(r.stderr).toBe('');
  });

  test('a database written by a newer version is refused', async () => {
    const d = dir();
    expect((await coffer(['init', '--data-dir', d])).code).toBe(0);
    const db = new Database(path.join(d, 'coffer.db'));
    db.run("INSERT INTO coffer_migrations (tag, hash, applied_at) VALUES ('9999_from_the_future', 'x', 0)");
    db.close();
    for (const args of [
      ['migrate', '--data-dir', d],
      ['serve', '--port', '0', '--data-dir', d],
    ]) {
      const r = await coffer(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/newer version of Coffer/);
      expect(oneLine(r.stderr)).toBe(true);
    }
  });

  test("a database file that is not one (overwritten, another program's file): serve and every command say so in one line, exit 1", async () => {
    const d = dir();
    expect((await coffer(['init', '--data-dir', d])).code).toBe(0);
    const db = path.join(d, 'coffer.db');
    fs.writeFileSync(db, Buffer.alloc(8192, 'not a database '));
    for (const args of [['serve', '--port', '0'], ['users', 'list'], ['doctor'], ['backup', '--full', path.join(d, 'b.tar')]]) {
      const r = await coffer([...args, '--data-dir', d]);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(r.stderr.trim()).toBe(
        `coffer: ${db} is not a Coffer database, or it is damaged (SQLITE_NOTADB): point --data-dir (COFFER_DATA_DIR) at the instance's directory, or restore the instance from a backup (coffer restore)`,
      );
    }
  });

  test('a second server on the same data dir is refused', async () => {
    const d = dir();
    const first = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', d]);
    try {
      const r = await coffer(['serve', '--port', '0', '--data-dir', d]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/already using/);
    } finally {
      await first.stop();
    }
  });

  test('init creates an instance with its migrations applied; migrate then has nothing to do', async () => {
    const d = path.join(dir(), 'new');
    const first = await coffer(['init', '--data-dir', d]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`created a new Coffer instance in ${d}`);
    expect(fs.statSync(path.join(d, 'secrets.json')).mode & 0o777).toBe(0o600);
    const applied = new Database(path.join(d, 'coffer.db')).query<{ tag: string }, []>('SELECT tag FROM coffer_migrations').all();
    expect(applied.map((r) => r.tag)).toContain('0000_initial');
    expect((await coffer(['migrate', '--data-dir', d])).stdout).toMatch(/up to date/);
    const secrets = fs.readFileSync(path.join(d, 'secrets.json'), 'utf8');
    const again = await coffer(['init', '--data-dir', d]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already holds a Coffer instance; nothing changed');
    expect(fs.readFileSync(path.join(d, 'secrets.json'), 'utf8')).toBe(secrets);
  });

  test('every command but serve and init, pointed at a missing or empty directory, says so and creates nothing', async () => {
    const parent = dir();
    const missing = path.join(parent, 'typo');
    const empty = path.join(parent, 'empty');
    fs.mkdirSync(empty);
    for (const args of [
      ['migrate'],
      ['users', 'list'],
      ['keys', 'rotate'],
      ['doctor'],
      ['orphans', 'scan'],
      ['settings', 'get'],
      ['audit', 'list'],
      ['backup', path.join(parent, 'b.db')],
    ]) {
      // The two side by side: each start of the CLI from source costs seconds on a loaded machine.
      const [onMissing, onEmpty] = await Promise.all([coffer([...args, '--data-dir', missing]), coffer([...args, '--data-dir', empty])]);
      expect(onMissing.code).toBe(1);
      expect(onMissing.stderr).toContain(`data directory ${missing} does not exist`);
      expect(onMissing.stderr).toContain('coffer init');
      expect(oneLine(onMissing.stderr)).toBe(true);
      expect(onEmpty.code).toBe(1);
      expect(onEmpty.stderr).toContain(`${empty} holds no Coffer database`);
    }
    const r = await coffer(['users', 'create', 'a@example.test', '--admin', '--data-dir', missing]);
    expect(r.code).toBe(1);
    expect(fs.readdirSync(parent).sort()).toEqual(['empty']);
    expect(fs.readdirSync(empty)).toEqual([]);
    // Seventeen starts of the CLI from source.
  }, 120_000);

  test("help loads no server module, and a command on a data directory loads neither the routes nor Elysia (each command's implementation loads when it runs)", async () => {
    const d = dir();
    const data = path.join(d, 'data');
    expect((await coffer(['init', '--data-dir', data])).code).toBe(0);
    const preload = path.join(d, 'preload.ts');
    const listFile = path.join(d, 'modules.json');
    fs.writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(listFile)}, JSON.stringify(Object.keys(require.cache))));`,
    );
    const loaded = (args: string[]) => {
      const run = Bun.spawnSync([process.execPath, '--preload', preload, MAIN, ...args], {
        env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null' },
      });
      expect(run.exitCode).toBe(0);
      const root = path.resolve(import.meta.dir, '../..');
      return (JSON.parse(fs.readFileSync(listFile, 'utf8')) as string[]).map((m) =>
        m.includes('/node_modules/') ? m.replace(/.*\/node_modules\/((@[^/]+\/)?[^/]+)\/.*/, '$1') : path.relative(root, m),
      );
    };
    const server = ['src/composition.ts', 'src/app.ts', 'src/listener.ts', 'elysia', 'drizzle-orm', 'zod', 'jose'];
    for (const args of [['--help'], ['users', 'list', '--help'], ['settings', 'get', '--help']]) {
      const modules = loaded(args);
      expect(modules).toContain('commander');
      expect(modules.filter((m) => server.includes(m) || m.startsWith('src/http/') || m.startsWith('src/db/'))).toEqual([]);
    }
    const command = loaded(['users', 'list', '--json', '--data-dir', data]);
    expect(command).toContain('src/composition.ts');
    expect(command.filter((m) => ['src/app.ts', 'src/listener.ts', 'elysia'].includes(m) || m.startsWith('src/http/'))).toEqual([]);
  });

  test('--help lists the commands; --version prints the version', async () => {
    const help = await coffer(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('serve');
    expect(help.stdout).toContain('migrate');
    const serveHelp = await coffer(['serve', '--help']);
    expect(serveHelp.stdout).toContain('COFFER_MASTER_KEY');
    for (const name of [
      'OIDC_ISSUER_URL',
      'OIDC_CLIENT_ID',
      'OIDC_CLIENT_SECRET_FILE',
      'OIDC_REDIRECT_URL',
      'OIDC_SCOPES',
      'OIDC_PROVIDER_NAME',
    ])
      expect(serveHelp.stdout).toContain(name);
    for (const name of ['OIDC_AUTO_CREATE', 'OIDC_DISABLE_PASSWORD_LOGIN', 'OIDC_ALLOW_HTTP']) expect(serveHelp.stdout).toContain(name);
    const commit = Bun.spawnSync(['git', 'rev-parse', '--short=12', 'HEAD']).stdout.toString().trim();
    for (const flag of ['--version', '-v']) {
      const version = await coffer([flag]);
      expect(version.code).toBe(0);
      // From source: the checkout's commit (dirty or not) and no build date.
      expect(version.stdout).toMatch(
        new RegExp(
          `^\\d+\\.\\d+\\.\\d+ \\(commit ${commit}(-dirty)?, run from source, Bun ${Bun.version} ${process.platform}-${process.arch}\\)\\n$`,
        ),
      );
    }
  });
});
