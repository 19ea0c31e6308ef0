// `npm run build [-- --target T]`: bundles the web app, then compiles the server with that bundle embedded.
// Without --target it builds dist/coffer for this machine (or --outfile F: the test runner's own); with one,
// dist/coffer-<target> from the runtime binary npm ships for that target (@oven/bun-linux-*), fetched with
// `npm pack`, never elsewhere.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BUNDLE_FILE_PREFIX, buildWebBundle, encodeWebBundle } from '../src/web/app-bundle.ts';
import { sourceCommit } from '../src/services/admin/version.ts';
import { BUILD_TARGETS, type BuildTarget } from './targets.ts';
import { recordBytecodeOrder } from './bytecode-order.ts';

const ROOT = path.resolve(import.meta.dir, '..');
const DIST = path.join(ROOT, 'dist');
const RUNTIMES = path.join(ROOT, 'node_modules', '.cache', 'coffer-runtimes');

const { values } = parseArgs({
  options: { target: { type: 'string', multiple: true }, outfile: { type: 'string' } },
  allowPositionals: false,
});
const targets = (values.target ?? []).flatMap((t) => t.split(','));
if (values.outfile && targets.length > 0) {
  console.error('build: --outfile names the executable for this machine; it cannot go with --target');
  process.exit(1);
}
for (const t of targets) {
  if (!(t in BUILD_TARGETS)) {
    console.error(`build: unknown target "${t}"; choose one of ${Object.keys(BUILD_TARGETS).join(', ')}`);
    process.exit(1);
  }
}

function run(cmd: string[], cwd = ROOT): void {
  const r = Bun.spawnSync(cmd, { cwd, stdout: 'inherit', stderr: 'inherit' });
  if (r.exitCode !== 0) {
    console.error(`build: ${cmd.slice(0, 3).join(' ')} … failed (exit ${r.exitCode})`);
    process.exit(r.exitCode ?? 1);
  }
}

/** An npm package unpacked into the cache (`npm pack`, from the registry npm is configured with); its directory. */
function fetchPackage(name: string, version: string): string {
  const dir = path.join(RUNTIMES, `${name.replace('/', '+')}-${version}`);
  const unpacked = path.join(dir, 'package');
  if (fs.existsSync(path.join(unpacked, 'package.json'))) return unpacked;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  console.log(`build: fetching ${name}@${version} from the npm registry`);
  const pack = Bun.spawnSync(['npm', 'pack', `${name}@${version}`, '--pack-destination', dir, '--silent'], {
    cwd: dir,
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const tarball = pack.stdout.toString().trim().split('\n').at(-1) ?? '';
  if (pack.exitCode !== 0 || !tarball) {
    console.error(`build: npm pack ${name}@${version} failed`);
    process.exit(1);
  }
  run(['tar', '-xzf', path.join(dir, tarball), '-C', dir]);
  fs.rmSync(path.join(dir, tarball));
  return unpacked;
}

/** The runtime executable for a target, unpacked from its npm package at the version this checkout's Bun is. */
function runtimeFor(target: BuildTarget): string {
  const exe = path.join(fetchPackage(target.npmPackage, Bun.version), 'bin', 'bun');
  fs.chmodSync(exe, 0o755);
  return exe;
}

const SHARP_VERSIONS: Record<string, string> = JSON.parse(
  fs.readFileSync(path.join(ROOT, 'node_modules', 'sharp', 'package.json'), 'utf8'),
).optionalDependencies;

/**
 * sharp's native addon and libvips for a platform (`linux-x64`, `linuxmusl-arm64`...). npm installs only
 * this machine's; another platform's are fetched like the runtimes and linked where the bundler resolves
 * sharp's require of `@img/sharp-<platform>/sharp.node`. Returns the bundler arguments: every other
 * platform's packages external (else the bundler embeds whichever are installed, each with its libvips),
 * and the libvips library embedded as a file (the executable writes it out and loads it before sharp: see
 * src/services/thumbnails/sharp.ts).
 */
function sharpFor(platform: string): string[] {
  let libvipsDir = '';
  for (const name of [`@img/sharp-${platform}`, `@img/sharp-libvips-${platform}`]) {
    const installed = path.join(ROOT, 'node_modules', name);
    if (!fs.existsSync(installed)) {
      const version = SHARP_VERSIONS[name];
      if (!version) throw new Error(`sharp has no package ${name}`);
      fs.mkdirSync(path.dirname(installed), { recursive: true });
      // A link left dangling (made by a checkout since deleted, when node_modules was shared) is replaced;
      // relative, the new one holds wherever node_modules is reached from.
      fs.rmSync(installed, { force: true });
      try {
        fs.symlinkSync(path.relative(path.dirname(installed), fetchPackage(name, version)), installed, 'dir');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.existsSync(installed)) throw err;
      }
    }
    libvipsDir = path.join(installed, 'lib');
  }
  const library = fs.readdirSync(libvipsDir).find((f) => /^libvips-cpp\.so\.\d+\.\d+\.\d+$/.test(f));
  if (!library) throw new Error(`no libvips-cpp.so in ${libvipsDir}`);
  const others = Object.keys(SHARP_VERSIONS).filter((name) => name.startsWith('@img/') && !name.endsWith(`-${platform}`));
  return [...others.map((name) => `--external=${name}`), path.relative(ROOT, path.join(libvipsDir, library))];
}

// This machine's platform as sharp names it (glibc or musl).
const hostSharpPlatform = () => {
  const glibc = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime;
  return `${process.platform}${glibc ? '' : 'musl'}-${process.arch}`;
};

fs.mkdirSync(DIST, { recursive: true });
const bundle = await buildWebBundle({ minify: true });
const bundleFile = path.join(DIST, `${BUNDLE_FILE_PREFIX}.bundle`);
// Written aside and renamed into place: another build (the test suite runs two at once) may be compiling from it.
const bundleAside = `${bundleFile}.${process.pid}`;
fs.writeFileSync(bundleAside, encodeWebBundle(bundle));
fs.renameSync(bundleAside, bundleFile);

const common = [
  'build',
  '--compile',
  '--minify',
  '--sourcemap',
  '--bytecode',
  '--format=esm',
  // Modules loaded by import() become chunks read at first use, not at start (idle RSS 94.9 → 83.8 MiB).
  '--splitting',
  // Tier-up thresholds ×64 until a thread calls jitAtFullSpeed() (src/lib/jit-policy.ts): start-up code is not JIT-compiled.
  '--compile-jit-policy=64',
  // What `coffer --version` reports; SOURCE_DATE_EPOCH (reproducible builds) fixes the date.
  '--define',
  `COFFER_BUILD_COMMIT=${JSON.stringify(sourceCommit() ?? 'unknown')}`,
  '--define',
  `COFFER_BUILD_DATE=${JSON.stringify(new Date(process.env.SOURCE_DATE_EPOCH ? Number(process.env.SOURCE_DATE_EPOCH) * 1000 : Date.now()).toISOString().replace(/\.\d+Z$/, 'Z'))}`,
  'src/main.ts',
  // A worker thread's module is its own entry point in the executable (content search's extraction, index writes and snippets).
  'src/services/search/extract-worker.ts',
  'src/services/search/index-writer.ts',
  'src/services/search/snippet-reader.ts',
  // Thumbnails are made in worker threads: their module is an entry point of its own.
  'src/services/thumbnails/worker.ts',
  // Replication reads and seals its segments in a worker thread.
  'src/services/maintenance/segment-worker.ts',
  path.relative(ROOT, bundleFile),
];
/** Builds the executables asked for: this machine's, or each --target's. */
function buildTargets(): void {
  if (targets.length === 0) {
    run([process.execPath, ...common, ...sharpFor(hostSharpPlatform()), '--outfile', values.outfile ?? 'dist/coffer']);
  } else {
    for (const name of targets) {
      const target = BUILD_TARGETS[name as keyof typeof BUILD_TARGETS];
      const outfile = `dist/coffer-${name}`;
      run([
        process.execPath,
        ...common,
        ...sharpFor(target.sharpPlatform),
        `--target=${target.bunTarget}`,
        `--compile-executable-path=${runtimeFor(target)}`,
        '--outfile',
        outfile,
      ]);
      console.log(`build: ${outfile} (${(fs.statSync(path.join(ROOT, outfile)).size / 1024 ** 2).toFixed(1)} MiB)`);
    }
  }
}

// A first build of this machine's executable serves once to record the bytecode a server runs; every build
// then stores that bytecode together (one profile fits every target). In a directory of its own: builds may run at once.
const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-build-order-'));
const orderFile = path.join(probeDir, 'coffer.order');
try {
  run([process.execPath, ...common, ...sharpFor(hostSharpPlatform()), '--outfile', path.join(probeDir, 'coffer')]);
  await recordBytecodeOrder(path.join(probeDir, 'coffer'), orderFile);
  common.push(`--bytecode-order=${orderFile}`);
  buildTargets();
} finally {
  fs.rmSync(probeDir, { recursive: true, force: true });
}
