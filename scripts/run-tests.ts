import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SKIP_LOG } from '../test/helpers/prerequisites.ts';

/**
 * `npm test`'s test step. `--reset` clears the skip log before the runs. Otherwise it runs the test files
 * (all of them, each S3 suite file a second time on COFFER_STORAGE=s3, or the files and folders named:
 * `npm test -- FILES`; `--s3` runs only the S3 suite) in COFFER_TEST_SHARDS concurrent shards balanced by
 * test/durations.json, prints each shard's output when it ends, then the totals, the failed tests and one
 * line listing every test skipped and why. `--update-durations` writes the measured durations back.
 */

const ROOT = path.join(import.meta.dir, '..');
const DURATIONS = path.join(ROOT, 'test', 'durations.json');
const DEFAULT_SHARDS = 2;
/** A file not yet in test/durations.json counts as long as the average listed file (this long when none is). */
const UNKNOWN_FILE_MS = 10_000;

/** The files `npm test` also runs with the S3 driver (against s3rver), as `npm run test:s3` does alone. */
const S3_SUITE = [
  'test/api/files/items.test.ts',
  'test/api/uploads/uploads.test.ts',
  'test/api/files/downloads.test.ts',
  'test/api/files/trash.test.ts',
  'test/api/sharing/shares.test.ts',
  'test/api/admin/orphans.test.ts',
  'test/api/dav/dav.test.ts',
  'test/api/uploads/tus.test.ts',
  'test/api/files/versions.test.ts',
  'test/api/thumbnails/thumbnails.test.ts',
  'test/api/thumbnails/videos.test.ts',
  'test/api/dav/nextcloud.test.ts',
  'test/api/dav/nextcloud-chunking.test.ts',
  'test/api/dav/nextcloud-versions.test.ts',
];

type Storage = 'local' | 's3';
interface Unit {
  file: string;
  storage: Storage;
  ms: number;
}
interface Shard {
  units: Unit[];
  ms: number;
}
interface Durations {
  version: 1;
  files: Record<string, number>;
}
interface RunResult {
  output: string;
  exitCode: number;
  seconds: number;
  /** CPU seconds of the process and every process it waited for (servers, Chromium, clients). */
  cpuSeconds: number;
  timings: Record<string, number>;
}

const key = (file: string, storage: Storage) => (storage === 's3' ? `s3:${file}` : file);

function readDurations(): Record<string, number> {
  if (!fs.existsSync(DURATIONS)) return {};
  return (JSON.parse(fs.readFileSync(DURATIONS, 'utf8')) as Durations).files;
}

const TEST_FILE = /(\.|_)(test|spec)\.(ts|tsx|js|jsx|mts|cts|mjs|cjs)$/;

function testFilesUnder(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => TEST_FILE.test(f) && !f.split(path.sep).includes('node_modules'))
    .map((f) => path.join(dir, f))
    .sort();
}

/** What to run: every test file (and the S3 suite again) by default, else the files and folders named, else (as `bun test` does) every test file whose path contains an argument. */
function selectUnits(args: string[], s3Only: boolean): Omit<Unit, 'ms'>[] {
  if (s3Only) return S3_SUITE.map((file) => ({ file, storage: 's3' }));
  const all = testFilesUnder('test');
  if (args.length === 0) {
    return [...all.map((file) => ({ file, storage: 'local' as const })), ...S3_SUITE.map((file) => ({ file, storage: 's3' as const }))];
  }
  const files = new Set<string>();
  for (const arg of args) {
    const relative = path.relative(ROOT, path.resolve(arg));
    const stat = fs.statSync(path.join(ROOT, relative), { throwIfNoEntry: false });
    if (stat?.isFile()) files.add(relative);
    else if (stat?.isDirectory()) for (const f of testFilesUnder(relative)) files.add(f);
    else for (const f of all.filter((f) => f.includes(arg))) files.add(f);
  }
  return [...files].map((file) => ({ file, storage: process.env.COFFER_STORAGE === 's3' ? 's3' : 'local' }));
}

/** Longest first, each onto the shard with the least work so far. */
function balance(units: Unit[], count: number): Shard[] {
  const shards: Shard[] = Array.from({ length: Math.min(count, units.length) }, () => ({ units: [], ms: 0 }));
  for (const unit of [...units].sort((a, b) => b.ms - a.ms)) {
    const lightest = shards.reduce((a, b) => (b.ms < a.ms ? b : a));
    lightest.units.push(unit);
    lightest.ms += unit.ms;
  }
  return shards;
}

/**
 * Whether a test file runs `coffer` commands through test/helpers/cli.ts, or the executable itself through
 * test/helpers/binary.ts (they run the executable the runner builds).
 */
const runsCommands = (file: string) => /helpers\/(cli|binary)\.ts/.test(fs.readFileSync(path.join(ROOT, file), 'utf8'));

interface ExecutableBuild {
  /** The executable's path once built, or the build's output when it failed. */
  ready: Promise<{ path: string } | { failure: string }>;
  dir: string;
  build: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
}

/**
 * Compiles the executable once, beside the shards, for the files that run `coffer` commands: a command from
 * source loads some 540 modules (about 0.6 s of CPU), the executable 0.2 s. `npm run build`'s own steps, into a
 * directory of the run's (COFFER_TEST_EXECUTABLE already set: that one is used, nothing is built).
 */
function startExecutableBuild(): ExecutableBuild {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-test-executable-'));
  // Tests run commands as other users too (setpriv): the directory is theirs to enter.
  fs.chmodSync(dir, 0o755);
  const outfile = path.join(dir, 'coffer');
  const build = Bun.spawn([process.execPath, path.join(ROOT, 'scripts', 'build.ts'), '--outfile', outfile], {
    cwd: ROOT,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const ready = collect(build).then(async (output) => ((await build.exited) === 0 ? { path: outfile } : { failure: output }));
  return { ready, dir, build };
}

/** What a group of files that run commands reports when the executable could not be built: it fails, and says why. */
function unbuilt(files: string[], output: string): RunResult {
  const lines = files.map((f) => `(fail) ${f}: the executable these tests run could not be built (scripts/build.ts)`);
  return { output: `${output}\n${lines.join('\n')}\n ${files.length} fail\n`, exitCode: 1, seconds: 0, cpuSeconds: 0, timings: {} };
}

/** Reads both pipes as they come, so the shard's output keeps its order when printed in one piece. */
async function collect(proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>): Promise<string> {
  const chunks: string[] = [];
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const text = new TextDecoder();
    for await (const chunk of stream) chunks.push(text.decode(chunk, { stream: true }));
  };
  await Promise.all([read(proc.stdout), read(proc.stderr)]);
  return chunks.join('');
}

async function runBunTest(
  files: string[],
  storage: Storage,
  flags: string[],
  env: Record<string, string>,
  timingsFile: string,
): Promise<RunResult> {
  fs.writeFileSync(timingsFile, JSON.stringify({ version: 1, files: {} }));
  const started = performance.now();
  const proc = Bun.spawn(
    [
      process.execPath,
      'test',
      '--timeout',
      '60000',
      `--timings=${timingsFile}`,
      '--update-timings',
      ...flags,
      ...files.map((f) => `./${f}`),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, ...(storage === 's3' ? { COFFER_STORAGE: 's3' } : {}), ...env, FORCE_COLOR: '0' },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  const output = await collect(proc);
  const exitCode = await proc.exited;
  const measured = fs.existsSync(timingsFile) ? (JSON.parse(fs.readFileSync(timingsFile, 'utf8')) as Durations).files : {};
  const timings: Record<string, number> = {};
  for (const [file, ms] of Object.entries(measured)) {
    const relative = path.relative(ROOT, path.resolve(ROOT, file));
    if (files.includes(relative)) timings[key(relative, storage)] = ms;
  }
  const cpuSeconds = Number(proc.resourceUsage()?.cpuTime.total ?? 0n) / 1e6;
  return { output, exitCode, seconds: (performance.now() - started) / 1000, cpuSeconds, timings };
}

interface Totals {
  pass: number;
  fail: number;
  skip: number;
  todo: number;
}

function countsOf(output: string): Totals {
  const count = (word: string) => {
    const m = output.match(new RegExp(`^\\s*(\\d+) ${word}$`, 'm'));
    return m ? Number(m[1]) : 0;
  };
  return { pass: count('pass'), fail: count('fail'), skip: count('skip'), todo: count('todo') };
}

const failedNames = (output: string) => [...output.matchAll(/^\(fail\) (.+?)(?: \[[\d.]+m?s\])?$/gm)].map((m) => m[1] as string);

if (process.argv[2] === '--reset') {
  fs.rmSync(SKIP_LOG, { force: true });
} else {
  const args = process.argv.slice(2);
  const updateDurations = args.includes('--update-durations');
  const s3Only = args.includes('--s3');
  const flags = args.filter((a) => a.startsWith('-') && a !== '--update-durations' && a !== '--s3');
  const durations = readDurations();
  const known = Object.values(durations);
  const unknownMs = known.length > 0 ? known.reduce((a, b) => a + b, 0) / known.length : UNKNOWN_FILE_MS;
  const units = selectUnits(
    args.filter((a) => !a.startsWith('-')),
    s3Only,
  ).map((u) => ({ ...u, ms: durations[key(u.file, u.storage)] ?? unknownMs }));
  const shardCount = Math.max(1, Number(process.env.COFFER_TEST_SHARDS) || DEFAULT_SHARDS);
  const shards = balance(units, shardCount);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-run-tests-'));
  const started = performance.now();
  console.log(
    `${units.length} test files in ${shards.length} shards (COFFER_TEST_SHARDS), expected ${shards.map((s) => Math.round(s.ms / 1000)).join(' / ')} s`,
  );

  const needsExecutable = process.env.COFFER_TEST_EXECUTABLE === undefined && units.some((u) => runsCommands(u.file));
  const executable = needsExecutable ? startExecutableBuild() : null;
  const results = await Promise.all(
    shards.map(async (shard, i) => {
      const runs: RunResult[] = [];
      // bun test runs its files in path order, which would start every shard's Chromium together at the end:
      // half the shards run their browser tests first, the other half last.
      const isBrowser = (u: Unit) => u.file.startsWith('test/ui/');
      const browser = { name: 'browser', storage: 'local' as const, pick: (u: Unit) => u.storage === 'local' && isBrowser(u) };
      // The files that run commands come after the rest, so the executable they run is built by then.
      const groups = [
        { name: 'local', storage: 'local' as const, pick: (u: Unit) => u.storage === 'local' && !isBrowser(u) && !runsCommands(u.file) },
        { name: 'commands', storage: 'local' as const, pick: (u: Unit) => u.storage === 'local' && !isBrowser(u) && runsCommands(u.file) },
        { name: 's3', storage: 's3' as const, pick: (u: Unit) => u.storage === 's3' },
      ];
      for (const group of i % 2 === 0 ? [browser, ...groups] : [...groups, browser]) {
        const files = shard.units.filter(group.pick).map((u) => u.file);
        if (files.length === 0) continue;
        const built = executable && files.some(runsCommands) ? await executable.ready : null;
        if (built && 'failure' in built) {
          runs.push(unbuilt(files, built.failure));
          continue;
        }
        const env: Record<string, string> = built ? { COFFER_TEST_EXECUTABLE: built.path } : {};
        runs.push(await runBunTest(files, group.storage, flags, env, path.join(tmp, `shard-${i}-${group.name}.json`)));
      }
      const failed = runs.some((r) => r.exitCode !== 0);
      console.log(
        `\n===== shard ${i + 1}/${shards.length}: ${shard.units.length} files, ${runs.map((r) => r.seconds.toFixed(0)).join(' + ')} s (expected ${(shard.ms / 1000).toFixed(0)} s), CPU ${runs.reduce((n, r) => n + r.cpuSeconds, 0).toFixed(0)} s${failed ? ', FAILED' : ''} =====`,
      );
      for (const run of runs) process.stdout.write(run.output);
      return runs;
    }),
  );
  fs.rmSync(tmp, { recursive: true, force: true });
  let buildCpuSeconds = 0;
  if (executable) {
    executable.build.kill();
    await executable.build.exited;
    buildCpuSeconds = Number(executable.build.resourceUsage()?.cpuTime.total ?? 0n) / 1e6;
    fs.rmSync(executable.dir, { recursive: true, force: true });
  }

  const runs = results.flat();
  const totals = runs.map((r) => countsOf(r.output));
  const sum = (k: keyof Totals) => totals.reduce((n, t) => n + t[k], 0);
  const failures = [...new Set(runs.flatMap((r) => failedNames(r.output)))];
  const crashed = runs.filter((r) => r.exitCode !== 0 && countsOf(r.output).fail === 0).length;
  console.log(
    `\nAll shards: ${sum('pass')} pass, ${sum('fail')} fail, ${sum('skip')} skip, ${sum('todo')} todo in ${((performance.now() - started) / 1000).toFixed(0)} s, CPU ${(runs.reduce((n, r) => n + r.cpuSeconds, 0) + buildCpuSeconds).toFixed(0)} s` +
      (executable ? ` (${buildCpuSeconds.toFixed(0)} s of it the executable's build)` : '') +
      (crashed > 0 ? `; ${crashed} bun test runs exited non-zero without a failing test (see their output)` : ''),
  );
  if (failures.length > 0) console.log(`Failed tests (${failures.length}):\n${failures.map((f) => `  ${f}`).join('\n')}`);

  if (updateDurations) {
    const files = { ...durations, ...Object.assign({}, ...runs.map((r) => r.timings)) };
    const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => a.localeCompare(b)));
    fs.writeFileSync(DURATIONS, `${JSON.stringify({ version: 1, files: sorted }, null, 2)}\n`);
    console.log(`Wrote ${path.relative(ROOT, DURATIONS)}.`);
  }

  const lines = fs.existsSync(SKIP_LOG) ? fs.readFileSync(SKIP_LOG, 'utf8').split('\n').filter(Boolean) : [];
  const skipped = [...new Set(lines)].map((l) => JSON.parse(l) as { test: string; reason: string });
  console.log(
    skipped.length === 0
      ? 'Skipped tests: none.'
      : `Skipped tests (${skipped.length}): ${skipped.map((s) => `${s.test} (${s.reason})`).join('; ')}.`,
  );
  const anySkip = skipped.length > 0 || sum('skip') > 0;
  process.exitCode = runs.some((r) => r.exitCode !== 0) ? 1 : anySkip && process.env.CI === 'true' ? 1 : 0;
}
