import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBare } from './downloads.ts';
import { compileBench } from './compile.ts';
import { seedItems } from './fixtures.ts';
import { cpuSeconds, rssMiB } from './live-server.ts';
import { adminToken, buildExecutable, curl, dropFromPageCache, spawnServer, writeRandomGiB } from './server.ts';
import { median } from './streams.ts';
import { cpuPerGiB, cpuTimes, jsThreadTimes, totalCpu, type CpuTimes } from './transfer-cpu.ts';
import { flag } from './flags.ts';

const MiB = 1024 ** 2;
const SMALL_FILES = 2000;
const CLIENTS = 8;
const LISTED = 10_000;
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/** One server under test, running: how the bench moves files through it. */
interface Target {
  pid: number;
  /** Uploads the big file as transfer `run`; curl's status must be `ok`. */
  putBig(file: string, run: number): { seconds: number; ok: boolean; body: string };
  getBig(run: number): { seconds: number; bytes: number };
  putSmall(i: number, content: Uint8Array): Promise<void>;
  /** Milliseconds of one PROPFIND Depth 1 of the 10,000-item folder; absent where the door has none (the API). */
  propfind?: () => Promise<number>;
  stop(): Promise<void>;
}

interface Peer {
  name: string;
  /** What Coffer does that this server does not, printed beside its figures. */
  skips: string;
  /** A Bun server: its JavaScript thread's CPU is printed apart from its I/O threads'. */
  bun?: boolean;
  /** The running server, or why it cannot run here (and how to install it). */
  start(root: string, bigBytes: number): Promise<Target | string>;
}

interface Row {
  name: string;
  skips: string;
  missing?: string;
  upMiBs: number;
  upSyncMiBs: number;
  upCpu: number;
  /** Each upload's CPU per GiB, user and system, and the JavaScript thread's total where the server is Bun's. */
  upRuns: Array<CpuTimes & { js: number }>;
  downMiBs: number;
  downCpu: number;
  smallPerSec: number;
  smallCpuMs: number;
  propfindMs: number;
  idleRss: number;
  peakRss: number;
  /** The peak (VmHWM, which only grows) after each phase: where the peak was reached. */
  peakAfter: { propfind: number; small: number; big: number };
}

const freePort = () => 30000 + Math.floor(Math.random() * 2700);

/** Waits until `url` answers at all (any status); throws if the process exits or ~20 s pass. */
async function waitForAnswer(url: string, proc: ReturnType<typeof Bun.spawn>, what: string): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await (await fetch(url)).arrayBuffer();
      return;
    } catch {
      if (proc.exitCode !== null || i > 1000) throw new Error(`${what} did not start`);
      await Bun.sleep(20);
    }
  }
}

/** A plain WebDAV server over `base` with `headers` on each request, the listing at `listing`. */
function davTarget(pid: number, base: string, headers: Record<string, string>, listing: string, stop: () => Promise<void>): Target {
  const auth = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  return {
    pid,
    putBig(file, run) {
      const r = curl([...auth, '-T', file, `${base}/big-${run}.bin`]);
      return { seconds: r.seconds, ok: r.status === 201 || r.status === 204, body: `${r.status} ${r.body}` };
    },
    getBig(run) {
      const r = curl([...auth, '-o', '/dev/null', `${base}/big-${run}.bin`]);
      return { seconds: r.seconds, bytes: r.bytes };
    },
    async putSmall(i, content) {
      const res = await fetch(`${base}/small-${i}.bin`, { method: 'PUT', headers, body: content });
      if (res.status !== 201 && res.status !== 204) throw new Error(`PUT ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    },
    async propfind() {
      const t = performance.now();
      const res = await fetch(listing, { method: 'PROPFIND', headers: { ...headers, depth: '1' } });
      const text = await res.text();
      if (res.status !== 207) throw new Error(`PROPFIND ${res.status}`);
      const responses = text.split(/<(?:\w+:)?response[\s>]/).length - 1;
      if (responses !== LISTED + 1) throw new Error(`PROPFIND listed ${responses} responses, not ${LISTED + 1}`);
      return performance.now() - t;
    },
    stop,
  };
}

/** The folder of 10,000 empty files the peers list, as they would on disk. */
function writeListing(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < LISTED; i++) fs.writeFileSync(path.join(dir, `photo ${String(i).padStart(5, '0')}.jpg`), '');
}

/** Starts a child process and returns a stop that ends it (SIGTERM) and waits. */
function spawnPeer(command: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawn(command, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdout: 'ignore', stderr: 'pipe' });
  return {
    proc,
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

const COFFER_ENV = { LOG_LEVEL: 'warn', COFFER_GENERAL_RATE_LIMIT: '1000000000', COFFER_UPLOAD_RATE_LIMIT: '1000000000' };

/** Coffer, started and signed in to once (the idle RSS is read after that sign-in); its API or its WebDAV door. */
function cofferPeer(exe: string, door: 'api' | 'dav'): Peer {
  return {
    name: door === 'api' ? 'Coffer API' : 'Coffer WebDAV',
    bun: true,
    skips: 'encrypts (AES-256-GCM), fsyncs file and folder before answering, a SQLite database, versions, quota',
    async start(root) {
      dropFromPageCache(exe);
      const { url, proc } = await spawnServer([exe], root, COFFER_ENV);
      const stop = async () => {
        proc.kill('SIGTERM');
        await proc.exited;
      };
      const token = await adminToken(url);
      const signIn = await fetch(`${url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'bench@example.test', password: 'bench password' }),
      });
      if (!signIn.ok) throw new Error(`sign-in failed: ${signIn.status} ${await signIn.text()}`);
      const cookie = { Cookie: `token=${token}` };
      const post = async (p: string, body: unknown) => {
        const res = await fetch(`${url}${p}`, {
          method: 'POST',
          headers: { ...cookie, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
        return (await res.json()) as Record<string, any>;
      };
      if (door === 'dav') {
        const profile = (await (await fetch(`${url}/api/profile`, { headers: cookie })).json()) as { id: string; email: string };
        const { password } = await post('/api/user/app-passwords', { name: 'bench' });
        const folder = await post('/api/files/folder', { name: 'Ten thousand' });
        seedItems(
          path.join(root, 'coffer.db'),
          profile.id,
          (i) => ({ parentId: folder.id, name: `photo ${String(i).padStart(5, '0')}.jpg` }),
          LISTED,
        );
        const basic = { authorization: `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}` };
        return davTarget(proc.pid, `${url}/dav`, basic, `${url}/dav/Ten%20thousand/`, stop);
      }
      const uploaded: string[] = [];
      return {
        pid: proc.pid,
        putBig(file) {
          const r = curl(['-H', `Cookie: token=${token}`, '-F', `file=@${file};type=application/octet-stream`, `${url}/api/files/upload`]);
          if (r.status === 200) uploaded.push((JSON.parse(r.body) as { id: string }).id);
          return { seconds: r.seconds, ok: r.status === 200, body: `${r.status} ${r.body}` };
        },
        getBig(run) {
          const r = curl(['-H', `Cookie: token=${token}`, '-o', '/dev/null', `${url}/api/files/${uploaded[run]}/download`]);
          return { seconds: r.seconds, bytes: r.bytes };
        },
        async putSmall(i, content) {
          const form = new FormData();
          form.append('file', new File([content], `small-${i}.bin`));
          const res = await fetch(`${url}/api/files/upload`, { method: 'POST', headers: cookie, body: form });
          if (res.status !== 200) throw new Error(`small upload: ${res.status} ${await res.text()}`);
          await res.arrayBuffer();
        },
        stop,
      };
    },
  };
}

const rclonePeer: Peer = {
  name: 'rclone serve webdav',
  skips: 'no encryption, no fsync, no database, no versions',
  async start(root) {
    if (!Bun.which('rclone')) return 'not installed (apt-get install rclone)';
    const version = /rclone (v\S+)/.exec(Bun.spawnSync(['rclone', 'version'], { stdout: 'pipe' }).stdout.toString())?.[1] ?? '?';
    this.name = `rclone serve webdav ${version}`;
    const files = path.join(root, 'files');
    writeListing(path.join(files, 'list'));
    const port = freePort();
    const { proc, stop } = spawnPeer(['rclone', 'serve', 'webdav', files, '--addr', `127.0.0.1:${port}`, '--config', '/dev/null']);
    const base = `http://127.0.0.1:${port}`;
    await waitForAnswer(`${base}/`, proc, 'rclone serve webdav');
    return davTarget(proc.pid, base, {}, `${base}/list/`, stop);
  },
};

const APACHE_MODULES = ['mpm_event', 'authz_core', 'dav', 'dav_fs'];

/** Apache httpd with mod_dav, its own configuration in `root`, one foreground process (`-X`). */
const apachePeer: Peer = {
  name: 'Apache 2.4 mod_dav',
  skips: 'no encryption, no fsync, no database, no versions',
  async start(root, bigBytes) {
    const binary = Bun.which('apache2') ?? Bun.which('apache2', { PATH: '/usr/sbin' });
    const modules = '/usr/lib/apache2/modules';
    if (!binary || !fs.existsSync(path.join(modules, 'mod_dav_fs.so'))) return 'not installed (apt-get install apache2)';
    const files = path.join(root, 'files');
    writeListing(path.join(files, 'list'));
    const port = freePort();
    const conf = path.join(root, 'httpd.conf');
    fs.writeFileSync(
      conf,
      [
        `ServerRoot ${root}`,
        `Listen 127.0.0.1:${port}`,
        'ServerName 127.0.0.1',
        ...APACHE_MODULES.map((m) => `LoadModule ${m}_module ${modules}/mod_${m}.so`),
        `PidFile ${root}/httpd.pid`,
        `ErrorLog ${root}/error.log`,
        `DavLockDB ${root}/lock/davlock`,
        'User www-data',
        'Group www-data',
        `LimitRequestBody ${bigBytes + MiB}`,
        `DocumentRoot ${files}`,
        `<Directory ${files}>`,
        '  Dav On',
        '  Require all granted',
        '</Directory>',
        '',
      ].join('\n'),
    );
    fs.mkdirSync(path.join(root, 'lock'));
    Bun.spawnSync(['chown', '-R', 'www-data:www-data', files, path.join(root, 'lock')]);
    // The workers run as www-data: it must reach the files through the bench's own temporary folders.
    for (const d of [root, path.dirname(root)]) fs.chmodSync(d, 0o755);
    const version = /Apache\/(\S+)/.exec(Bun.spawnSync([binary, '-v'], { stdout: 'pipe' }).stdout.toString())?.[1] ?? '?';
    this.name = `Apache ${version} mod_dav`;
    const { proc, stop } = spawnPeer([binary, '-X', '-f', conf]);
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitForAnswer(`${base}/`, proc, 'apache2');
    } catch (err) {
      throw new Error(
        `${(err as Error).message}: ${fs.existsSync(`${root}/error.log`) ? fs.readFileSync(`${root}/error.log`, 'utf8') : ''}`,
      );
    }
    return davTarget(proc.pid, base, {}, `${base}/list/`, stop);
  },
};

/**
 * copyparty with its WebDAV door, plain or with its file index (`-e2d`, a SQLite database of the volume). No Debian
 * or npm package carries it: `pip install copyparty`, or its source tree on PYTHONPATH (it needs jinja2).
 */
function copypartyPeer(indexed: boolean): Peer {
  return {
    name: indexed ? 'copyparty with its index (-e2d)' : 'copyparty',
    skips: `no encryption, no fsync${indexed ? '' : ', no database'}, no versions`,
    async start(root) {
      const command = Bun.which('copyparty')
        ? ['copyparty']
        : Bun.spawnSync(['python3', '-c', 'import copyparty'], { stderr: 'ignore' }).exitCode === 0
          ? ['python3', '-m', 'copyparty']
          : null;
      if (!command)
        return 'not installed (`pip install copyparty`, the single-file copyparty-sfx.py from its GitHub releases, or its source tree on PYTHONPATH)';
      const files = path.join(root, 'files');
      writeListing(path.join(files, 'list'));
      const port = freePort();
      const args = ['-q', '-i', '127.0.0.1', '-p', String(port), '-v', `${files}::rwd`, '--daw', ...(indexed ? ['-e2d'] : [])];
      const { proc, stop } = spawnPeer([...command, ...args], { cwd: root });
      const base = `http://127.0.0.1:${port}`;
      await waitForAnswer(`${base}/`, proc, 'copyparty');
      return davTarget(proc.pid, base, {}, `${base}/list/`, stop);
    },
  };
}

/** 4 KiB files from 8 clients: files per second and the server's CPU milliseconds per file. */
async function smallUploads(target: Target, prefix: number): Promise<{ perSec: number; cpuMs: number }> {
  const content = randomBytes(4096);
  for (let i = 0; i < 50; i++) await target.putSmall(prefix + SMALL_FILES + i, content);
  let next = 0;
  const before = cpuSeconds(target.pid);
  const t = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < SMALL_FILES) await target.putSmall(prefix + next++, content);
    }),
  );
  const seconds = (performance.now() - t) / 1000;
  const cpu = cpuSeconds(target.pid);
  return { perSec: SMALL_FILES / seconds, cpuMs: ((cpu.user + cpu.system - before.user - before.system) * 1000) / SMALL_FILES };
}

/** Every figure of one server, started in `root` and stopped after. */
async function measure(peer: Peer, root: string, bigFile: string, bigBytes: number): Promise<Row> {
  const empty = {
    upMiBs: NaN,
    upSyncMiBs: NaN,
    upCpu: NaN,
    upRuns: [],
    downMiBs: NaN,
    downCpu: NaN,
    smallPerSec: NaN,
    smallCpuMs: NaN,
    propfindMs: NaN,
    idleRss: NaN,
    peakRss: NaN,
    peakAfter: { propfind: NaN, small: NaN, big: NaN },
  };
  const target = await peer.start(root, bigBytes);
  if (typeof target === 'string') return { name: peer.name, skips: peer.skips, missing: target, ...empty };
  try {
    await Bun.sleep(1000);
    const idleRss = rssMiB(target.pid).rss;
    let propfindMs = NaN;
    if (target.propfind) {
      for (let i = 0; i < 2; i++) await target.propfind();
      const runs: number[] = [];
      for (let i = 0; i < 5; i++) runs.push(await target.propfind());
      propfindMs = median(runs);
    }
    const afterPropfind = rssMiB(target.pid).peak;
    const small = await smallUploads(target, 0);
    const afterSmall = rssMiB(target.pid).peak;
    const ups: Array<{ mibs: number; withSync: number; cpu: number; split: CpuTimes & { js: number } }> = [];
    const downs: Array<{ mibs: number; cpu: number }> = [];
    const perGiB = (cpu: number) => (cpu * 1024 ** 3) / bigBytes;
    for (let run = 0; run < 3; run++) {
      Bun.spawnSync(['sync']);
      const upBefore = cpuTimes(target.pid);
      const jsBefore = peer.bun ? jsThreadTimes(target.pid) : null;
      const up = target.putBig(bigFile, run);
      if (!up.ok) throw new Error(`${peer.name}: upload ${up.body}`);
      const split = cpuPerGiB(target.pid, upBefore, bigBytes);
      const js = jsBefore ? totalCpu(cpuPerGiB(target.pid, jsBefore, bigBytes, jsThreadTimes(target.pid))) : NaN;
      // What a peer that does not fsync leaves for the kernel to write: the same upload made durable.
      const t = performance.now();
      Bun.spawnSync(['sync']);
      const syncSeconds = (performance.now() - t) / 1000;
      ups.push({
        mibs: bigBytes / MiB / up.seconds,
        withSync: bigBytes / MiB / (up.seconds + syncSeconds),
        cpu: totalCpu(split),
        split: { ...split, js },
      });
      const before = totalCpu(cpuTimes(target.pid));
      const down = target.getBig(run);
      if (down.bytes !== bigBytes) throw new Error(`${peer.name}: download returned ${down.bytes} bytes`);
      downs.push({ mibs: bigBytes / MiB / down.seconds, cpu: perGiB(totalCpu(cpuTimes(target.pid)) - before) });
    }
    const best = <T extends { mibs: number }>(xs: T[]) => xs.reduce((a, b) => (b.mibs > a.mibs ? b : a));
    return {
      name: peer.name,
      skips: peer.skips,
      upMiBs: best(ups).mibs,
      upSyncMiBs: Math.max(...ups.map((u) => u.withSync)),
      upCpu: Math.min(...ups.map((u) => u.cpu)),
      upRuns: ups.map((u) => u.split),
      downMiBs: best(downs).mibs,
      downCpu: Math.min(...downs.map((d) => d.cpu)),
      smallPerSec: small.perSec,
      smallCpuMs: small.cpuMs,
      propfindMs,
      idleRss,
      peakRss: rssMiB(target.pid).peak,
      peakAfter: { propfind: afterPropfind, small: afterSmall, big: rssMiB(target.pid).peak },
    };
  } finally {
    await target.stop();
  }
}

/** The bare reference, compiled as Coffer is: its idle RSS, and 4 KiB files/s by PUT and by multipart POST. */
async function measureBare(
  dir: string,
): Promise<{ idleRss: number; put: { perSec: number; cpuMs: number }; post: { perSec: number; cpuMs: number } }> {
  const exe = compileBench('bare-durable.ts', dir);
  dropFromPageCache(exe);
  const data = path.join(dir, 'bare-data');
  const { url, proc } = await spawnServer([exe], data, {});
  try {
    await Bun.sleep(1000);
    const idleRss = rssMiB(proc.pid).rss;
    const byPut: Target = {
      pid: proc.pid,
      putBig: () => ({ seconds: 0, ok: false, body: '' }),
      getBig: () => ({ seconds: 0, bytes: 0 }),
      async putSmall(i, content) {
        const res = await fetch(`${url}/${i}`, { method: 'PUT', body: content });
        if (res.status !== 201) throw new Error(`bare PUT ${res.status}`);
        await res.arrayBuffer();
      },
      stop: async () => {},
    };
    const byPost: Target = {
      ...byPut,
      async putSmall(i, content) {
        const form = new FormData();
        form.append('file', new File([content], `small-${i}.bin`));
        const res = await fetch(`${url}/`, { method: 'POST', body: form });
        if (res.status !== 200) throw new Error(`bare POST ${res.status}`);
        await res.arrayBuffer();
      },
    };
    const put = await smallUploads(byPut, 0);
    const post = await smallUploads(byPost, 10 * SMALL_FILES);
    return { idleRss, put, post };
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
  }
}

/** The runtime's floor for a download (bench/bare-download.ts, compiled): best MiB/s and least CPU per GiB of 3. */
async function measureBareDownload(dir: string, bigBytes: number): Promise<{ mibs: number; cpu: number }> {
  const bare = await startBare(dir, bigBytes / MiB);
  try {
    bare.get();
    const runs: Array<{ mibs: number; cpu: number }> = [];
    for (let run = 0; run < 3; run++) {
      const before = totalCpu(cpuTimes(bare.pid));
      const got = bare.get();
      if (got.bytes !== bigBytes) throw new Error(`bare download sent ${got.bytes} bytes`);
      runs.push({ mibs: bigBytes / MiB / got.seconds, cpu: ((totalCpu(cpuTimes(bare.pid)) - before) * 1024 ** 3) / bigBytes });
    }
    return { mibs: Math.max(...runs.map((r) => r.mibs)), cpu: Math.min(...runs.map((r) => r.cpu)) };
  } finally {
    await bare.stop();
  }
}

const load = () => `load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`;

/**
 * `npm run bench -- peers [--mib N]`: Coffer (API and WebDAV), rclone serve webdav, Apache httpd with mod_dav
 * and copyparty, one at a time on loopback over the same disk, then each of issue 49's goals as a ratio
 * from this one run. `--mib` shrinks the big transfer from 1,024 MiB for a quick check; `--coffer-only` runs
 * Coffer's two doors alone (their rows and peaks, no peers, bare references or goals).
 * COFFER_BENCH_EXE measures another build instead of building dist/coffer.
 */
export async function runPeersBench(): Promise<void> {
  const bigBytes = flag('mib', 1024) * MiB;
  const cofferOnly = process.argv.includes('--coffer-only');
  const exe = process.env.COFFER_BENCH_EXE ?? buildExecutable();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-peers-'));
  console.log(`peers: start, ${load()}`);
  try {
    const bigFile = path.join(dir, 'big.bin');
    if (bigBytes === 1024 ** 3) writeRandomGiB(bigFile);
    else fs.writeFileSync(bigFile, randomBytes(bigBytes));
    const bare = cofferOnly ? null : await measureBare(dir);
    const floor = cofferOnly ? null : await measureBareDownload(dir, bigBytes);
    const peers = [
      cofferPeer(exe, 'api'),
      cofferPeer(exe, 'dav'),
      ...(cofferOnly ? [] : [rclonePeer, copypartyPeer(false), copypartyPeer(true), apachePeer]),
    ];
    const rows: Row[] = [];
    for (const peer of peers) {
      const root = fs.mkdtempSync(path.join(dir, 'server-'));
      try {
        rows.push(await measure(peer, root, bigFile, bigBytes));
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
      console.log(`peers: ${peer.name} done, ${load()}`);
    }
    const size = bigBytes === 1024 ** 3 ? '1 GiB' : `${bigBytes / MiB} MiB`;
    console.log(
      `\n| server | up MiB/s (up + sync) | up CPU s/GiB | down MiB/s | down CPU s/GiB | 4 KiB files/s | CPU ms/file | PROPFIND 10k ms | idle / peak RSS MiB | Coffer does in addition |`,
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      if (r.missing) {
        console.log(`| ${r.name} | ${r.missing} | | | | | | | | |`);
        continue;
      }
      console.log(
        `| ${r.name} | ${fmt(r.upMiBs)} (${fmt(r.upSyncMiBs)}) | ${fmt(r.upCpu, 2)} | ${fmt(r.downMiBs)} | ${fmt(r.downCpu, 2)} | ${fmt(r.smallPerSec)} | ${fmt(r.smallCpuMs, 2)} | ${fmt(r.propfindMs, 1)} | ${fmt(r.idleRss, 1)} / ${fmt(r.peakRss, 1)} | ${r.name.startsWith('Coffer') ? '' : r.skips} |`,
      );
    }
    if (bare && floor) {
      console.log(
        `| bare Bun, compiled (write, fsync, rename, fsync of the folder) | | | | | PUT ${fmt(bare.put.perSec)}, multipart ${fmt(bare.post.perSec)} | PUT ${fmt(bare.put.cpuMs, 2)}, multipart ${fmt(bare.post.cpuMs, 2)} | | ${fmt(bare.idleRss, 1)} / – | no encryption, no database |`,
      );
      console.log(
        `| bare Bun, compiled (read sealed segments, open, stream: the runtime's download floor) | | | ${fmt(floor.mibs)} | ${fmt(floor.cpu, 2)} | | | | | no database |`,
      );
    }
    for (const r of rows.filter((row) => !row.missing)) {
      console.log(
        `peers.peak_rss_MiB ${r.name}: after PROPFIND ${fmt(r.peakAfter.propfind, 1)}, after the 4 KiB files ${fmt(r.peakAfter.small, 1)}, after the ${size} transfers ${fmt(r.peakAfter.big, 1)}`,
      );
    }
    for (const r of rows.filter((row) => !row.missing)) {
      const runs = r.upRuns.map(
        (u) => `${fmt(u.user, 2)} + ${fmt(u.system, 2)}${Number.isNaN(u.js) ? '' : ` (JavaScript thread ${fmt(u.js, 2)})`}`,
      );
      console.log(`peers.upload_cpu_s_per_GiB ${r.name}, user + system each upload: ${runs.join(', ')}`);
    }
    console.log(
      `(${size} transfers best of 3 with \`sync\` before each upload; ${SMALL_FILES} × 4 KiB from ${CLIENTS} clients; PROPFIND Depth 1 median of 5; ${load()})`,
    );
    if (!bare || !floor) return;

    const [api, dav] = rows as [Row, Row];
    const others = rows.slice(2).filter((r) => !r.missing);
    const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
    const goal = (text: string, met: boolean) => console.log(`peers.goal ${text}: ${verdict(met)}`);
    const bestOf = (pick: (r: Row) => number, higher = true) =>
      others.reduce((a, b) => ((higher ? pick(b) > pick(a) : pick(b) < pick(a)) ? b : a));
    if (others.length) {
      const fastestUp = bestOf((r) => r.upSyncMiBs);
      const cheapestUp = bestOf((r) => r.upCpu, false);
      for (const c of [api, dav]) {
        goal(
          `${c.name} upload to durable ${fmt(c.upSyncMiBs)} MiB/s = ${fmt(c.upSyncMiBs / fastestUp.upSyncMiBs, 2)}× ${fastestUp.name} (goal > 1)`,
          c.upSyncMiBs > fastestUp.upSyncMiBs,
        );
        goal(
          `${c.name} upload CPU ${fmt(c.upCpu, 2)} s/GiB = ${fmt(c.upCpu / cheapestUp.upCpu, 2)}× ${cheapestUp.name} (goal < 1)`,
          c.upCpu < cheapestUp.upCpu,
        );
      }
      const mostSmall = bestOf((r) => r.smallPerSec);
      for (const c of [api, dav]) {
        goal(
          `${c.name} 4 KiB files/s ${fmt(c.smallPerSec)} = ${fmt(c.smallPerSec / mostSmall.smallPerSec, 2)}× ${mostSmall.name} (goal > 1; it does not fsync)`,
          c.smallPerSec > mostSmall.smallPerSec,
        );
      }
      const quickestList = bestOf((r) => r.propfindMs, false);
      goal(
        `${dav.name} PROPFIND 10k ${fmt(dav.propfindMs, 1)} ms = ${fmt(dav.propfindMs / quickestList.propfindMs, 2)}× ${quickestList.name} (goal < 1)`,
        dav.propfindMs < quickestList.propfindMs,
      );
      const fastestDown = bestOf((r) => r.downMiBs);
      for (const c of [api, dav]) {
        const speed = c.downMiBs / fastestDown.downMiBs;
        const cpu = c.downCpu / fastestDown.downCpu;
        goal(
          `${c.name} download ${fmt(speed, 2)}× ${fastestDown.name}'s MiB/s (goal ≥ 0.9) at ${fmt(cpu, 2)}× its CPU per GiB (goal ≤ 2; it sends the page cache, Coffer decrypts)`,
          speed >= 0.9 && cpu <= 2,
        );
        console.log(
          `peers.download_cpu_against_floor ${c.name} ${fmt(c.downCpu, 2)} s/GiB = ${fmt(c.downCpu / floor.cpu, 2)}× the bare Bun floor's ${fmt(floor.cpu, 2)}, which is ${fmt(floor.cpu / fastestDown.downCpu, 2)}× ${fastestDown.name}'s`,
        );
      }
    }
    goal(
      `Coffer API single 4 KiB uploads ${fmt(api.smallPerSec)}/s = ${fmt((100 * api.smallPerSec) / bare.post.perSec)}% of the bare reference's multipart (goal ≥ 70%)`,
      api.smallPerSec >= 0.7 * bare.post.perSec,
    );
    goal(
      `Coffer WebDAV 4 KiB PUT ${fmt(dav.smallPerSec)}/s = ${fmt((100 * dav.smallPerSec) / bare.put.perSec)}% of the bare reference's PUT (goal ≥ 70%)`,
      dav.smallPerSec >= 0.7 * bare.put.perSec,
    );
    goal(
      `Coffer WebDAV 4 KiB PUT = ${fmt(dav.smallPerSec / api.smallPerSec, 2)}× the API's files/s, ${fmt(dav.smallCpuMs / api.smallCpuMs, 2)}× its CPU per file (goal: as fast, ≥ 0.95×)`,
      dav.smallPerSec >= 0.95 * api.smallPerSec,
    );
    const idle = Math.max(api.idleRss, dav.idleRss);
    goal(
      `Coffer idle RSS after start and one sign-in ${fmt(idle, 1)} MiB = ${fmt(idle / bare.idleRss, 2)}× the compiled bare Bun server's ${fmt(bare.idleRss, 1)} (goal ≤ 1.5×)`,
      idle <= 1.5 * bare.idleRss,
    );
    const peak = Math.max(api.peakRss, dav.peakRss);
    goal(`Coffer peak RSS over the peers bench ${fmt(peak, 1)} MiB (goal < 120)`, peak < 120);
    console.log(
      'peers: not measured here: bulk uploads (npm run bench -- requests), the profile and list routes against bare Bun (requests), tus and S3 peak RSS (tus, s3), thumbnails (thumbnails), content indexing (search)',
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runPeersBench();
