// `npm run build [-- --target T]`: bundles the web app, then compiles the server with that bundle embedded.
// Without --target it builds dist/coffer for this machine; with one, dist/coffer-<target> from the
// runtime binary npm ships for that target (@oven/bun-linux-*), fetched with `npm pack`, never elsewhere.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BUNDLE_FILE_PREFIX, buildWebBundle, encodeWebBundle } from '../src/web/app-bundle.ts';
import { sourceCommit } from '../src/services/administration/version.ts';
import { BUILD_TARGETS, type BuildTarget } from './targets.ts';

const ROOT = path.resolve(import.meta.dir, '..');
const DIST = path.join(ROOT, 'dist');
const RUNTIMES = path.join(ROOT, 'node_modules', '.cache', 'coffer-runtimes');

const { values } = parseArgs({ options: { target: { type: 'string', multiple: true } }, allowPositionals: false });
const targets = (values.target ?? []).flatMap((t) => t.split(','));
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

/** The runtime executable for a target, unpacked from its npm package at the version this checkout's Bun is. */
function runtimeFor(target: BuildTarget): string {
  const dir = path.join(RUNTIMES, `${target.npmPackage.replace('/', '+')}-${Bun.version}`);
  const exe = path.join(dir, 'package', 'bin', 'bun');
  if (fs.existsSync(exe)) return exe;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  console.log(`build: fetching ${target.npmPackage}@${Bun.version} from the npm registry`);
  const pack = Bun.spawnSync(['npm', 'pack', `${target.npmPackage}@${Bun.version}`, '--pack-destination', dir, '--silent'], {
    cwd: dir,
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const tarball = pack.stdout.toString().trim().split('\n').at(-1) ?? '';
  if (pack.exitCode !== 0 || !tarball) {
    console.error(`build: npm pack ${target.npmPackage}@${Bun.version} failed`);
    process.exit(1);
  }
  run(['tar', '-xzf', path.join(dir, tarball), '-C', dir]);
  fs.rmSync(path.join(dir, tarball));
  fs.chmodSync(exe, 0o755);
  return exe;
}

fs.mkdirSync(DIST, { recursive: true });
const bundle = await buildWebBundle({ minify: true });
const bundleFile = path.join(DIST, `${BUNDLE_FILE_PREFIX}.bundle`);
fs.writeFileSync(bundleFile, encodeWebBundle(bundle));

const common = [
  'build',
  '--compile',
  '--minify',
  '--sourcemap',
  '--bytecode',
  '--format=esm',
  // What `coffer --version` reports; SOURCE_DATE_EPOCH (reproducible builds) fixes the date.
  '--define',
  `COFFER_BUILD_COMMIT=${JSON.stringify(sourceCommit() ?? 'unknown')}`,
  '--define',
  `COFFER_BUILD_DATE=${JSON.stringify(new Date(process.env.SOURCE_DATE_EPOCH ? Number(process.env.SOURCE_DATE_EPOCH) * 1000 : Date.now()).toISOString().replace(/\.\d+Z$/, 'Z'))}`,
  'src/main.ts',
  path.relative(ROOT, bundleFile),
];
if (targets.length === 0) {
  run([process.execPath, ...common, '--outfile', 'dist/coffer']);
} else {
  for (const name of targets) {
    const target = BUILD_TARGETS[name as keyof typeof BUILD_TARGETS];
    const outfile = `dist/coffer-${name}`;
    run([
      process.execPath,
      ...common,
      `--target=${target.bunTarget}`,
      `--compile-executable-path=${runtimeFor(target)}`,
      '--outfile',
      outfile,
    ]);
    console.log(`build: ${outfile} (${(fs.statSync(path.join(ROOT, outfile)).size / 1024 ** 2).toFixed(1)} MiB)`);
  }
}
