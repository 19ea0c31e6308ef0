import type { Command } from 'commander';
import { ConfigError, loadConfig, withConfigFile, type Config, type ConfigFlags, type Env } from '../src/config.ts';
import type { AppContext } from '../src/context.ts';
import { AppError, DATABASE_BUSY_TIMEOUT_MS, isDatabaseBusy, StartupError } from '../src/errors.ts';
import { createLogger } from '../src/log.ts';
import { localUrl } from '../src/lib/ip.ts';
import { StorageUnavailableError } from '../src/storage/driver.ts';
import { isDiskFullError } from '../src/services/files/disk-space.ts';

/**
 * Exit codes: 0 success, 1 a problem the user can fix (message on stderr), 2 a bug (stack on stderr),
 * 3 the command ran but found something that needs a person (doctor problems, skipped deletions, an
 * unfinished key rotation).
 */
const EXIT_USER_ERROR = 1;
const EXIT_BUG = 2;
const EXIT_ATTENTION = 3;

/** 128 + SIGPIPE, as a shell reports a command the signal ended: its output's reader stopped early. */
export const EXIT_PIPE_CLOSED = 141;

export const EXIT_CODES_HELP = `Exit codes: 0 success; 1 a problem you can fix (the message says what); 2 an unexpected error (a bug);
3 the command finished but found something that needs attention; 141 its output's reader stopped early (| head).`;

export function addDataDirOption(cmd: Command): Command {
  return cmd.option('-d, --data-dir <dir>', 'data directory (env COFFER_DATA_DIR, or from the configuration file; default ./data)');
}

/** `--data-dir` and `--json`, which every admin command takes. */
export function adminCommand(cmd: Command): Command {
  return addDataDirOption(cmd).option('--json', 'print machine-readable JSON on stdout').addHelpText('after', `\n${EXIT_CODES_HELP}`);
}

/** Flags, then the environment, then the configuration file (COFFER_CONFIG or /etc/coffer/coffer.env), then defaults. */
export function configFrom(flags: ConfigFlags, env: Env = withConfigFile(process.env)): Config {
  return loadConfig(flags, env);
}

/** Where people open the server, for links a command prints: COFFER_PUBLIC_URL, else the address and scheme it listens on. */
export function serverOrigin(config: Config): string {
  return config.publicUrl ?? localUrl(config.host, config.port, config.tls !== null);
}

/** Opens an existing data dir beside a possibly running server (no worker, no lock), runs fn, closes. */
export async function withContext<T>(
  flags: ConfigFlags,
  fn: (ctx: AppContext) => Promise<T> | T,
  opts: { skipLocationCheck?: boolean; env?: Env } = {},
): Promise<T> {
  const config = configFrom(flags, opts.env);
  const { openContext } = await import('../src/composition.ts');
  const ctx = openContext(config, { mode: 'cli', logger: createLogger('silent'), skipLocationCheck: opts.skipLocationCheck });
  try {
    return await fn(ctx);
  } finally {
    ctx.close();
  }
}

function isUserError(err: unknown): err is Error {
  return err instanceof StartupError || err instanceof ConfigError || err instanceof AppError || err instanceof UsageError;
}

/** A command-line mistake: printed as one line, exit 1. */
export class UsageError extends Error {}

/** The command ran and printed its result, but the result needs attention: exit 3. */
export class AttentionNeeded extends Error {}

function describe(err: Error): string {
  const details = err instanceof AppError ? (err.extra?.details as Array<{ field: string; message: string }> | undefined) : undefined;
  if (!details?.length) return err.message;
  return `${err.message}: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`;
}

/** Exits once what was written to stdout and stderr has been handed to the OS (a large --json report included). */
async function exitAfterFlush(code: number): Promise<never> {
  await Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((resolve) => s.write('', () => resolve()))));
  process.exit(code);
}

// The transaction that waited rolled back whole.
const DATABASE_BUSY = `the database is busy: another process (the server, a backup, another command) held its write lock for more than ${DATABASE_BUSY_TIMEOUT_MS / 1000} seconds; nothing of this step was written. Run the command again.`;

/** A file or folder the operating system would not let this user read or write, in words; null for any other error. */
function fileSystemRefusal(err: unknown): string | null {
  const e = err as NodeJS.ErrnoException | null;
  const where = typeof e?.path === 'string' ? `${e.path}${e.syscall ? ` (${e.syscall})` : ''}` : (e?.message ?? '');
  if (e?.code === 'EACCES' || e?.code === 'EPERM') {
    return `permission denied: ${where}: run as a user allowed to use it, change its owner or permissions, or choose another place`;
  }
  if (e?.code === 'EROFS') return `read-only file system: ${where}: choose a place on a writable disk`;
  return null;
}

/** Runs a command action, turning expected failures into one stderr line and a meaningful exit code. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void) {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof AttentionNeeded) {
        if (err.message) process.stderr.write(`coffer: ${err.message}\n`);
        await exitAfterFlush(EXIT_ATTENTION);
      }
      if (isUserError(err)) {
        process.stderr.write(`coffer: ${describe(err)}\n`);
        await exitAfterFlush(EXIT_USER_ERROR);
      }
      // The bucket failed, not the command: one line with its own reason, no stack.
      if (err instanceof StorageUnavailableError) {
        process.stderr.write(
          `coffer: the storage did not answer: ${err.message}. Check that it is up and reachable, then run the command again.\n`,
        );
        await exitAfterFlush(EXIT_USER_ERROR);
      }
      // The disk refused the write, not the command: one line with what to do, no stack.
      if (isDiskFullError(err)) {
        process.stderr.write(
          `coffer: the disk is full (${err instanceof Error ? err.message : String(err)}): free some space, or write to another disk, then run the command again\n`,
        );
        await exitAfterFlush(EXIT_USER_ERROR);
      }
      // The file system refused (permissions, a read-only mount): one line naming the path, no stack.
      const refused = fileSystemRefusal(err);
      if (refused) {
        process.stderr.write(`coffer: ${refused}\n`);
        await exitAfterFlush(EXIT_USER_ERROR);
      }
      if (isDatabaseBusy(err)) {
        process.stderr.write(`coffer: ${DATABASE_BUSY}\n`);
        await exitAfterFlush(EXIT_USER_ERROR);
      }
      process.stderr.write(`coffer: unexpected error\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      await exitAfterFlush(EXIT_BUG);
    }
  };
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function print(line = ''): void {
  process.stdout.write(line + '\n');
}

/** Left-aligned columns with a header row. */
export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** A whole number option within bounds, else a UsageError naming the option. */
export function intOption(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim())) throw new UsageError(`${name} must be a whole number, got "${text}"`);
  const n = Number(text);
  if (n < min || n > max) throw new UsageError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A progress line on stderr, redrawn in place; silent when stderr is not a terminal. */
export function progressBar(enabled = Boolean(process.stderr.isTTY)) {
  let last = 0;
  let drawn = false;
  return {
    update(label: string, done: number, total: number | null): void {
      if (!enabled) return;
      const now = performance.now();
      if (now - last < 100 && (total === null || done < total)) return;
      last = now;
      drawn = true;
      let line = `${label} ${done.toLocaleString('en-US')}`;
      if (total !== null && total > 0) {
        const ratio = Math.min(1, done / total);
        const width = 30;
        const filled = Math.round(ratio * width);
        line = `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.floor(ratio * 100)}% ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`;
      }
      process.stderr.write(`\r\x1b[2K${line}`);
    },
    done(): void {
      if (drawn) process.stderr.write('\r\x1b[2K');
      drawn = false;
    },
  };
}

async function readHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          cleanup();
          process.stderr.write('\n');
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          cleanup();
          process.stderr.write('\n');
          reject(new UsageError('cancelled'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    const cleanup = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
    };
    stdin.on('data', onData);
  });
}

async function readStdinLine(): Promise<string> {
  const text = await new Response(Bun.stdin.stream()).text();
  return text.split(/\r?\n/)[0] ?? '';
}

/**
 * A secret (a password): typed twice without echo on a terminal, else the first line of stdin, so
 * it never appears in the process list or shell history.
 */
export async function readSecret(prompt: string, opts: { confirm?: boolean } = {}): Promise<string> {
  if (!process.stdin.isTTY) return readStdinLine();
  const first = await readHidden(`${prompt}: `);
  if (opts.confirm) {
    const second = await readHidden(`${prompt} (again): `);
    if (first !== second) throw new UsageError('the two entries differ');
  }
  return first;
}

/** One line typed on a terminal; without one, a UsageError saying which option to pass instead. */
export async function readLine(prompt: string, option = '--confirm'): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError(`no terminal to ask on: pass ${option}`);
  process.stderr.write(prompt);
  return new Promise<string>((resolve) => {
    process.stdin.resume();
    process.stdin.once('data', (d) => {
      process.stdin.pause();
      resolve(d.toString('utf8').trim());
    });
  });
}

/** Yes/no on a terminal; without one, the caller must have passed --yes. */
export async function confirm(question: string, yes: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY) throw new UsageError('refusing to delete without confirmation: pass --yes');
  const answer = await readLine(`${question} [y/N] `, '--yes');
  if (!/^y(es)?$/i.test(answer)) throw new UsageError('cancelled');
}

/**
 * Ctrl-C or SIGTERM during long work (an archive, a restore, an export): the work stops at its next chunk and
 * removes what it had half written instead of leaving it behind; `what` says what was left, in the one line printed.
 */
export function untilInterrupted(what: string): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const stop = (name: NodeJS.Signals) => controller.abort(new UsageError(`interrupted (${name}): ${what}`));
  // once: a second Ctrl-C ends the process at once.
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}
